package kafka

import (
	"errors"
	"maps"
	"slices"
	"testing"

	"github.com/connectd/connectd/framework/sdk"
)

func sortedTopics(m map[string]int) []string { return slices.Sorted(maps.Keys(m)) }

func TestSelectTopics(t *testing.T) {
	src := clusterState{id: "C", topics: map[string]int{
		"orders": 6, "orders.replica": 6, "payments": 3, "old.replica": 2, "__consumer_offsets": 50, "orders.internal": 1,
		"b.orders": 6, "c.payments": 3, "a.orders": 6, "a2.x": 1, "heartbeats": 1, "mm2-offset-syncs.b.internal": 1, "a.checkpoints.internal": 1,
	}}
	cases := []struct {
		name    string
		props   map[string]string
		same    bool
		want    []string
		skipped []string
		err     error
	}{
		{"list", with(baseProps(), KeyTopics, "orders,payments"), false, []string{"orders", "payments"}, nil, nil},
		{"list missing", with(baseProps(), KeyTopics, "orders,nope"), false, nil, nil, ErrMissingTopics},
		{"regex other cluster copies replicas too", with(baseProps(), KeyTopics, "<unset>", KeyTopicsRegex, ".*", KeyTargetFormat, "${topic}.replica"), false,
			[]string{"a.checkpoints.internal", "a.orders", "a2.x", "b.orders", "c.payments", "heartbeats", "mm2-offset-syncs.b.internal",
				"old.replica", "orders", "orders.internal", "orders.replica", "payments"}, nil, nil},
		{"regex same cluster skips target-shaped names", with(baseProps(), KeyTopics, "<unset>", KeyTopicsRegex, ".*", KeyTargetFormat, "${topic}.replica"), true,
			[]string{"a.checkpoints.internal", "a.orders", "a2.x", "b.orders", "c.payments", "heartbeats", "mm2-offset-syncs.b.internal",
				"orders", "orders.internal", "payments"}, []string{"old.replica", "orders.replica"}, nil},
		{"regex with exclude", with(baseProps(), KeyTopics, "<unset>", KeyTopicsRegex, "orders.*", KeyTopicsExclude, `.*\.internal`), false,
			[]string{"orders", "orders.replica"}, nil, nil},
		{"regex nothing", with(baseProps(), KeyTopics, "<unset>", KeyTopicsRegex, "nothing.*"), false, nil, nil, ErrNoTopics},
		{"all excluded", with(baseProps(), KeyTopics, "payments", KeyTopicsExclude, "pay.*"), false, nil, nil, ErrNoTopics},
		{"identity on one cluster", with(baseProps(), KeyTopics, "orders"), true, nil, nil, ErrSelfReplication},
		{"listed target of listed source", with(baseProps(), KeyTopics, "orders,orders.replica", KeyTargetFormat, "${topic}.replica"), true, nil, nil, ErrSelfReplication},
		{"listed replica alone is fine", with(baseProps(), KeyTopics, "old.replica", KeyTargetFormat, "${topic}.replica"), true, []string{"old.replica"}, nil, nil},
		// Active/active: b.orders came from the target cluster b, so it never
		// goes back; c.payments came from a third cluster and travels on.
		{"policy skips cycles and internal topics", with(policyProps(), KeyTopics, "<unset>", KeyTopicsRegex, ".*"), false,
			[]string{"a.orders", "a2.x", "c.payments", "heartbeats", "orders", "payments"}, nil, nil},
		{"policy on a listed cycle topic", with(policyProps(), KeyTopics, "b.orders"), false, nil, nil, ErrNoTopics},
		{"policy same cluster skips its own output", with(policyProps(), KeyTopics, "<unset>", KeyTopicsRegex, ".*", KeyTopicsExclude, "^$"), true,
			[]string{"a2.x", "c.payments", "heartbeats", "old.replica", "orders", "orders.replica", "payments"}, []string{"a.orders"}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := ParseConfig(tc.props)
			if err != nil {
				t.Fatal(err)
			}
			sel, err := selectTopics(cfg, src, tc.same)
			if tc.err != nil {
				if !errors.Is(err, tc.err) {
					t.Fatalf("err = %v, want %v", err, tc.err)
				}
				if retriable := tc.err == ErrMissingTopics || tc.err == ErrNoTopics; sdk.IsRetriable(err) != retriable {
					t.Errorf("retriable = %v, want %v", sdk.IsRetriable(err), retriable)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := sortedTopics(sel.sources); !slices.Equal(got, tc.want) {
				t.Errorf("selected %v, want %v", got, tc.want)
			}
			if !slices.Equal(sel.skipped, tc.skipped) {
				t.Errorf("skipped %v, want %v", sel.skipped, tc.skipped)
			}
		})
	}
}
