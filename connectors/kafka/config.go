package kafka

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/connectd/connectd/connectors/kafka/replpolicy"
	"github.com/connectd/connectd/framework/configdef"
	"github.com/connectd/connectd/framework/sdk"
)

// Configuration keys of KafkaReplicationSource.
const (
	KeySourceBootstrap      = "source.bootstrap.servers"
	KeySourceClusterAlias   = "source.cluster.alias"
	KeyTopics               = "topics"
	KeyTopicsRegex          = "topics.regex"
	KeyTopicsExclude        = "topics.exclude"
	KeyRefreshInterval      = "topic.refresh.interval.ms"
	KeyTargetBootstrap      = "target.bootstrap.servers"
	KeyTargetFormat         = "target.topic.format"
	KeyTargetReplication    = "target.topic.replication.factor"
	KeyPartitionMapping     = "partition.mapping"
	KeyProvenanceHeaders    = "provenance.headers"
	KeyPollMaxRecords       = "poll.max.records"
	KeyPollMaxBytes         = "poll.max.bytes"
	KeyPollTimeout          = "poll.timeout.ms"
	KeyUnreachableTimeout   = "source.unreachable.timeout.ms"
	KeyPolicyClass          = "replication.policy.class"
	KeyPolicySeparator      = "replication.policy.separator"
	KeyTargetClusterAlias   = "target.cluster.alias"
	KeySyncTopicConfigs     = "sync.topic.configs.enabled"
	KeyConfigExclude        = "config.properties.exclude"
	KeyRefreshSeconds       = "refresh.topics.interval.seconds"
	PrefixSourceConsumer    = "source.consumer."
	PrefixSourceAdmin       = "source.admin."
	PrefixTargetAdmin       = "target.admin."
	PrefixTargetTopicConfig = "target.topic.config."
)

// Keys the connector adds to each task configuration. They are not user
// configuration: TaskConfigs computes them.
const (
	taskKeyPartitions       = "task.partitions"        // "topic:partition,..." this task owns
	taskKeySourceCluster    = "task.source.cluster"    // cluster name used in source partitions
	taskKeyTargetPartitions = "task.target.partitions" // "target-topic:count,..." (key-hash only)
)

// Partition mappings.
const (
	MappingPreserve = "preserve"
	MappingKeyHash  = "key-hash"
)

// Provenance header names (added when provenance.headers=true). Values are
// UTF-8 text; partition and offset are decimal.
const (
	HeaderSourceCluster   = "connectd.source.cluster"
	HeaderSourceTopic     = "connectd.source.topic"
	HeaderSourcePartition = "connectd.source.partition"
	HeaderSourceOffset    = "connectd.source.offset"
)

const topicPlaceholder = "${topic}"

// MirrorMaker 2's defaults (connect-mirror 4.1.1: DefaultTopicFilter's
// topics.exclude and DefaultConfigPropertyFilter's
// config.properties.exclude), as lists of whole-name regexes.
const (
	// DefaultPolicyTopicsExclude is topics.exclude's default when
	// replication.policy.class is set.
	DefaultPolicyTopicsExclude = `mm2.*\.internal, .*\.replica, __.*`
	// DefaultConfigExclude is config.properties.exclude's default.
	DefaultConfigExclude = `follower\.replication\.throttled\.replicas, leader\.replication\.throttled\.replicas, ` +
		`message\.timestamp\.difference\.max\.ms, message\.timestamp\.type, unclean\.leader\.election\.enable, min\.insync\.replicas`
	// DefaultTargetClusterAlias is target.cluster.alias's default.
	DefaultTargetClusterAlias = "target"
)

