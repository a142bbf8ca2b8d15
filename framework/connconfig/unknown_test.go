package connconfig

import (
	"context"
	"reflect"
	"testing"
)

func TestUnknownKeysSuggestNearest(t *testing.T) {
	base := func(kv ...string) map[string]string {
		p := map[string]string{"name": "s", "connector.class": "TestSink", "hosts": "h1", "topics": "t"}
		for i := 0; i < len(kv); i += 2 {
			p[kv[i]] = kv[i+1]
		}
		return p
	}
	for _, tc := range []struct {
		name  string
		props map[string]string
		want  []UnknownKey
	}{
		{"none", base(), nil},
		{"common key typo", base("tasks.mx", "2"), []UnknownKey{{"tasks.mx", KeyTasksMax}}},
		{"connector key typo", base("hots", "h2"), []UnknownKey{{"hots", "hosts"}}},
		{"errors key typo", base("errors.tolerence", "all"), []UnknownKey{{"errors.tolerence", KeyErrorsTolerance}}},
		{"nothing close", base("my.own.setting", "x"), []UnknownKey{{"my.own.setting", ""}}},
		{"misspelt override prefix", base("producer.overide.linger.ms", "5"), []UnknownKey{{"producer.overide.linger.ms", "producer.override.linger.ms"}}},
		{"misspelt client family", base("prodcer.override.linger.ms", "5"), []UnknownKey{{"prodcer.override.linger.ms", "producer.override.linger.ms"}}},
		{"open families", base("producer.override.linger.ms", "5", "consumer.override.max.poll.records", "10",
			"admin.override.request.timeout.ms", "1", "value.converter.schemas.enable", "false",
			"key.converter.whatever", "x", "topic.creation.default.partitions", "3"), nil},
		{"known transform's key typo", base("transforms", "route", "transforms.route.type", "org.apache.kafka.connect.transforms.RegexRouter",
			"transforms.route.regex", "(.*)", "transforms.route.replacment", "x"),
			[]UnknownKey{{"transforms.route.replacment", "transforms.route.replacement"}}},
		{"unknown transform class: its keys are not judged", base("transforms", "x", "transforms.x.type", "com.example.Nope",
			"transforms.x.anything", "1"), nil},
		{"alias not listed", base("transforms.old.regex", "x"), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := Validate(context.Background(), sinkConnector(), tc.props, workerDefaults)
			if got := UnknownKeys(tc.props, res); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("UnknownKeys = %v, want %v", got, tc.want)
			}
		})
	}
	if msg := (UnknownKey{"tasks.mx", KeyTasksMax}).Message("s"); msg != "unknown connector property tasks.mx in connector s; did you mean tasks.max?" {
		t.Errorf("message %q", msg)
	}
}
