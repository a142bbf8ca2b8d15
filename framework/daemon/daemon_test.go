package daemon_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/connectd/connectd/framework/daemon"
	"github.com/connectd/connectd/framework/workerconfig"
	"github.com/connectd/connectd/internal/syncbuf"
)

func props(t *testing.T, extra map[string]string) *workerconfig.Config {
	t.Helper()
	raw := map[string]string{
		"bootstrap.servers":    "127.0.0.1:1",
		"group.id":             "daemon-test",
		"config.storage.topic": "daemon-test-configs",
		"offset.storage.topic": "daemon-test-offsets",
		"status.storage.topic": "daemon-test-status",
		"plugin.path":          t.TempDir(),
		"key.converter":        "org.apache.kafka.connect.json.JsonConverter",
		"value.converter":      "org.apache.kafka.connect.json.JsonConverter",
	}
	for k, v := range extra {
		if v == "" {
			delete(raw, k)
		} else {
			raw[k] = v
		}
	}
	cfg, err := workerconfig.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// An invalid setting stops Run before it touches Kafka, with the file and
// the key named.
func TestRunRefusesInvalidConfig(t *testing.T) {
	for _, tc := range []struct {
		name  string
		extra map[string]string
		want  string
	}{
		{"no plugin.path", map[string]string{"plugin.path": ""}, "invalid worker config w.properties: plugin.path: no plugin directory configured"},
		{"typo of a guarantee", map[string]string{"exactly.once.source.suport": "enabled"}, "exactly.once.source.suport"},
		{"missing plugin dir", map[string]string{"plugin.path": "/nonexistent/connectd-plugins"}, "invalid worker config w.properties:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stderr syncbuf.Buffer
			err := daemon.Run(context.Background(), daemon.Opts{Config: props(t, tc.extra), Path: "w.properties", Stderr: &stderr})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Run: %v, want an error containing %q; stderr %q", err, tc.want, stderr.String())
			}
		})
	}
}

// Cancelled before the internal topics are ready (a signal during
// start-up): Run says so and returns nil, the exit of a requested stop.
func TestRunStoppedBeforeTopics(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var stderr syncbuf.Buffer
	notes := []daemon.Note{{Level: slog.LevelDebug, Msg: "process note", Args: []any{"k", 1}}}
	err := daemon.Run(ctx, daemon.Opts{Config: props(t, map[string]string{"log.level": "DEBUG"}), Path: "w.properties", Stderr: &stderr, Notes: notes})
	if err != nil {
		t.Fatalf("Run: %v; stderr %q", err, stderr.String())
	}
	out := stderr.String()
	for _, want := range []string{
		"connectd worker: reading w.properties\n",
		"connectd worker: 0 connector plugins in ",
		`msg="process note" logger=connectd k=1`,
		"connectd worker: stopped (signal received) before the internal topics were ready\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("stderr lacks %q:\n%s", want, out)
		}
	}
}