// configDef returns the connector's own keys. The framework adds the common
// ones (name, tasks.max, converters, transforms, errors.*, transaction.*).
func configDef() *configdef.Def {
	const (
		gSource = "Source cluster"
		gTopics = "Topics"
		gTarget = "Target cluster"
		gTune   = "Tuning"
	)
	return defineOffsetSyncKeys(configdef.New().
		Define(configdef.Key{
			Name: KeySourceBootstrap, Type: configdef.String, Required: true, Importance: configdef.High,
			Validator: configdef.NonEmptyString(), Group: gSource, OrderInGroup: 1, Width: configdef.WidthLong,
			DisplayName: "Source bootstrap servers",
			Documentation: "Comma-separated host:port list of the source cluster. Client settings for it " +
				"(security.protocol, sasl.*, ssl.*, fetch tuning) go in source.consumer.* (librdkafka names); " +
				"security.*, sasl.* and ssl.* also apply to the connector's source admin client, and " +
				"source.admin.* adds admin-only settings.",
		}).
		Define(configdef.Key{
			Name: KeyUnreachableTimeout, Type: configdef.Long, Default: int64(60000), Importance: configdef.Medium,
			Validator: configdef.AtLeast(int64(0)), Group: gSource, OrderInGroup: 3,
			DisplayName: "Source unreachable timeout (ms)",
			Documentation: "How long a task keeps waiting (returning empty polls, logging warnings) while no broker " +
				"of the source cluster answers, before it fails with a trace; the framework then restarts it with " +
				"backoff. 0 waits forever.",
		}).
		Define(configdef.Key{
			Name: KeySourceClusterAlias, Type: configdef.String, Default: "", Importance: configdef.Medium,
			Group: gSource, OrderInGroup: 2, DisplayName: "Source cluster name",
			Documentation: "Name of the source cluster in the source partitions ({cluster, topic, partition}) " +
				"under which offsets are stored. Empty (the default) uses the source cluster's ID, so that " +
				"pointing the connector at a different cluster never resumes from the old cluster's offsets. " +
				"Changing it restarts replication from the beginning. With replication.policy.class it is also the cluster's " +
				"name in target topic names (a.orders) and required.",
		}).
		Define(configdef.Key{
			Name: KeyTopics, Type: configdef.List, Default: "", Importance: configdef.High,
			Group: gTopics, OrderInGroup: 1, DisplayName: "Topics",
			Documentation: "Source topics to replicate. Exactly one of topics and topics.regex must be set. " +
				"A listed topic that does not exist fails the connector with a retriable error until it appears.",
		}).
		Define(configdef.Key{
			Name: KeyTopicsRegex, Type: configdef.String, Default: "", Importance: configdef.High,
			Validator: configdef.Regex(), Group: gTopics, OrderInGroup: 2, DisplayName: "Topics regex",
			Documentation: "Regular expression (RE2 syntax, matched against the whole name) selecting the " +
				"source topics. New matching topics and added partitions are picked up without a restart. " +
				"Internal topics (names starting with __) never match.",
		}).
		Define(configdef.Key{
			Name: KeyTopicsExclude, Type: configdef.String, Default: "", Importance: configdef.Low,
			Validator: configdef.Regex(), Group: gTopics, OrderInGroup: 3, DisplayName: "Excluded topics regex",
			Documentation: "Regular expression (whole name) of source topics never to replicate, applied " +
				"after topics or topics.regex. Unset with replication.policy.class set, it is MirrorMaker 2's " +
				"default, topics matching any of " + DefaultPolicyTopicsExclude + "; set it (even to a regex " +
				"matching nothing, such as ^$) to replace that default.",
		}).
		Define(configdef.Key{
			Name: KeyRefreshInterval, Type: configdef.Long, Default: int64(30000), Importance: configdef.Low,
			Validator: configdef.AtLeast(int64(100)), Group: gTopics, OrderInGroup: 4,
			DisplayName: "Topic refresh interval (ms)",
			Documentation: "How often the connector lists the source topics to find new topics and added " +
				"partitions, and checks (and, with sync.topic.configs.enabled, syncs) the target topics.",
		}).
		Define(configdef.Key{
			Name: KeyRefreshSeconds, Type: configdef.Long, Default: nil, Importance: configdef.Low,
			Validator: configdef.Func("at least 1", func(key string, v any) error {
				if n, ok := v.(int64); ok && n < 1 {
					return configdef.Invalid(key, v, "must be at least 1")
				}
				return nil
			}),
			Group: gTopics, OrderInGroup: 5, DisplayName: "Topic refresh interval (s)",
			Documentation: "MirrorMaker 2's name for topic.refresh.interval.ms, in seconds (MM2's default is 600; " +
				"connectd's, through topic.refresh.interval.ms, 30). Set at most one of the two.",
		}).
		Define(configdef.Key{
			Name: KeyPolicyClass, Type: configdef.String, Default: "", Importance: configdef.High,
			Validator: configdef.Func("empty, "+replpolicy.DefaultClass+" or "+replpolicy.IdentityClass+" (or their simple names)",
				func(key string, v any) error {
					if s, _ := v.(string); s != "" {
						if _, err := replpolicy.New(s, replpolicy.DefaultSeparator, "x"); err != nil {
							return configdef.Invalid(key, v, err.Error())
						}
					}
					return nil
				}),
			Group: gTarget, OrderInGroup: 6, DisplayName: "Replication policy",
			Documentation: "MirrorMaker 2's replication policy naming target topics. Empty (the default) uses " +
				"target.topic.format. DefaultReplicationPolicy names the copy of topic t <source.cluster.alias><separator>t " +
				"(e.g. a.orders); IdentityReplicationPolicy keeps the name. With a policy set, source.cluster.alias is " +
				"required, topics that came from the target cluster (per target.cluster.alias) are never replicated back " +
				"(cycle detection for active/active pairs), MM2's internal topics never are, and topics.exclude defaults " +
				"to MM2's. Setting both this and target.topic.format is an error.",
		}).
		Define(configdef.Key{
			Name: KeyPolicySeparator, Type: configdef.String, Default: replpolicy.DefaultSeparator, Importance: configdef.Low,
			Validator: configdef.NonEmptyString(), Group: gTarget, OrderInGroup: 7, DisplayName: "Replication policy separator",
			Documentation: "Separator between the cluster alias and the topic name in remote topic names " +
				"(replication.policy.separator of MirrorMaker 2).",
		}).
		Define(configdef.Key{
			Name: KeyTargetClusterAlias, Type: configdef.String, Default: DefaultTargetClusterAlias, Importance: configdef.Medium,
			Validator: configdef.NonEmptyString(), Group: gTarget, OrderInGroup: 8, DisplayName: "Target cluster alias",
			Documentation: "Name of the target cluster in the replication policy: a source topic that came from this " +
				"cluster (e.g. target.orders under DefaultReplicationPolicy) is not replicated back to it. Must differ " +
				"from source.cluster.alias.",
		}).
		Define(configdef.Key{
			Name: KeySyncTopicConfigs, Type: configdef.Boolean, Default: true, Importance: configdef.Medium,
			Group: gTarget, OrderInGroup: 9, DisplayName: "Sync topic configs",
			Documentation: "Copy the topic configs set explicitly on each source topic (not broker or cluster " +
				"defaults) to its target topic: at creation, and on every topic refresh to targets whose values " +
				"differ. Keys matching config.properties.exclude and keys set by target.topic.config.* are never " +
				"copied; configs set only on the target are left alone.",
		}).
		Define(configdef.Key{
			Name: KeyConfigExclude, Type: configdef.List, Default: DefaultConfigExclude, Importance: configdef.Low,
			Validator: configdef.Func("a list of valid regexes", func(key string, v any) error {
				l, _ := v.([]string)
				for _, re := range l {
					if _, err := regexp.Compile(re); err != nil {
						return configdef.Invalid(key, v, fmt.Sprintf("%q is not a valid regex: %v", re, err))
					}
				}
				return nil
			}),
			Group: gTarget, OrderInGroup: 10, DisplayName: "Topic configs not synced",
			Documentation: "Regular expressions (whole name) of topic configs that sync.topic.configs.enabled never " +
				"copies; the default is MirrorMaker 2's.",
		}).
		Define(configdef.Key{
			Name: KeyTargetBootstrap, Type: configdef.String, Required: true, Importance: configdef.High,
			Validator: configdef.NonEmptyString(), Group: gTarget, OrderInGroup: 1, Width: configdef.WidthLong,
			DisplayName: "Target bootstrap servers",
			Documentation: "Bootstrap servers of the cluster the worker writes to. The connector uses them " +
				"only for its admin client: to create and check target topics and to refuse replicating a " +
				"topic onto itself. Admin client settings go in target.admin.*.",
		}).
		Define(configdef.Key{
			Name: KeyTargetFormat, Type: configdef.String, Default: topicPlaceholder, Importance: configdef.High,
			Validator: configdef.Func("a topic name containing ${topic}", validateFormat),
			Group:     gTarget, OrderInGroup: 2, DisplayName: "Target topic name format",
			Documentation: "Target topic name; ${topic} is replaced by the source topic name, e.g. " +
				"${topic}.replica or backup.${topic}. When source and target are the same cluster, the " +
				"identity format ${topic} is refused (it would copy a topic onto itself), topics.regex never " +
				"selects topics named like targets (e.g. *.replica), and a topics list may not name the target " +
				"of another listed topic.",
		}).
		Define(configdef.Key{
			Name: KeyPartitionMapping, Type: configdef.String, Default: MappingPreserve, Importance: configdef.High,
			Validator: configdef.OneOf(MappingPreserve, MappingKeyHash), Group: gTarget, OrderInGroup: 3,
			DisplayName: "Partition mapping",
			Documentation: "preserve: a record goes to the target partition with its source partition's " +
				"number; target topics are created with the source's partition count, and a pre-existing " +
				"target with fewer partitions fails the connector. key-hash: the target partition is " +
				"murmur2(key) modulo the target's partition count (Kafka's default partitioner), records " +
				"with a null key keep their source partition number modulo that count.",
		}).
		Define(configdef.Key{
			Name: KeyTargetReplication, Type: configdef.Short, Default: int16(-1), Importance: configdef.Medium,
			Validator: configdef.Func("-1 (broker default) or at least 1", func(key string, v any) error {
				if n, _ := v.(int16); n == 0 || n < -1 {
					return configdef.Invalid(key, v, "must be -1 (broker default) or at least 1")
				}
				return nil
			}),
			Group: gTarget, OrderInGroup: 4, DisplayName: "Target topic replication factor",
			Documentation: "Replication factor of target topics the connector creates; -1 uses the broker's " +
				"default.replication.factor. Topic-level configs for created topics go in target.topic.config.*.",
		}).
		Define(configdef.Key{
			Name: KeyProvenanceHeaders, Type: configdef.Boolean, Default: false, Importance: configdef.Medium,
			Group: gTarget, OrderInGroup: 5, DisplayName: "Provenance headers",
			Documentation: "Append headers connectd.source.cluster, connectd.source.topic, " +
				"connectd.source.partition and connectd.source.offset (UTF-8 text) to every copied record, " +
				"after the record's own headers.",
		}).
		Define(configdef.Key{
			Name: KeyPollMaxRecords, Type: configdef.Int, Default: int32(2000), Importance: configdef.Low,
			Validator: configdef.AtLeast(int32(1)), Group: gTune, OrderInGroup: 1, DisplayName: "Max records per poll",
			Documentation: "Most records one poll returns. With transaction.boundary=poll every poll is one " +
				"transaction, so larger polls mean fewer, cheaper commits.",
		}).
		Define(configdef.Key{
			Name: KeyPollMaxBytes, Type: configdef.Int, Default: int32(1 << 20), Importance: configdef.Low,
			Validator: configdef.AtLeast(int32(1)), Group: gTune, OrderInGroup: 2, DisplayName: "Max bytes per poll",
			Documentation: "Most key+value+header bytes one poll returns (the record that crosses the limit is included). " +
				"The worker holds a few polls per task in flight, so this bounds the memory a task needs on both " +
				"sides of the plugin boundary; with transaction.boundary=poll it is also the transaction size. " +
				"Unset, it is 1048576 with the poll boundary (the default) and 524288 with the interval and " +
				"connector boundaries, which also halve the consumer's default prefetch " +
				"(source.consumer.queued.max.messages.kbytes 4096 → 2048).",
		}).
		Define(configdef.Key{
			Name: KeyPollTimeout, Type: configdef.Int, Default: int32(1000), Importance: configdef.Low,
			Validator: configdef.Between(int32(1), int32(10000)), Group: gTune, OrderInGroup: 3,
			DisplayName: "Poll timeout (ms)",
			Documentation: "How long a poll waits for the first record before returning an empty batch. " +
				"Once a record arrived, the poll drains what the consumer has buffered without waiting.",
		}))
}

