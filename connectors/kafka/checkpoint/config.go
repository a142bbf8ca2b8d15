package checkpoint

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/connectd/connectd/connectors/kafka/replpolicy"
	"github.com/connectd/connectd/framework/configdef"
)

// Class is the connector.class of KafkaCheckpointSource.
const Class = "KafkaCheckpointSource"

// Version is the connector's version.
const Version = "0.1.0"

// Configuration keys (MirrorMaker 2's names where MM2 has them).
const (
	KeySourceBootstrap     = "source.bootstrap.servers"
	KeyTargetBootstrap     = "target.bootstrap.servers"
	KeySourceAlias         = "source.cluster.alias"
	KeyTargetAlias         = "target.cluster.alias"
	KeyPolicyClass         = "replication.policy.class"
	KeyPolicySeparator     = "replication.policy.separator"
	KeyGroups              = "groups"
	KeyGroupsExclude       = "groups.exclude"
	KeyEmitInterval        = "emit.checkpoints.interval.seconds"
	KeyRefreshGroups       = "refresh.groups.interval.seconds"
	KeySyncGroupOffsets    = "sync.group.offsets.enabled"
	KeySyncGroupInterval   = "sync.group.offsets.interval.seconds"
	KeyCheckpointsRF       = "checkpoints.topic.replication.factor"
	KeyOffsetSyncsLocation = "offset-syncs.topic.location"
	KeyUnreachableTimeout  = "source.unreachable.timeout.ms"
	PrefixSourceAdmin      = "source.admin."
	PrefixTargetAdmin      = "target.admin."

	// DefaultGroupsExclude is MM2's groups.exclude default.
	DefaultGroupsExclude = "console-consumer-.*, connect-.*, __.*"
)

func configDef() *configdef.Def {
	const (
		gClusters = "Clusters"
		gGroups   = "Groups"
	)
	seconds := func(name string, def int64, order int, display, doc string) configdef.Key {
		return configdef.Key{Name: name, Type: configdef.Long, Default: def, Importance: configdef.Medium,
			Validator: configdef.AtLeast(int64(1)), Group: gGroups, OrderInGroup: order, DisplayName: display, Documentation: doc}
	}
	return configdef.New().
		Define(configdef.Key{
			Name: KeySourceBootstrap, Type: configdef.String, Required: true, Importance: configdef.High,
			Validator: configdef.NonEmptyString(), Group: gClusters, OrderInGroup: 1, Width: configdef.WidthLong,
			DisplayName:   "Source bootstrap servers",
			Documentation: "The cluster whose consumer groups are checkpointed. Admin client settings go in source.admin.*.",
		}).
		Define(configdef.Key{
			Name: KeyTargetBootstrap, Type: configdef.String, Required: true, Importance: configdef.High,
			Validator: configdef.NonEmptyString(), Group: gClusters, OrderInGroup: 2, Width: configdef.WidthLong,
			DisplayName: "Target bootstrap servers",
			Documentation: "The cluster the replicas, offset syncs and checkpoints live on (the worker's cluster). " +
				"Admin and consumer settings go in target.admin.*.",
		}).
		Define(configdef.Key{
			Name: KeySourceAlias, Type: configdef.String, Required: true, Importance: configdef.High,
			Validator: configdef.NonEmptyString(), Group: gClusters, OrderInGroup: 3, DisplayName: "Source cluster alias",
			Documentation: "The source cluster's alias: it names the checkpoints topic (<alias>.checkpoints.internal), " +
				"the offset-syncs topic (mm2-offset-syncs.<alias>.internal) and the remote topics. It must equal the " +
				"source.cluster.alias of the KafkaReplicationSource that replicates the topics.",
		}).
		Define(configdef.Key{
			Name: KeyTargetAlias, Type: configdef.String, Default: "target", Importance: configdef.Low,
			Group: gClusters, OrderInGroup: 4, DisplayName: "Target cluster alias",
			Documentation: "The target cluster's alias: topics that came from it are never checkpointed back (cycle detection).",
		}).
		Define(configdef.Key{
			Name: KeyPolicyClass, Type: configdef.String, Default: replpolicy.DefaultClass, Importance: configdef.Medium,
			Group: gClusters, OrderInGroup: 5, DisplayName: "Replication policy",
			Documentation: "MM2's DefaultReplicationPolicy (remote topics named <alias><separator><topic>) or " +
				"IdentityReplicationPolicy (names kept). Must match the replication connector's.",
		}).
		Define(configdef.Key{
			Name: KeyPolicySeparator, Type: configdef.String, Default: replpolicy.DefaultSeparator, Importance: configdef.Low,
			Validator: configdef.NonEmptyString(), Group: gClusters, OrderInGroup: 6, DisplayName: "Replication policy separator",
			Documentation: "Separator between alias and topic in remote topic names.",
		}).
		Define(configdef.Key{
			Name: KeyOffsetSyncsLocation, Type: configdef.String, Default: "target", Importance: configdef.Low,
			Validator: configdef.Func("target", func(key string, v any) error {
				if s, _ := v.(string); s != "target" {
					return configdef.Invalid(key, v, "only target is supported: connectd writes offset syncs in the replication task's transaction on the target")
				}
				return nil
			}),
			Group: gClusters, OrderInGroup: 7, DisplayName: "Offset-syncs topic location",
			Documentation: "Where the offset-syncs topic is read: target only (see KafkaReplicationSource).",
		}).
		Define(configdef.Key{
			Name: KeyUnreachableTimeout, Type: configdef.Long, Default: int64(60000), Importance: configdef.Low,
			Validator: configdef.AtLeast(int64(0)), Group: gClusters, OrderInGroup: 8, DisplayName: "Source unreachable timeout (ms)",
			Documentation: "How long the task keeps retrying while the source cluster does not answer before it fails " +
				"with a trace (the framework restarts it with backoff). 0 retries forever.",
		}).
		Define(configdef.Key{
			Name: KeyCheckpointsRF, Type: configdef.Short, Default: int16(-1), Importance: configdef.Low,
			Group: gClusters, OrderInGroup: 9, DisplayName: "Checkpoints topic replication factor",
			Documentation: "Replication factor of the checkpoints topic when the connector creates it; -1 uses the broker default.",
		}).
		Define(configdef.Key{
			Name: KeyGroups, Type: configdef.List, Default: ".*", Importance: configdef.High,
			Group: gGroups, OrderInGroup: 1, DisplayName: "Groups",
			Documentation: "Regular expressions (RE2, whole name) of the consumer groups to checkpoint.",
		}).
		Define(configdef.Key{
			Name: KeyGroupsExclude, Type: configdef.List, Default: DefaultGroupsExclude, Importance: configdef.Medium,
			Group: gGroups, OrderInGroup: 2, DisplayName: "Excluded groups",
			Documentation: "Regular expressions of groups never to checkpoint, applied after groups.",
		}).
		Define(seconds(KeyEmitInterval, 60, 3, "Checkpoint interval (s)", "How often checkpoints are emitted.")).
		Define(seconds(KeyRefreshGroups, 600, 4, "Group refresh interval (s)", "How often the source's consumer groups are listed.")).
		Define(configdef.Key{
			Name: KeySyncGroupOffsets, Type: configdef.Boolean, Default: false, Importance: configdef.Medium,
			Group: gGroups, OrderInGroup: 5, DisplayName: "Sync group offsets",
			Documentation: "Commit translated offsets to the same group on the target while that group has no members " +
				"there; a target offset is never moved backwards.",
		}).
		Define(seconds(KeySyncGroupInterval, 60, 6, "Group offset sync interval (s)", "How often group offsets are synced to the target."))
}

