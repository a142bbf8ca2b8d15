package kafka

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/connectd/connectd/framework/configdef"
)

func baseProps() map[string]string {
	return map[string]string{
		"name":             "repl",
		KeySourceBootstrap: "src:9092",
		KeyTargetBootstrap: "dst:9092",
		KeyTopics:          "orders,payments",
	}
}

func with(m map[string]string, kv ...string) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] == "<unset>" {
			delete(out, kv[i])
			continue
		}
		out[kv[i]] = kv[i+1]
	}
	return out
}

func TestParseConfigDefaults(t *testing.T) {
	c, err := ParseConfig(with(baseProps(),
		"source.consumer.security.protocol", "SASL_SSL",
		"source.consumer.fetch.min.bytes", "1000",
		"source.admin.request.timeout.ms", "5000",
		"target.admin.client.id", "x",
		"target.topic.config.cleanup.policy", "compact"))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(c.Topics, []string{"orders", "payments"}) || c.TopicsRegex != nil {
		t.Errorf("topics = %v, regex = %v", c.Topics, c.TopicsRegex)
	}
	if !c.TargetFormat.Identity() || c.Mapping != MappingPreserve || c.Provenance || c.TargetReplication != -1 {
		t.Errorf("defaults: format %q mapping %q provenance %v rf %d", c.TargetFormat, c.Mapping, c.Provenance, c.TargetReplication)
	}
	if c.SourceConsumer["fetch.min.bytes"] != "1000" || c.SourceConsumer["security.protocol"] != "SASL_SSL" {
		t.Errorf("source consumer = %v", c.SourceConsumer)
	}
	// Security settings reach the admin client; consumer-only ones do not.
	if c.SourceAdmin["security.protocol"] != "SASL_SSL" || c.SourceAdmin["request.timeout.ms"] != "5000" {
		t.Errorf("source admin = %v", c.SourceAdmin)
	}
	if _, ok := c.SourceAdmin["fetch.min.bytes"]; ok {
		t.Errorf("consumer-only key leaked into the admin config: %v", c.SourceAdmin)
	}
	if c.TargetAdmin["client.id"] != "x" || c.TargetTopicConfig["cleanup.policy"] != "compact" {
		t.Errorf("target admin %v, topic config %v", c.TargetAdmin, c.TargetTopicConfig)
	}
	if c.StartAtEnd || c.PollMaxRecords != 2000 || c.PollTimeout.Milliseconds() != 1000 {
		t.Errorf("tuning: %+v", c)
	}
}

func TestParseConfigRegexAndFormat(t *testing.T) {
	c, err := ParseConfig(with(baseProps(), KeyTopics, "<unset>", KeyTopicsRegex, `orders\..*`,
		KeyTopicsExclude, `.*\.internal`, KeyTargetFormat, "backup.${topic}.r", "source.consumer.auto.offset.reset", "latest"))
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]bool{"orders.eu": true, "xorders.eu": false, "orders.eu.x": true, "orders": false} {
		if got := c.TopicsRegex.MatchString(name); got != want {
			t.Errorf("regex match %q = %v, want %v (whole-name match)", name, got, want)
		}
	}
	if !c.TopicsExclude.MatchString("orders.a.internal") {
		t.Error("exclude regex does not match")
	}
	if got := c.TargetFormat.Target("orders.eu"); got != "backup.orders.eu.r" {
		t.Errorf("target = %q", got)
	}
	if !c.StartAtEnd {
		t.Error("auto.offset.reset=latest should start new partitions at their end")
	}
}