// Config is a parsed KafkaReplicationSource configuration.
type Config struct {
	SourceBootstrap string
	// SourceClusterAlias is empty when the source cluster ID names the cluster.
	SourceClusterAlias string
	// SourceConsumer holds source.consumer.* with the prefix removed.
	SourceConsumer map[string]string
	// SourceAdmin is the source admin client's configuration without
	// bootstrap.servers: the security settings of SourceConsumer overlaid
	// with source.admin.*.
	SourceAdmin map[string]string

	Topics        []string       // explicit list, or nil when TopicsRegex is set
	TopicsRegex   *regexp.Regexp // anchored; nil when Topics is set
	TopicsExclude *regexp.Regexp // anchored; nil when unset
	Refresh       time.Duration

	TargetBootstrap string
	TargetAdmin     map[string]string // target.admin.* without the prefix
	TargetFormat    TopicFormat
	// Policy names target topics when replication.policy.class is set
	// (then TargetFormat is unused); nil otherwise.
	Policy replpolicy.Policy
	// TargetClusterAlias is the target's name for the policy's cycle
	// detection.
	TargetClusterAlias string
	// SyncTopicConfigs copies explicit source topic configs to targets,
	// except those matching ConfigExclude.
	SyncTopicConfigs  bool
	ConfigExclude     []*regexp.Regexp // anchored
	TargetReplication int16
	TargetTopicConfig map[string]string // target.topic.config.* without the prefix
	Mapping           string
	Provenance        bool

	PollMaxRecords int
	PollMaxBytes   int
	PollTimeout    time.Duration
	// PollIsTransaction is true when every poll is one transaction
	// (transaction.boundary=poll, the framework's default). It picks the
	// defaults of poll.max.bytes and of the consumer's prefetch.
	PollIsTransaction bool
	// UnreachableTimeout is how long a task tolerates an unreachable source
	// cluster before failing; 0 means forever.
	UnreachableTimeout time.Duration
	// StartAtEnd is true when source.consumer.auto.offset.reset asks for
	// latest: partitions without a committed offset then start at their end.
	StartAtEnd bool
}