// Config is a parsed KafkaCheckpointSource configuration.
type Config struct {
	SourceBootstrap, TargetBootstrap string
	SourceAdmin, TargetAdmin         map[string]string
	SourceAlias, TargetAlias         string
	Policy                           replpolicy.Policy
	Groups, GroupsExclude            []*regexp.Regexp
	EmitInterval, RefreshGroups      time.Duration
	SyncGroups                       bool
	SyncInterval                     time.Duration
	CheckpointsRF                    int16
	UnreachableTimeout               time.Duration
}

// ParseConfig parses connector or task properties.
func ParseConfig(props map[string]string) (*Config, error) {
	v, err := configDef().Parse(props)
	if err != nil {
		return nil, err
	}
	c := &Config{
		SourceBootstrap:    v.String(KeySourceBootstrap),
		TargetBootstrap:    v.String(KeyTargetBootstrap),
		SourceAdmin:        withPrefix(props, PrefixSourceAdmin),
		TargetAdmin:        withPrefix(props, PrefixTargetAdmin),
		SourceAlias:        v.String(KeySourceAlias),
		TargetAlias:        v.String(KeyTargetAlias),
		EmitInterval:       time.Duration(v.Long(KeyEmitInterval)) * time.Second,
		RefreshGroups:      time.Duration(v.Long(KeyRefreshGroups)) * time.Second,
		SyncGroups:         v.Bool(KeySyncGroupOffsets),
		SyncInterval:       time.Duration(v.Long(KeySyncGroupInterval)) * time.Second,
		CheckpointsRF:      v.Short(KeyCheckpointsRF),
		UnreachableTimeout: time.Duration(v.Long(KeyUnreachableTimeout)) * time.Millisecond,
	}
	if c.Policy, err = replpolicy.New(v.String(KeyPolicyClass), v.String(KeyPolicySeparator), c.SourceAlias); err != nil {
		return nil, fmt.Errorf("%s: %w", KeyPolicyClass, err)
	}
	if c.Groups, err = regexps(KeyGroups, v.List(KeyGroups)); err != nil {
		return nil, err
	}
	if c.GroupsExclude, err = regexps(KeyGroupsExclude, v.List(KeyGroupsExclude)); err != nil {
		return nil, err
	}
	return c, nil
}

// CheckpointsTopic is where this connector's checkpoints go.
func (c *Config) CheckpointsTopic() string { return c.Policy.CheckpointsTopic(c.SourceAlias) }

// OffsetSyncsTopic is where KafkaReplicationSource writes its syncs.
func (c *Config) OffsetSyncsTopic() string { return c.Policy.OffsetSyncsTopic(c.SourceAlias) }

// Selected reports whether a group is checkpointed.
func (c *Config) Selected(group string) bool {
	return matchAny(c.Groups, group) && !matchAny(c.GroupsExclude, group)
}

func matchAny(res []*regexp.Regexp, s string) bool {
	for _, re := range res {
		if re.MatchString(s) {
			return true
		}
	}
	return false
}

func regexps(key string, list []string) ([]*regexp.Regexp, error) {
	var out []*regexp.Regexp
	for _, s := range list {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		re, err := regexp.Compile(`^(?:` + s + `)$`)
		if err != nil {
			return nil, fmt.Errorf("%s: %q is not a regular expression: %w", key, s, err)
		}
		out = append(out, re)
	}
	return out, nil
}

func withPrefix(props map[string]string, prefix string) map[string]string {
	out := map[string]string{}
	for k, v := range props {
		if rest, ok := strings.CutPrefix(k, prefix); ok {
			out[rest] = v
		}
	}
	return out
}