func TestConfigErrors(t *testing.T) {
	cases := []struct {
		name  string
		props map[string]string
		key   string // key the error names
		want  string // substring of the message
	}{
		{"no topics", with(baseProps(), KeyTopics, "<unset>"), KeyTopics, "one of topics and topics.regex must be set"},
		{"both", with(baseProps(), KeyTopicsRegex, "a.*"), KeyTopicsRegex, "mutually exclusive"},
		{"bad topic", with(baseProps(), KeyTopics, "ok,bad topic"), KeyTopics, `"bad topic" may only contain`},
		{"target name too long", with(baseProps(), KeyTopics, strings.Repeat("a", 249), KeyTargetFormat, "${topic}.r"), KeyTargetFormat, "longer than 249"},
		{"self replication by address", with(baseProps(), KeyTargetBootstrap, " SRC:9092 "), KeyTargetFormat, "copied onto itself"},
		{"read uncommitted", with(baseProps(), "source.consumer.isolation.level", "read_uncommitted"), "source.consumer.isolation.level", "aborted upstream transactions"},
		{"auto commit", with(baseProps(), "source.consumer.enable.auto.commit", "true"), "source.consumer.enable.auto.commit", "never in upstream consumer groups"},
		{"consumer bootstrap", with(baseProps(), "source.consumer.bootstrap.servers", "x:1"), "source.consumer.bootstrap.servers", "source.bootstrap.servers instead"},
		{"go keys", with(baseProps(), "source.consumer.go.events.channel.enable", "true"), "source.consumer.go.events.channel.enable", "owned by the connector"},
		{"admin bootstrap", with(baseProps(), "target.admin.bootstrap.servers", "x:1"), "target.admin.bootstrap.servers", "target.bootstrap.servers instead"},
		{"bad reset", with(baseProps(), "source.consumer.auto.offset.reset", "sometimes"), "source.consumer.auto.offset.reset", "must be one of"},
		{"policy and format", with(policyProps(), KeyTargetFormat, "${topic}.replica"), KeyTargetFormat, "both name target topics"},
		{"policy without source alias", with(policyProps(), KeySourceClusterAlias, "<unset>"), KeySourceClusterAlias, "must be set with replication.policy.class"},
		{"same aliases", with(policyProps(), KeyTargetClusterAlias, "a"), KeyTargetClusterAlias, "need different aliases"},
		{"identity policy on one cluster", with(policyProps(), KeyPolicyClass, "IdentityReplicationPolicy", KeyTargetBootstrap, "src:9092"), KeyPolicyClass, "copied onto itself"},
		{"both refresh keys", with(baseProps(), KeyRefreshSeconds, "600", KeyRefreshInterval, "30000"), KeyRefreshSeconds, "set only one"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			errs := (&Connector{}).Validate(t.Context(), tc.props)
			found := false
			for _, e := range errs {
				if e.Key == tc.key && strings.Contains(e.Message, tc.want) {
					found = true
				}
			}
			if !found {
				t.Errorf("Validate = %+v, want an error on %s containing %q", errs, tc.key, tc.want)
			}
			if _, err := ParseConfig(tc.props); err == nil || (!strings.Contains(err.Error(), tc.want) && !errors.As(err, new(configdef.Errors))) {
				t.Errorf("ParseConfig error = %v, want it to mention %q", err, tc.want)
			}
		})
	}
}

func TestConfigDefPerKeyErrors(t *testing.T) {
	cases := []struct {
		key, value, want string
	}{
		{KeyPartitionMapping, "round-robin", "round-robin"},
		{KeyTopicsRegex, "(", "Invalid regex"},
		{KeyTargetReplication, "0", "must be -1"},
		{KeyPollMaxRecords, "0", "at least 1"},
		{KeyRefreshInterval, "abc", "Not a number"},
		{KeyTargetFormat, "fixed", "must contain ${topic}"},
		{KeyTargetFormat, "${topic}/x", "may only contain"},
		{KeyPolicyClass, "com.example.MyPolicy", "use org.apache.kafka.connect.mirror.DefaultReplicationPolicy or org.apache.kafka.connect.mirror.IdentityReplicationPolicy"},
		{KeyPolicySeparator, "", "non-empty"},
		{KeyConfigExclude, "a(,b", "not a valid regex"},
		{KeyRefreshSeconds, "0", "at least 1"},
	}
	for _, tc := range cases {
		t.Run(tc.key+"="+tc.value, func(t *testing.T) {
			props := with(baseProps(), tc.key, tc.value)
			if tc.key == KeyTopicsRegex {
				delete(props, KeyTopics)
			}
			vals := configDef().Validate(props)
			var msgs []string
			for _, v := range vals {
				if v.Name == tc.key {
					msgs = v.Errors
				}
			}
			if len(msgs) == 0 || !strings.Contains(strings.Join(msgs, "|"), tc.want) {
				t.Errorf("errors for %s=%s: %v, want one containing %q", tc.key, tc.value, msgs, tc.want)
			}
		})
	}
	missing := configDef().Validate(map[string]string{KeyTopics: "a"})
	for _, v := range missing {
		if (v.Name == KeySourceBootstrap || v.Name == KeyTargetBootstrap) && len(v.Errors) == 0 {
			t.Errorf("required key %s reported no error when missing", v.Name)
		}
	}
}