// TargetTopic names the target topic of source topic t: by the
// replication policy when one is set, else by target.topic.format.
func (c *Config) TargetTopic(t string) string {
	if c.Policy != nil {
		return c.Policy.RemoteTopic(c.SourceClusterAlias, t)
	}
	return c.TargetFormat.Target(t)
}

// identityNames reports whether every topic keeps its name on the target.
func (c *Config) identityNames() bool {
	if c.Policy != nil {
		return c.Policy.Class() == replpolicy.IdentityClass
	}
	return c.TargetFormat.Identity()
}

// namingDescription says how target topics are named, for logs and errors.
func (c *Config) namingDescription() string {
	if c.Policy != nil {
		return KeyPolicyClass + "=" + c.Policy.Class()
	}
	return KeyTargetFormat + "=" + c.TargetFormat.String()
}

// isOwnOutput reports whether t is named like a target topic of this
// replication, so that on one cluster it is never read again.
func (c *Config) isOwnOutput(t string) bool {
	if c.Policy != nil {
		return c.Policy.TopicSource(t) == c.SourceClusterAlias
	}
	return c.TargetFormat.pattern().MatchString(t)
}

// policyExcludes says why the replication policy never replicates t, or "".
func (c *Config) policyExcludes(t string) string {
	switch {
	case c.Policy == nil:
		return ""
	case c.Policy.IsInternalTopic(t):
		return "internal"
	case replpolicy.IsCycle(c.Policy, t, c.TargetClusterAlias):
		return "cycle"
	}
	return ""
}

