package heartbeat_test

import (
	"context"
	"testing"
	"time"

	"github.com/connectd/connectd/framework/chain"
	"github.com/connectd/connectd/plugins/host"
	"github.com/connectd/connectd/plugins/plugintest"
)

// TestPluginValidate: through the plugin binary, a valid configuration has
// no error and each bad one reports on the key at fault. (The SDK's
// SourceSuite expects a new source offset per record, while a heartbeat's
// offset is always MM2's {"offset":0}; the worker tests cover the rest.)
func TestPluginValidate(t *testing.T) {
	bin := builder.Build(t, heartbeatPkg)
	env := plugintest.Install(t, bin, host.LaunchOptions{})
	p := env.Launch(t)
	good := map[string]string{
		"name": "hb", "connector.class": "KafkaHeartbeatSource", "tasks.max": "1",
		"target.bootstrap.servers": "127.0.0.1:9092", "source.cluster.alias": "east", "target.cluster.alias": "west",
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := p.Validate(ctx, good, chain.ByteArrayDefaults())
	if err != nil || res.ErrorCount != 0 {
		t.Fatalf("valid config: %v %+v", err, res)
	}
	for _, tc := range []struct{ name, key, value string }{
		{"alias with separator", "source.cluster.alias", "us.east"},
		{"zero interval", "emit.heartbeats.interval.seconds", "0"},
		{"interval not a number", "emit.heartbeats.interval.seconds", "often"},
		{"zero replication factor", "heartbeats.topic.replication.factor", "0"},
		{"custom policy", "replication.policy.class", "com.example.Policy"},
		{"no target", "target.bootstrap.servers", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			props := map[string]string{}
			for k, v := range good {
				props[k] = v
			}
			props[tc.key] = tc.value
			if tc.value == "" {
				delete(props, tc.key)
			}
			res, err := p.Validate(ctx, props, chain.ByteArrayDefaults())
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range res.Configs {
				if c.Value.Name == tc.key && len(c.Value.Errors) > 0 {
					t.Logf("%s: %v", tc.key, c.Value.Errors)
					return
				}
			}
			t.Fatalf("no error on %s: %+v", tc.key, res.Configs)
		})
	}
}
