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
