package heartbeat

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/connectd/connectd/connectors/kafka/replpolicy"
	"github.com/connectd/connectd/framework/configdef"
	"github.com/connectd/connectd/framework/sdk"
)

// Configuration keys of KafkaHeartbeatSource (MM2's names where MM2 has one).
const (
	KeySourceClusterAlias = "source.cluster.alias"
	KeyTargetClusterAlias = "target.cluster.alias"
	KeyTargetBootstrap    = "target.bootstrap.servers"
	KeyEnabled            = "emit.heartbeats.enabled"
	KeyInterval           = "emit.heartbeats.interval.seconds"
	KeyReplicationFactor  = "heartbeats.topic.replication.factor"
	KeyPolicyClass        = "replication.policy.class"
	KeyPolicySeparator    = "replication.policy.separator"
	PrefixTargetAdmin     = "target.admin."
)

func configDef() *configdef.Def {
	const (
		gFlow   = "Replication flow"
		gTarget = "Target cluster"
	)
	return configdef.New().
		Define(configdef.Key{
			Name: KeySourceClusterAlias, Type: configdef.String, Default: "source", Importance: configdef.High,
			Validator: configdef.NonEmptyString(), Group: gFlow, OrderInGroup: 1, DisplayName: "Source cluster alias",
			Documentation: "Alias of the cluster whose replication flow the heartbeats stand for; the first field " +
				"of every heartbeat's key (MM2: source.cluster.alias). Use the alias the replication connector of " +
				"the same flow uses.",
		}).
		Define(configdef.Key{
			Name: KeyTargetClusterAlias, Type: configdef.String, Default: "target", Importance: configdef.High,
			Validator: configdef.NonEmptyString(), Group: gFlow, OrderInGroup: 2, DisplayName: "Target cluster alias",
			Documentation: "Alias of the cluster the heartbeats are written to; the second field of every " +
				"heartbeat's key (MM2: target.cluster.alias).",
		}).
		Define(configdef.Key{
			Name: KeyEnabled, Type: configdef.Boolean, Default: true, Importance: configdef.Low,
			Group: gFlow, OrderInGroup: 3, DisplayName: "Emit heartbeats",
			Documentation: "Whether to emit heartbeats. false runs the connector with no task (as MM2 does).",
		}).
		Define(configdef.Key{
			Name: KeyInterval, Type: configdef.Long, Default: int64(1), Importance: configdef.Low,
			Validator: configdef.AtLeast(int64(1)), Group: gFlow, OrderInGroup: 4, DisplayName: "Heartbeat interval (s)",
			Documentation: "Seconds between two heartbeats. The task sleeps on a timer in between. (MM2 also " +
				"accepts 0, which emits as fast as the worker can; connectd refuses it.)",
		}).
		Define(configdef.Key{
			Name: KeyPolicyClass, Type: configdef.String, Default: replpolicy.DefaultClass, Importance: configdef.Low,
			Validator: configdef.OneOf(replpolicy.DefaultClass, "DefaultReplicationPolicy", replpolicy.IdentityClass, "IdentityReplicationPolicy"),
			Group:     gFlow, OrderInGroup: 5, DisplayName: "Replication policy",
			Documentation: "MM2 replication policy of the flow; it names the heartbeats topic (heartbeats with both " +
				"of MM2's policies).",
		}).
		Define(configdef.Key{
			Name: KeyPolicySeparator, Type: configdef.String, Default: replpolicy.DefaultSeparator, Importance: configdef.Low,
			Validator: configdef.NonEmptyString(), Group: gFlow, OrderInGroup: 6, DisplayName: "Replication policy separator",
			Documentation: "Separator of the replication policy. A cluster alias may not contain it: replicated " +
				"heartbeats are named <alias><separator>heartbeats, and MM2's tools read the alias back up to the " +
				"first separator.",
		}).
		Define(configdef.Key{
			Name: KeyTargetBootstrap, Type: configdef.String, Required: true, Importance: configdef.High,
			Validator: configdef.NonEmptyString(), Group: gTarget, OrderInGroup: 1, Width: configdef.WidthLong,
			DisplayName: "Target bootstrap servers",
			Documentation: "Bootstrap servers of the cluster the worker writes to. The connector uses them only " +
				"for its admin client, to create the heartbeats topic; admin client settings go in target.admin.*.",
		}).
		Define(configdef.Key{
			Name: KeyReplicationFactor, Type: configdef.Short, Default: int16(3), Importance: configdef.Low,
			Validator: configdef.Func("-1 (broker default) or at least 1", func(key string, v any) error {
				if n, _ := v.(int16); n == 0 || n < -1 {
					return configdef.Invalid(key, v, "must be -1 (broker default) or at least 1")
				}
				return nil
			}),
			Group: gTarget, OrderInGroup: 2, DisplayName: "Heartbeats topic replication factor",
			Documentation: "Replication factor of the heartbeats topic when the connector creates it (MM2's " +
				"default, 3); -1 uses the broker's default.replication.factor. An existing topic is used as it is.",
		})
}