// excludedConfig reports whether topic config key is never synced.
func (c *Config) excludedConfig(key string) bool {
	for _, re := range c.ConfigExclude {
		if re.MatchString(key) {
			return true
		}
	}
	return false
}

// TopicFormat maps source topic names to target topic names.
type TopicFormat struct{ format string }

// Target returns the target topic name for source topic t.
func (f TopicFormat) Target(t string) string {
	return strings.ReplaceAll(f.format, topicPlaceholder, t)
}

// Identity reports whether every topic maps onto its own name.
func (f TopicFormat) Identity() bool { return f.format == topicPlaceholder }

func (f TopicFormat) String() string { return f.format }

// pattern matches every name Target can produce.
func (f TopicFormat) pattern() *regexp.Regexp {
	parts := strings.Split(f.format, topicPlaceholder)
	for i := range parts {
		parts[i] = regexp.QuoteMeta(parts[i])
	}
	return regexp.MustCompile(`^` + strings.Join(parts, `.+`) + `$`)
}

var legalTopicChars = regexp.MustCompile(`^[a-zA-Z0-9._-]*$`)

func validateFormat(key string, v any) error {
	s, _ := v.(string)
	if !strings.Contains(s, topicPlaceholder) {
		return configdef.Invalid(key, v, "must contain "+topicPlaceholder+" so that different source topics map to different target topics")
	}
	if lit := strings.ReplaceAll(s, topicPlaceholder, ""); !legalTopicChars.MatchString(lit) {
		return configdef.Invalid(key, v, "the text around "+topicPlaceholder+" may only contain ASCII letters, digits, '.', '_' and '-'")
	}
	return nil
}

// securityPrefixes are the client settings that concern how to reach a
// cluster rather than how to consume from it: they are shared by the
// task's consumer and the connector's admin client.
var securityPrefixes = []string{"security.", "sasl.", "ssl.", "client.dns.lookup", "socket.", "broker.address.family"}

