package heartbeat

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/connectd/connectd/connectors/kafka/mirrorformat"
	"github.com/connectd/connectd/framework/sdk"
)

type taskCtx struct{ reg *prometheus.Registry }

func (taskCtx) Connector() string                    { return "hb" }
func (taskCtx) TaskID() int                          { return 0 }
func (taskCtx) Logger() *slog.Logger                 { return slog.New(slog.DiscardHandler) }
func (c taskCtx) Metrics() prometheus.Registerer     { return c.reg }
func (taskCtx) Offset(map[string]any) map[string]any { return nil }
func (taskCtx) Transactions() sdk.TransactionContext { return nil }
func newTaskCtx() taskCtx                            { return taskCtx{reg: prometheus.NewRegistry()} }
func props(kv ...string) map[string]string {
	p := map[string]string{"name": "hb", KeyTargetBootstrap: "127.0.0.1:1", KeySourceClusterAlias: "east", KeyTargetClusterAlias: "west"}
	for i := 0; i+1 < len(kv); i += 2 {
		p[kv[i]] = kv[i+1]
	}
	return p
}

func startTask(t *testing.T, p map[string]string) *Task {
	t.Helper()
	task := &Task{}
	if err := task.Start(t.Context(), newTaskCtx(), p); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = task.Stop(context.Background()) })
	return task
}

