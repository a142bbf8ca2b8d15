package kafka

import (
	"strings"
	"testing"
)

func TestOffsetSyncConfig(t *testing.T) {
	cases := []struct {
		name    string
		props   map[string]string
		enabled bool
		lagMax  int64
		topic   string
		count   bool
		err     string
	}{
		{name: "defaults", props: baseProps(), enabled: true, lagMax: 100, topic: "mm2-offset-syncs.A.internal", count: true},
		{name: "off", props: with(baseProps(), KeyEmitOffsetSyncs, "false"), lagMax: 100, topic: "mm2-offset-syncs.A.internal", count: true},
		{name: "lag", props: with(baseProps(), KeyOffsetLagMax, "7", keyPolicySeparator, "_"), enabled: true, lagMax: 7, topic: "mm2-offset-syncs_A_internal", count: true},
		{name: "transforms count only batch starts", props: with(baseProps(), "transforms", "f"), enabled: true, lagMax: 100, topic: "mm2-offset-syncs.A.internal"},
		{name: "key-hash has no pairs", props: with(baseProps(), KeyPartitionMapping, MappingKeyHash), lagMax: 100, topic: "mm2-offset-syncs.A.internal", count: true},
		{name: "source location", props: with(baseProps(), KeyOffsetSyncsLocation, "source"), err: "only target is supported"},
		{name: "bad lag", props: with(baseProps(), KeyOffsetLagMax, "0"), err: KeyOffsetLagMax},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := ParseConfig(c.props)
			if err == nil {
				var sc syncConfig
				sc, err = parseSyncConfig(c.props, cfg, "A")
				if err == nil {
					if sc.enabled != c.enabled || sc.lagMax != c.lagMax || sc.topic != c.topic || sc.countable != c.count {
						t.Errorf("got %+v", sc)
					}
				}
			}
			if c.err == "" && err != nil {
				t.Fatal(err)
			}
			if c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)) {
				t.Fatalf("err = %v, want %q", err, c.err)
			}
		})
	}
	s := &syncer{cfg: syncConfig{lagMax: 100}}
	if s.budget() != 25 || s.cadence() != 75 {
		t.Errorf("budget %d, cadence %d; want 25, 75", s.budget(), s.cadence())
	}
	s.cfg.lagMax = 1
	if s.budget() != 1 || s.cadence() != 1 {
		t.Errorf("lagMax 1: budget %d, cadence %d; want 1, 1", s.budget(), s.cadence())
	}
}