// consumerRule checks source.consumer.* keys the connector owns or
// restricts: a value that breaks exactly-once or the connector's control of
// positions is refused.
func consumerRule(key, value string) string {
	switch {
	case key == "bootstrap.servers":
		return "set " + KeySourceBootstrap + " instead"
	case key == "isolation.level" && value != "read_committed":
		return "the source consumer must read with isolation.level=read_committed, or records of aborted upstream transactions would be copied"
	case key == "enable.auto.commit" && strings.EqualFold(value, "true"):
		return "the connector keeps its positions in connectd's offsets, never in upstream consumer groups"
	case key == "enable.auto.offset.store" && strings.EqualFold(value, "true"):
		return "the connector keeps its positions in connectd's offsets, never in upstream consumer groups"
	case strings.HasPrefix(key, "go."):
		return "Go client settings are owned by the connector"
	case key == "auto.offset.reset" && !slices.Contains([]string{"smallest", "earliest", "beginning", "largest", "latest", "end", "error"}, value):
		return "must be one of earliest, latest (or librdkafka's smallest, beginning, largest, end, error)"
	}
	return ""
}

// ParseConfig parses connector (or task) properties. The error lists every
// problem; Validate reports the same problems per key.
func ParseConfig(props map[string]string) (*Config, error) {
	vals, err := configDef().Parse(props)
	if err != nil {
		return nil, err
	}
	if fe := crossKeyErrors(props); len(fe) > 0 {
		msgs := make([]string, len(fe))
		for i, e := range fe {
			msgs[i] = e.Message
		}
		return nil, fmt.Errorf("invalid configuration: %s", strings.Join(msgs, "; "))
	}
	c := &Config{
		SourceBootstrap:    vals.String(KeySourceBootstrap),
		SourceClusterAlias: vals.String(KeySourceClusterAlias),
		SourceConsumer:     withPrefix(props, PrefixSourceConsumer),
		TargetBootstrap:    vals.String(KeyTargetBootstrap),
		TargetAdmin:        withPrefix(props, PrefixTargetAdmin),
		TargetFormat:       TopicFormat{vals.String(KeyTargetFormat)},
		TargetClusterAlias: vals.String(KeyTargetClusterAlias),
		SyncTopicConfigs:   vals.Bool(KeySyncTopicConfigs),
		TargetReplication:  vals.Short(KeyTargetReplication),
		TargetTopicConfig:  withPrefix(props, PrefixTargetTopicConfig),
		Mapping:            vals.String(KeyPartitionMapping),
		Provenance:         vals.Bool(KeyProvenanceHeaders),
		Refresh:            time.Duration(vals.Long(KeyRefreshInterval)) * time.Millisecond,
		PollMaxRecords:     int(vals.Int(KeyPollMaxRecords)),
		PollMaxBytes:       int(vals.Int(KeyPollMaxBytes)),
		PollIsTransaction:  pollIsTransaction(props),
		PollTimeout:        time.Duration(vals.Int(KeyPollTimeout)) * time.Millisecond,
		UnreachableTimeout: time.Duration(vals.Long(KeyUnreachableTimeout)) * time.Millisecond,
	}
	if !vals.IsNull(KeyRefreshSeconds) {
		c.Refresh = time.Duration(vals.Long(KeyRefreshSeconds)) * time.Second
	}
	if class := vals.String(KeyPolicyClass); class != "" {
		if c.Policy, err = replpolicy.New(class, vals.String(KeyPolicySeparator), c.SourceClusterAlias); err != nil {
			return nil, fmt.Errorf("%s: %w", KeyPolicyClass, err)
		}
	}
	for _, re := range vals.List(KeyConfigExclude) {
		c.ConfigExclude = append(c.ConfigExclude, regexp.MustCompile(`^(?:`+re+`)$`)) // compiled by the validator already
	}
	if _, set := props[KeyPollMaxBytes]; !set && !c.PollIsTransaction {
		c.PollMaxBytes = leanPollMaxBytes
	}
	c.SourceAdmin = map[string]string{}
	for k, v := range c.SourceConsumer {
		for _, p := range securityPrefixes {
			if strings.HasPrefix(k, p) {
				c.SourceAdmin[k] = v
			}
		}
	}
	maps.Copy(c.SourceAdmin, withPrefix(props, PrefixSourceAdmin))
	switch c.SourceConsumer["auto.offset.reset"] {
	case "largest", "latest", "end":
		c.StartAtEnd = true
	}
	if re := vals.String(KeyTopicsRegex); re != "" {
		c.TopicsRegex = regexp.MustCompile(`^(?:` + re + `)$`) // compiled by the validator already
	} else {
		c.Topics = vals.List(KeyTopics)
	}
	if ex := vals.String(KeyTopicsExclude); ex != "" {
		c.TopicsExclude = regexp.MustCompile(`^(?:` + ex + `)$`)
	} else if _, set := props[KeyTopicsExclude]; !set && c.Policy != nil {
		c.TopicsExclude = regexp.MustCompile(`^(?:` + strings.Join(rawList(DefaultPolicyTopicsExclude), "|") + `)$`)
	}
	return c, nil
}