// TestTaskEmitsOnInterval: the first heartbeat comes at once, the next ones
// an interval apart, each in MM2's format with MM2's source partition and
// offset, and no Poll sleeps much longer than a second.
func TestTaskEmitsOnInterval(t *testing.T) {
	task := startTask(t, props())
	start := time.Now()
	var beats []time.Time
	for len(beats) < 3 {
		before := time.Now()
		recs, err := task.Poll(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if d := time.Since(before); d > maxPollWait+200*time.Millisecond {
			t.Fatalf("Poll slept %v", d)
		}
		for _, r := range recs {
			hb, err := mirrorformat.DecodeHeartbeat(r.Key.([]byte), r.Value.([]byte))
			if err != nil {
				t.Fatal(err)
			}
			if hb.SourceClusterAlias != "east" || hb.TargetClusterAlias != "west" || !r.Timestamp.Equal(hb.Time()) {
				t.Fatalf("heartbeat %+v at %v", hb, r.Timestamp)
			}
			if r.Topic != "heartbeats" || r.Partition != 0 || r.SourceOffset["offset"] != int64(0) ||
				r.SourcePartition["sourceClusterAlias"] != "east" || r.SourcePartition["targetClusterAlias"] != "west" {
				t.Fatalf("record %+v", r)
			}
			beats = append(beats, hb.Time())
		}
	}
	if first := beats[0].Sub(start); first > 200*time.Millisecond {
		t.Errorf("first heartbeat after %v, want at once", first)
	}
	for i := 1; i < len(beats); i++ {
		if gap := beats[i].Sub(beats[i-1]); gap < 990*time.Millisecond || gap > 1300*time.Millisecond {
			t.Errorf("heartbeats %d and %d are %v apart, want 1s", i-1, i, gap)
		}
	}
}

// TestLongIntervalPollsReturn: with a long interval Poll still returns
// within about a second with nothing, and Stop wakes a sleeping Poll.
func TestLongIntervalPollsReturn(t *testing.T) {
	task := startTask(t, props(KeyInterval, "60"))
	if recs, _ := task.Poll(t.Context()); len(recs) != 1 {
		t.Fatalf("first poll returned %d records", len(recs))
	}
	before := time.Now()
	if recs, _ := task.Poll(t.Context()); len(recs) != 0 {
		t.Fatalf("second poll returned %d records", len(recs))
	}
	if d := time.Since(before); d < maxPollWait-50*time.Millisecond || d > maxPollWait+300*time.Millisecond {
		t.Fatalf("idle poll took %v, want about %v", d, maxPollWait)
	}
	done := make(chan time.Duration)
	go func() {
		before := time.Now()
		_, _ = task.Poll(t.Context())
		done <- time.Since(before)
	}()
	time.Sleep(100 * time.Millisecond) // let Poll reach its timer
	if err := task.Stop(t.Context()); err != nil {
		t.Fatal(err)
	}
	if d := <-done; d > 500*time.Millisecond {
		t.Fatalf("Stop woke Poll after %v", d)
	}
}

// TestNoBurstAfterStall: a task that was not polled for several intervals
// emits one heartbeat, then waits a full interval again.
func TestNoBurstAfterStall(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	task := &Task{now: func() time.Time { return now }}
	if err := task.Start(t.Context(), newTaskCtx(), props()); err != nil {
		t.Fatal(err)
	}
	if recs, _ := task.Poll(t.Context()); len(recs) != 1 {
		t.Fatal("no first heartbeat")
	}
	now = now.Add(10 * time.Second) // a stall of ten intervals
	if recs, _ := task.Poll(t.Context()); len(recs) != 1 {
		t.Fatal("no heartbeat after the stall")
	}
	if want := now.Add(time.Second); !task.next.Equal(want) {
		t.Fatalf("next heartbeat due %v, want %v (one interval after the late one)", task.next, want)
	}
}

func TestConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		p    map[string]string
		want string
	}{
		{"alias contains separator", props(KeySourceClusterAlias, "us.east"), `would be read as coming from cluster "us"`},
		{"custom separator", props(KeyPolicySeparator, "_", KeyTargetClusterAlias, "eu_west"), "contains the replication.policy.separator"},
		{"interval zero", props(KeyInterval, "0"), KeyInterval},
		{"replication factor zero", props(KeyReplicationFactor, "0"), KeyReplicationFactor},
		{"unknown policy", props(KeyPolicyClass, "com.example.MyPolicy"), KeyPolicyClass},
		{"no target", props(KeyTargetBootstrap, ""), KeyTargetBootstrap},
		{"empty alias", props(KeySourceClusterAlias, ""), KeySourceClusterAlias},
		{"invalid utf-8", props(KeyTargetClusterAlias, "\xff"), "not valid UTF-8"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseConfig(tc.p)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
		})
	}
	cfg, err := ParseConfig(props(KeyPolicySeparator, "_", KeySourceClusterAlias, "us.east"))
	if err != nil || cfg.Topic != "heartbeats" || cfg.Interval != time.Second || cfg.ReplicationFactor != 3 || !cfg.Enabled {
		t.Fatalf("config %+v, %v", cfg, err)
	}
}

func TestDisabledHasNoTask(t *testing.T) {
	c := NewConnector()
	cfg, err := ParseConfig(props(KeyEnabled, "false"))
	if err != nil {
		t.Fatal(err)
	}
	c.cfg, c.props = cfg, props(KeyEnabled, "false")
	if tasks, err := c.TaskConfigs(t.Context(), 4); err != nil || len(tasks) != 0 {
		t.Fatalf("tasks %v, %v", tasks, err)
	}
	c.cfg.Enabled = true
	if tasks, err := c.TaskConfigs(t.Context(), 4); err != nil || len(tasks) != 1 {
		t.Fatalf("tasks %v, %v", tasks, err)
	}
}

// TestUnreachableTarget: a target that does not answer fails Start with a
// retriable error naming the topic and the target, within Start's bound.
func TestUnreachableTarget(t *testing.T) {
	cfg, err := ParseConfig(props(KeyTargetBootstrap, "127.0.0.1:1"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
	defer cancel()
	err = ensureTopic(ctx, cfg, slog.New(slog.DiscardHandler))
	if err == nil || !sdk.IsRetriable(err) || !strings.Contains(err.Error(), "creating heartbeats topic heartbeats on target 127.0.0.1:1") {
		t.Fatalf("error %v, want a retriable one naming topic and target", err)
	}
}
