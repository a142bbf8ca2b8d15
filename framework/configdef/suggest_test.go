package configdef_test

import (
	"testing"

	"github.com/connectd/connectd/framework/configdef"
)

func TestDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"abc", "", 3},
		{"", "abc", 3},
		{"same", "same", 0},
		{"exactly.once.source.suport", "exactly.once.source.support", 1}, // deletion
		{"tasks.max", "task.max", 1},
		{"tasks.mxa", "tasks.max", 1}, // swap
		{"group.id", "gruop.di", 2},   // two swaps
		{"flaw", "lawn", 2},
		{"listeners", "listener", 1},
	} {
		if got := configdef.Distance(tc.a, tc.b); got != tc.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
		if got := configdef.Distance(tc.b, tc.a); got != tc.want {
			t.Errorf("Distance(%q, %q) = %d, want %d (symmetry)", tc.b, tc.a, got, tc.want)
		}
	}
}

func TestNearest(t *testing.T) {
	known := []string{"exactly.once.source.support", "group.id", "tasks.max", "topics", "topics.regex", "name", "plugin.path", "key.converter", "value.converter"}
	prefixes := []string{"producer.", "consumer.", "admin.", "topic.creation."}
	for _, tc := range []struct {
		key, want string
		ok        bool
	}{
		{"exactly.once.source.suport", "exactly.once.source.support", true},
		{"exactly-once.source.support", "exactly.once.source.support", true},
		{"grup.id", "group.id", true},
		{"task.max", "tasks.max", true},
		{"topic", "topics", true},
		{"plugins.path", "plugin.path", true},
		{"prodcer.acks", "producer.acks", true},
		{"consumr.max.poll.records", "consumer.max.poll.records", true},
		{"topic.creaton.default.partitions", "topic.creation.default.partitions", true},
		{"topics.creation.default.partitions", "topic.creation.default.partitions", true},
		// Too far from anything: no guess.
		{"aerospike.hosts", "", false},
		{"nmae", "name", true},
		{"abcd", "", false},
		// A known key is not a typo.
		{"topics", "", false},
		{"producer.acks", "", false},
	} {
		got, ok := configdef.Nearest(tc.key, known, prefixes...)
		if got != tc.want || ok != tc.ok {
			t.Errorf("Nearest(%q) = %q, %v; want %q, %v", tc.key, got, ok, tc.want, tc.ok)
		}
	}
}