// keyTransactionBoundary is the framework's exactly-once key (Kafka
// Connect's); the connector reads it only to choose its defaults.
const keyTransactionBoundary = "transaction.boundary"

// Memory defaults where a poll is not a transaction (interval and connector
// boundaries): half the polls' size and half the prefetch took a quarter
// off the peak RSS of the worker and the plugin together at the same
// throughput in the replication benchmark (docs/benchmarks.md). With the
// poll boundary a poll is the transaction, and halving it cost throughput,
// so that boundary keeps the larger values.
const (
	leanPollMaxBytes           = 512 << 10
	leanPrefetchKBytes         = 2048
	pollBoundaryPrefetchKBytes = 4096
)

// pollIsTransaction reports whether every poll is one transaction.
func pollIsTransaction(props map[string]string) bool {
	b := strings.TrimSpace(props[keyTransactionBoundary])
	return b == "" || b == "poll"
}

// crossKeyErrors checks the rules a single key's validator cannot express.
// It reads raw properties, so that Validate can report these problems next
// to per-key type errors.
func crossKeyErrors(props map[string]string) []sdk.FieldError {
	var errs []sdk.FieldError
	raw := func(k string) string { return strings.TrimSpace(props[k]) }
	topics := rawList(props[KeyTopics])
	re := raw(KeyTopicsRegex)
	switch {
	case len(topics) == 0 && re == "":
		errs = append(errs, sdk.FieldError{Key: KeyTopics, Message: "one of topics and topics.regex must be set"})
	case len(topics) > 0 && re != "":
		errs = append(errs, sdk.FieldError{Key: KeyTopicsRegex, Message: "topics and topics.regex are mutually exclusive: set only one"})
	}
	for _, t := range topics {
		if msg := topicNameProblem(t); msg != "" {
			errs = append(errs, sdk.FieldError{Key: KeyTopics, Message: fmt.Sprintf("topic %q %s", t, msg)})
		}
	}
	errs = append(errs, namingErrors(props, topics)...)
	if raw(KeyRefreshSeconds) != "" && raw(KeyRefreshInterval) != "" {
		errs = append(errs, sdk.FieldError{Key: KeyRefreshSeconds, Message: KeyRefreshSeconds + " is MirrorMaker 2's name for " +
			KeyRefreshInterval + ": set only one of them"})
	}
	for _, k := range slices.Sorted(maps.Keys(props)) {
		if sub, ok := strings.CutPrefix(k, PrefixSourceConsumer); ok {
			if msg := consumerRule(sub, strings.TrimSpace(props[k])); msg != "" {
				errs = append(errs, sdk.FieldError{Key: k, Message: fmt.Sprintf("%s=%s is not allowed: %s", k, props[k], msg)})
			}
		}
		if sub, ok := strings.CutPrefix(k, PrefixSourceAdmin); ok && sub == "bootstrap.servers" {
			errs = append(errs, sdk.FieldError{Key: k, Message: k + " is not allowed: set " + KeySourceBootstrap + " instead"})
		}
		if sub, ok := strings.CutPrefix(k, PrefixTargetAdmin); ok && sub == "bootstrap.servers" {
			errs = append(errs, sdk.FieldError{Key: k, Message: k + " is not allowed: set " + KeyTargetBootstrap + " instead"})
		}
	}
	return errs
}

