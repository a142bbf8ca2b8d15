package connconfig

import (
	"reflect"
	"strings"
	"testing"

	"github.com/connectd/connectd/framework/configdef"
)

func TestParseTopicCreation(t *testing.T) {
	base := map[string]string{"name": "c", "connector.class": "TestSource"}
	with := func(kv ...string) map[string]string {
		m := map[string]string{}
		for k, v := range base {
			m[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	type want struct {
		group      string
		rf         int16
		partitions int32
		configs    map[string]string
	}
	for _, tc := range []struct {
		name  string
		props map[string]string
		off   bool
		// topic -> the group it gets
		topics map[string]want
	}{
		{name: "no topic.creation keys: off", props: with(), off: true},
		{
			name:  "default group only",
			props: with("topic.creation.default.replication.factor", "-1", "topic.creation.default.partitions", "3", "topic.creation.default.cleanup.policy", "compact"),
			topics: map[string]want{
				"anything": {"default", -1, 3, map[string]string{"cleanup.policy": "compact"}},
			},
		},
		{
			name: "groups in order, exclude wins, default last",
			props: with(
				"topic.creation.groups", "first,second",
				"topic.creation.default.replication.factor", "1", "topic.creation.default.partitions", "1",
				"topic.creation.first.include", "orders.*, payments",
				"topic.creation.first.exclude", "orders-internal",
				"topic.creation.first.partitions", "6",
				"topic.creation.first.retention.ms", "1000",
				"topic.creation.second.include", "orders-.*",
				"topic.creation.second.replication.factor", "-1",
			),
			topics: map[string]want{
				"orders-eu":       {"first", 1, 6, map[string]string{"retention.ms": "1000"}},
				"payments":        {"first", 1, 6, map[string]string{"retention.ms": "1000"}},
				"payments-x":      {"default", 1, 1, map[string]string{}},
				"orders-internal": {"second", -1, 1, map[string]string{}},
				"other":           {"default", 1, 1, map[string]string{}},
			},
		},
		{
			name: "default listed in groups and its include/exclude are ignored",
			props: with(
				"topic.creation.groups", "default,g",
				"topic.creation.default.replication.factor", "1", "topic.creation.default.partitions", "2",
				"topic.creation.default.include", "nothing", "topic.creation.default.exclude", ".*",
				"topic.creation.g.include", "g-.*",
			),
			topics: map[string]want{
				"g-1": {"g", 1, 2, map[string]string{}},
				"x":   {"default", 1, 2, map[string]string{}},
			},
		},
		{
			name: "a group without include matches nothing",
			props: with("topic.creation.groups", "g", "topic.creation.default.replication.factor", "1", "topic.creation.default.partitions", "2",
				"topic.creation.g.partitions", "9"),
			topics: map[string]want{"x": {"default", 1, 2, map[string]string{}}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseTopicCreation(tc.props)
			if err != nil {
				t.Fatal(err)
			}
			if tc.off {
				if got != nil || UsesTopicCreation(tc.props) {
					t.Fatalf("topic creation on for %v", tc.props)
				}
				return
			}
			if got == nil {
				t.Fatal("topic creation off")
			}
			for topic, w := range tc.topics {
				g := got.GroupFor(topic)
				if g.Name != w.group || g.ReplicationFactor != w.rf || g.Partitions != w.partitions || !reflect.DeepEqual(g.Configs, w.configs) {
					t.Errorf("%s: group %s rf %d partitions %d configs %v; want %+v", topic, g.Name, g.ReplicationFactor, g.Partitions, g.Configs, w)
				}
			}
		})
	}
}

func TestTopicCreationErrors(t *testing.T) {
	good := []string{"topic.creation.default.replication.factor", "1", "topic.creation.default.partitions", "1"}
	for _, tc := range []struct {
		name string
		kv   []string
		key  string // the key the error names
		msg  string // part of the message
	}{
		{"default replication factor missing", []string{"topic.creation.default.partitions", "1"},
			"topic.creation.default.replication.factor", `Missing required configuration "topic.creation.default.replication.factor" which has no default value.`},
		{"default partitions missing", []string{"topic.creation.default.replication.factor", "1"},
			"topic.creation.default.partitions", `Missing required configuration "topic.creation.default.partitions"`},
		{"any topic.creation key needs the default group", []string{"topic.creation.groups", "g"},
			"topic.creation.default.replication.factor", "Missing required configuration"},
		{"zero partitions", []string{"topic.creation.default.replication.factor", "1", "topic.creation.default.partitions", "0"},
			"topic.creation.default.partitions", "Number of partitions must be positive, or -1 to use the broker's default"},
		{"replication factor -2", []string{"topic.creation.default.replication.factor", "-2", "topic.creation.default.partitions", "1"},
			"topic.creation.default.replication.factor", "Replication factor must be positive"},
		{"replication factor not a number", []string{"topic.creation.default.replication.factor", "three", "topic.creation.default.partitions", "1"},
			"topic.creation.default.replication.factor", "Invalid value three for configuration topic.creation.default.replication.factor"},
		{"duplicate group", append([]string{"topic.creation.groups", "a,a"}, good...),
			"topic.creation.groups", "Duplicate alias provided."},
		{"bad include regex", append([]string{"topic.creation.groups", "a", "topic.creation.a.include", "orders("}, good...),
			"topic.creation.a.include", "Syntax error in regular expression"},
		{"bad exclude regex", append([]string{"topic.creation.groups", "a", "topic.creation.a.include", ".*", "topic.creation.a.exclude", "[x"}, good...),
			"topic.creation.a.exclude", "Syntax error in regular expression"},
		{"group partitions 0", append([]string{"topic.creation.groups", "a", "topic.creation.a.partitions", "0"}, good...),
			"topic.creation.a.partitions", "Number of partitions must be positive"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			props := map[string]string{"name": "c"}
			for i := 0; i < len(tc.kv); i += 2 {
				props[tc.kv[i]] = tc.kv[i+1]
			}
			_, err := ParseTopicCreation(props)
			errs, ok := err.(configdef.Errors)
			if !ok {
				t.Fatalf("err = %v (%T), want configdef.Errors", err, err)
			}
			found := false
			for _, e := range errs {
				found = found || (e.Key == tc.key && strings.Contains(e.Message, tc.msg))
			}
			if !found {
				t.Errorf("errors %v do not name %s with %q", errs, tc.key, tc.msg)
			}
			if got := TopicCreationErrors(props); len(got) != len(errs) {
				t.Errorf("TopicCreationErrors = %v, want %v", got, errs)
			}
		})
	}
}