// Config is a parsed KafkaHeartbeatSource configuration.
type Config struct {
	SourceAlias, TargetAlias string
	Enabled                  bool
	Interval                 time.Duration
	Topic                    string // the heartbeats topic, named by the policy
	TargetBootstrap          string
	TargetAdmin              map[string]string // target.admin.* without the prefix
	ReplicationFactor        int16
}

// ParseConfig parses connector (or task) properties.
func ParseConfig(props map[string]string) (*Config, error) {
	vals, err := configDef().Parse(props)
	if err != nil {
		return nil, err
	}
	if fe := crossKeyErrors(props); len(fe) > 0 {
		return nil, fmt.Errorf("invalid configuration: %s: %s", fe[0].Key, fe[0].Message)
	}
	policy, err := replpolicy.New(vals.String(KeyPolicyClass), vals.String(KeyPolicySeparator), vals.String(KeySourceClusterAlias))
	if err != nil {
		return nil, fmt.Errorf("invalid configuration: %w", err)
	}
	admin := map[string]string{}
	for k, v := range props {
		if rest, ok := strings.CutPrefix(k, PrefixTargetAdmin); ok {
			admin[rest] = v
		}
	}
	return &Config{
		SourceAlias:       vals.String(KeySourceClusterAlias),
		TargetAlias:       vals.String(KeyTargetClusterAlias),
		Enabled:           vals.Bool(KeyEnabled),
		Interval:          time.Duration(vals.Long(KeyInterval)) * time.Second,
		Topic:             policy.HeartbeatsTopic(),
		TargetBootstrap:   vals.String(KeyTargetBootstrap),
		TargetAdmin:       admin,
		ReplicationFactor: vals.Short(KeyReplicationFactor),
	}, nil
}

// crossKeyErrors checks the aliases against the separator and the
// heartbeat key's limits.
func crossKeyErrors(props map[string]string) []sdk.FieldError {
	sep := replpolicy.DefaultSeparator
	if v, ok := props[KeyPolicySeparator]; ok && v != "" {
		sep = v
	}
	var errs []sdk.FieldError
	for _, k := range []struct{ key, def string }{{KeySourceClusterAlias, "source"}, {KeyTargetClusterAlias, "target"}} {
		alias, ok := props[k.key]
		if !ok {
			alias = k.def
		}
		switch {
		case !utf8.ValidString(alias):
			errs = append(errs, sdk.FieldError{Key: k.key, Message: fmt.Sprintf("%s %q is not valid UTF-8", k.key, alias)})
		case len(alias) > 255:
			errs = append(errs, sdk.FieldError{Key: k.key, Message: fmt.Sprintf("%s is %d bytes long; an alias names a topic prefix and may have at most 255", k.key, len(alias))})
		case alias != "" && strings.Contains(alias, sep):
			errs = append(errs, sdk.FieldError{Key: k.key, Message: fmt.Sprintf(
				"%s %q contains the replication.policy.separator %q: its replicated heartbeats topic %q would be read as coming from cluster %q",
				k.key, alias, sep, alias+sep+"heartbeats", strings.SplitN(alias, sep, 2)[0])})
		}
	}
	return errs
}