// namingErrors checks how target topics are named: by
// target.topic.format, or by replication.policy.class with its aliases.
func namingErrors(props map[string]string, topics []string) []sdk.FieldError {
	var errs []sdk.FieldError
	raw := func(k string) string { return strings.TrimSpace(props[k]) }
	sameServers := sameServers(raw(KeySourceBootstrap), raw(KeyTargetBootstrap))
	if class := raw(KeyPolicyClass); class != "" {
		if _, set := props[KeyTargetFormat]; set {
			errs = append(errs, sdk.FieldError{Key: KeyTargetFormat, Message: KeyTargetFormat + " and " + KeyPolicyClass +
				" both name target topics: set only one (the policy names them <source.cluster.alias><separator><topic>, or keeps the name)"})
		}
		srcAlias, dstAlias := raw(KeySourceClusterAlias), raw(KeyTargetClusterAlias)
		if dstAlias == "" {
			dstAlias = DefaultTargetClusterAlias
		}
		if srcAlias == "" {
			errs = append(errs, sdk.FieldError{Key: KeySourceClusterAlias, Message: KeySourceClusterAlias +
				" must be set with " + KeyPolicyClass + ": the policy names remote topics and detects cycles by cluster alias"})
		} else if srcAlias == dstAlias {
			errs = append(errs, sdk.FieldError{Key: KeyTargetClusterAlias, Message: fmt.Sprintf("%s and %s are both %q: "+
				"the two clusters need different aliases, or every replicated topic would look like it came from the target", KeySourceClusterAlias, KeyTargetClusterAlias, srcAlias)})
		}
		sep := raw(KeyPolicySeparator)
		if _, set := props[KeyPolicySeparator]; !set {
			sep = replpolicy.DefaultSeparator
		}
		p, err := replpolicy.New(class, sep, srcAlias)
		if err != nil || srcAlias == "" {
			return errs // the key's validator reports a bad class or separator
		}
		if msg := topicNameProblem(p.RemoteTopic(srcAlias, "x")); msg != "" && !strings.Contains(msg, "longer") {
			errs = append(errs, sdk.FieldError{Key: KeySourceClusterAlias, Message: fmt.Sprintf("target topic names such as %q %s", p.RemoteTopic(srcAlias, "x"), msg)})
		}
		if p.Class() == replpolicy.IdentityClass && sameServers {
			errs = append(errs, sdk.FieldError{Key: KeyPolicyClass, Message: selfReplicationPolicyMessage})
		}
		return errs
	}
	format := TopicFormat{topicPlaceholder}
	if f, ok := props[KeyTargetFormat]; ok {
		format = TopicFormat{strings.TrimSpace(f)}
	}
	if validateFormat(KeyTargetFormat, format.format) == nil {
		for _, t := range topics {
			if topicNameProblem(t) != "" {
				continue
			}
			if msg := topicNameProblem(format.Target(t)); msg != "" {
				errs = append(errs, sdk.FieldError{Key: KeyTargetFormat, Message: fmt.Sprintf("target topic %q of %q %s", format.Target(t), t, msg)})
			}
		}
	}
	if format.Identity() && sameServers {
		errs = append(errs, sdk.FieldError{Key: KeyTargetFormat, Message: selfReplicationMessage})
	}
	return errs
}

const selfReplicationPolicyMessage = "source and target are the same cluster and " + KeyPolicyClass + " is IdentityReplicationPolicy" +
	": every topic would be copied onto itself; use DefaultReplicationPolicy"

const selfReplicationMessage = "source and target are the same cluster and " + KeyTargetFormat + " is " + topicPlaceholder +
	": every topic would be copied onto itself; use a format such as ${topic}.replica"

// rawList splits a LIST value as configdef does: on commas, trimmed, ""
// is the empty list.
func rawList(s string) []string {
	if strings.TrimSpace(s) == "" {
		return nil
	}
	parts := strings.Split(s, ",")
	for i := range parts {
		parts[i] = strings.TrimSpace(parts[i])
	}
	return parts
}

// topicNameProblem returns why name is not a legal Kafka topic name, or "".
func topicNameProblem(name string) string {
	switch {
	case name == "" || name == "." || name == "..":
		return "is not a legal topic name"
	case len(name) > 249:
		return "is longer than 249 characters"
	case !legalTopicChars.MatchString(name):
		return "may only contain ASCII letters, digits, '.', '_' and '-'"
	}
	return ""
}

// sameServers reports whether two bootstrap lists name the same set of
// addresses (a cheap, static self-replication check; the connector also
// compares cluster IDs at run time).
func sameServers(a, b string) bool {
	norm := func(s string) []string {
		var out []string
		for _, p := range strings.Split(s, ",") {
			if p = strings.ToLower(strings.TrimSpace(p)); p != "" {
				out = append(out, p)
			}
		}
		slices.Sort(out)
		return slices.Compact(out)
	}
	x, y := norm(a), norm(b)
	return len(x) > 0 && slices.Equal(x, y)
}

func withPrefix(props map[string]string, prefix string) map[string]string {
	out := map[string]string{}
	for k, v := range props {
		if sub, ok := strings.CutPrefix(k, prefix); ok && sub != "" {
			out[sub] = v
		}
	}
	return out
}
