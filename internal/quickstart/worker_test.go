package quickstart

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/connectd/connectd/connectors/aerospike"
	"github.com/connectd/connectd/connectors/aerospike/aerofake"
	"github.com/connectd/connectd/framework/sdk"
)

func TestWorkerTracker(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	for _, tc := range []struct {
		name string
		ups  []bool // one observation per second from t0
		want WorkerStatus
		text string // workerText of the last snapshot
	}{
		{"up all along", []bool{true, true, true}, WorkerStatus{Up: true}, ""},
		{"down from the start", []bool{false, false}, WorkerStatus{Since: at(0), Outages: 1}, "worker DOWN since 03:04:05 (1s)"},
		{"goes down", []bool{true, true, false, false, false}, WorkerStatus{Since: at(2), Outages: 1}, "worker DOWN since 03:04:07 (2s)"},
		{"comes back", []bool{true, false, false, false, true, true}, WorkerStatus{Up: true, Since: at(4), DownFor: 3 * time.Second, Outages: 1},
			"worker back since 03:04:09 after 3s down"},
		{"down again", []bool{true, false, true, false}, WorkerStatus{Since: at(3), DownFor: time.Second, Outages: 2}, "worker DOWN since 03:04:08 (0s)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var w workerTracker
			var s Snapshot
			for i, up := range tc.ups {
				s = Snapshot{At: at(i)}
				s.Worker = w.observe(s.At, up)
			}
			if s.Worker != tc.want {
				t.Errorf("status %+v, want %+v", s.Worker, tc.want)
			}
			if got := workerText(s); got != tc.text {
				t.Errorf("text %q, want %q", got, tc.text)
			}
		})
	}
}

// TestDisplaySaysWorkerDownAndBack renders the status block while the
// worker is down and after it is back: the block says so, and the counts
// read from Kafka and Aerospike stay.
func TestDisplaySaysWorkerDownAndBack(t *testing.T) {
	p, err := Load(repoFiles, resolver(quickstartEnv))
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	r := &renderer{out: &out, p: p}
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	var w workerTracker
	var conns []ConnectorState
	for _, c := range p.Connectors() {
		conns = append(conns, ConnectorState{Name: c.Name, State: stateUnreachable})
	}
	w.observe(now, true)
	down := Snapshot{At: now.Add(5 * time.Second), Connectors: conns, Applied: 40, Duplicates: 7, DuplicatesKnown: true, DuplicatesDurable: true}
	down.Worker = w.observe(now.Add(2*time.Second), workerUp(conns))
	r.render(down, p.Check(down), true)
	block := out.String()
	for _, want := range []string{"worker DOWN since 03:04:07 (3s)", "stay valid", "7 redelivered records skipped", "test.orders_stats record, kept across restarts"} {
		if !strings.Contains(block, want) {
			t.Errorf("block while down lacks %q:\n%s", want, block)
		}
	}
	out.Reset()
	back := down
	back.At = now.Add(9 * time.Second)
	back.Worker = w.observe(back.At, true)
	r.render(back, p.Check(back), true)
	if block := out.String(); !strings.Contains(block, "worker back since 03:04:14 after 7s down") {
		t.Errorf("block after the restart:\n%s", block)
	}
	if line := r.line(back, p.Check(back)); !strings.Contains(line, "worker back since") || !strings.Contains(line, "duplicates skipped 7") {
		t.Errorf("summary line %q", line)
	}
}

// sinkCtx is the task context the framework gives a sink task.
type sinkCtx struct {
	name string
	reg  *prometheus.Registry
}

func (c *sinkCtx) Connector() string                          { return c.name }
func (c *sinkCtx) TaskID() int                                { return 0 }
func (c *sinkCtx) Logger() *slog.Logger                       { return slog.New(slog.DiscardHandler) }
func (c *sinkCtx) Metrics() prometheus.Registerer             { return c.reg }
func (c *sinkCtx) ReportError(rec *sdk.SinkRecord, err error) {}

// TestDuplicatesSurviveARestart runs the AerospikeSink with the
// quickstart's settings against the Aerospike test server, stops it and
// starts a new task (a restarted worker's new plugin process) that is
// given records again: the watcher reads the duplicates from the sink's
// stats record, where they add up over both, while the new task's own
// counter only knows its share.
func TestDuplicatesSurviveARestart(t *testing.T) {
	p, err := Load(repoFiles, resolver(quickstartEnv))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	srv, err := aerofake.Start(ctx, aerofake.Config{Addr: "127.0.0.1:0", Namespaces: []aerofake.NamespaceConfig{{Name: p.Namespace}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	props := map[string]string{}
	for k, v := range p.Sink.Config {
		props[k] = v
	}
	props["aerospike.hosts"] = srv.Addr()
	records := func(from, to int64) []*sdk.SinkRecord {
		var out []*sdk.SinkRecord
		for off := from; off < to; off++ {
			out = append(out, &sdk.SinkRecord{
				Topic: p.SinkTopic, Offset: off, OriginalTopic: p.SinkTopic, OriginalOffset: off,
				Key: fmt.Sprintf("k%d", off%5), Value: map[string]any{"amount": int64(10), "count": int64(1)},
			})
		}
		return out
	}
	run := func(recs []*sdk.SinkRecord) *prometheus.Registry {
		tc := &sinkCtx{name: p.Sink.Name, reg: prometheus.NewRegistry()}
		task := (&aerospike.Connector{}).NewTask().(*aerospike.SinkTask)
		if err := task.Start(ctx, tc, props); err != nil {
			t.Fatal(err)
		}
		defer func() { _ = task.Stop(ctx) }()
		if err := task.Put(ctx, recs); err != nil {
			t.Fatal(err)
		}
		return tc.reg
	}
	run(records(0, 30))
	reg := run(records(20, 50)) // the restarted task: 20..29 again
	own := 0.0
	fams, _ := reg.Gather()
	for _, f := range fams {
		if f.GetName() == DuplicatesMetric {
			own = f.GetMetric()[0].GetCounter().GetValue()
		}
	}

	aero, err := newAerospikeReader(srv.Addr(), p.Namespace, p.Set)
	if err != nil {
		t.Fatal(err)
	}
	defer aero.close()
	applied, dups, found, err := aero.sinkStats(p.StatsSet, p.Sink.Name)
	if err != nil || !found {
		t.Fatalf("stats record: found %v, %v", found, err)
	}
	c, err := aero.scan()
	if err != nil {
		t.Fatal(err)
	}
	if applied != 50 || dups != 10 || c.applied != 50 {
		t.Errorf("stats record applied=%d duplicates=%d, count bins %d; want 50, 10 and 50", applied, dups, c.applied)
	}
	if own != 10 {
		t.Errorf("the restarted task's own counter = %v, want the 10 it skipped", own)
	}
	if _, _, found, err := aero.sinkStats(p.StatsSet, "no-such-connector"); found || err != nil {
		t.Errorf("a connector without a record: found %v, %v", found, err)
	}
}