// Where a poll is not a transaction the connector halves its polls and its
// prefetch by default; explicit values always win.
func TestMemoryDefaultsFollowTheTransactionBoundary(t *testing.T) {
	for _, tc := range []struct {
		name           string
		props          []string
		pollMaxBytes   int
		prefetchKBytes any
	}{
		{"boundary unset (poll)", nil, 1 << 20, 4096},
		{"poll", []string{"transaction.boundary", "poll"}, 1 << 20, 4096},
		{"interval", []string{"transaction.boundary", "interval"}, 512 << 10, 2048},
		{"connector", []string{"transaction.boundary", "connector"}, 512 << 10, 2048},
		{"interval, explicit poll size", []string{"transaction.boundary", "interval", KeyPollMaxBytes, "2000000"}, 2000000, 2048},
		{"interval, explicit prefetch", []string{"transaction.boundary", "interval", "source.consumer.queued.max.messages.kbytes", "8192"}, 512 << 10, "8192"},
		{"poll, explicit poll size", []string{"transaction.boundary", "poll", KeyPollMaxBytes, "4096"}, 4096, 4096},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := ParseConfig(with(baseProps(), tc.props...))
			if err != nil {
				t.Fatal(err)
			}
			if c.PollMaxBytes != tc.pollMaxBytes {
				t.Errorf("poll.max.bytes = %d, want %d", c.PollMaxBytes, tc.pollMaxBytes)
			}
			task := &Task{cfg: c}
			cm := task.consumerConfig(newTaskCtx("repl", 0))
			if got := (*cm)["queued.max.messages.kbytes"]; got != tc.prefetchKBytes {
				t.Errorf("queued.max.messages.kbytes = %v (%T), want %v", got, got, tc.prefetchKBytes)
			}
		})
	}
}

func policyProps() map[string]string {
	return with(baseProps(), KeyPolicyClass, "DefaultReplicationPolicy", KeySourceClusterAlias, "a", KeyTargetClusterAlias, "b")
}

// TestParseConfigPolicy checks the MM2-style keys: target names from the
// policy, MM2's topics.exclude and config.properties.exclude defaults, and
// refresh.topics.interval.seconds.
func TestParseConfigPolicy(t *testing.T) {
	cfg, err := ParseConfig(with(policyProps(), KeyRefreshSeconds, "600"))
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.TargetTopic("orders"); got != "a.orders" {
		t.Errorf("target of orders = %q, want a.orders", got)
	}
	if cfg.Refresh.Seconds() != 600 || !cfg.SyncTopicConfigs || cfg.TargetClusterAlias != "b" {
		t.Errorf("refresh %v, sync %v, target alias %q", cfg.Refresh, cfg.SyncTopicConfigs, cfg.TargetClusterAlias)
	}
	for topic, excluded := range map[string]bool{"mm2-offset-syncs.b.internal": true, "x.replica": true, "__consumer_offsets": true, "orders": false, "heartbeats": false} {
		if got := cfg.TopicsExclude.MatchString(topic); got != excluded {
			t.Errorf("topics.exclude default matches %q: %v, want %v", topic, got, excluded)
		}
	}
	for key, excluded := range map[string]bool{"min.insync.replicas": true, "message.timestamp.type": true, "leader.replication.throttled.replicas": true,
		"retention.ms": false, "cleanup.policy": false, "xmin.insync.replicas": false} {
		if got := cfg.excludedConfig(key); got != excluded {
			t.Errorf("config %q excluded: %v, want %v", key, got, excluded)
		}
	}
	cfg, err = ParseConfig(with(policyProps(), KeyPolicySeparator, "_", KeyTopicsExclude, "^$"))
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.TargetTopic("orders"); got != "a_orders" || cfg.TopicsExclude.MatchString("x.replica") {
		t.Errorf("separator _: target %q; explicit topics.exclude replaces the default: %v", got, cfg.TopicsExclude)
	}
	cfg, err = ParseConfig(baseProps())
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Policy != nil || cfg.TopicsExclude != nil || cfg.TargetTopic("orders") != "orders" {
		t.Errorf("without a policy: policy %v, exclude %v", cfg.Policy, cfg.TopicsExclude)
	}
}
