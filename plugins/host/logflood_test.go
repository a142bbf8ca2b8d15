package host_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/connectd/connectd/framework/chain"
	"github.com/connectd/connectd/plugins/host"
	"github.com/connectd/connectd/plugins/internal/testconnectors"
)

// gateWriter is a log output that blocks every write until opened, like a
// log shipper that stopped reading.
type gateWriter struct {
	open chan struct{}
	once sync.Once
	mu   sync.Mutex
	buf  bytes.Buffer
}

func (g *gateWriter) release() { g.once.Do(func() { close(g.open) }) }

func (g *gateWriter) Write(p []byte) (int, error) {
	<-g.open
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.buf.Write(p)
}

func (g *gateWriter) lines() []map[string]any {
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(g.buf.String()), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(l), &m) == nil {
			out = append(out, m)
		}
	}
	return out
}

// A plugin that floods its log while its log output is stalled keeps
// delivering records: the merged lines are rate-limited, the excess is
// dropped and counted, and every line the plugin wrote is either logged or
// counted as dropped.
func TestLogFloodIsRateLimitedWithoutStallingTheTask(t *testing.T) {
	const (
		records   = 3000
		batch     = 100
		perRecord = 20
		rate      = 300
	)
	out := &gateWriter{open: make(chan struct{})}
	var dropped atomic.Int64
	opts := host.LaunchOptions{
		Logger:            slog.New(slog.NewJSONHandler(out, nil)),
		Connector:         "flood",
		LogLinesPerSecond: rate,
		OnLogDropped:      func(n int) { dropped.Add(int64(n)) },
	}
	start := time.Now()
	_, p := launch(t, "source", opts)
	t.Cleanup(out.release) // runs first: a failed test must not leave the plugin blocked
	task, err := p.StartSourceTask(ctxT(t), host.SourceTaskStart{Connector: "flood", Defaults: chain.ByteArrayDefaults(), Props: map[string]string{
		testconnectors.SrcTopic: "t", testconnectors.SrcRecords: "3000", testconnectors.SrcBatch: "100",
		testconnectors.SrcSize: "16", testconnectors.SrcMode: "log-flood", testconnectors.SrcFloodLines: "20",
	}})
	if err != nil {
		t.Fatal(err)
	}
	// Every record arrives while the log output is blocked: the plugin
	// never waits for its stderr to be read. (Without the queue the pipe
	// fills after a few hundred lines and Poll blocks in its next log call.)
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	defer cancel()
	for got := 0; got < records; {
		b, err := task.Next(ctx)
		if err != nil {
			t.Fatalf("after %d records: %v", got, err)
		}
		got += len(b.Records)
	}
	if err := task.Stop(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	out.release()

	flood := func() (n int) {
		for _, l := range out.lines() {
			if l["msg"] == testconnectors.FloodMessage {
				n++
			}
		}
		return n
	}
	// Every flood line is accounted for: logged or dropped. Other lines
	// (start-up, the drop summary) are not dropped while tokens remain;
	// the flood leaves none, so wait for the books to balance on flood
	// lines alone, allowing the few non-flood lines that may be dropped.
	const total = records * perRecord
	waitFor(t, func() bool { return int64(flood())+dropped.Load() >= total })
	elapsed := time.Since(start)
	logged := flood()
	if extra := int64(logged) + dropped.Load() - total; extra < 0 || extra > 5 {
		t.Fatalf("logged %d + dropped %d flood lines, the plugin wrote %d", logged, dropped.Load(), total)
	}
	// At most one second's burst plus the rate over the run got through.
	if limit := rate + int(elapsed.Seconds()*rate) + 1; logged > limit {
		t.Fatalf("%d flood lines logged in %v; the limit allows at most %d", logged, elapsed, limit)
	}
	if logged < rate/2 {
		t.Fatalf("only %d flood lines logged: the limiter dropped lines it had tokens for", logged)
	}
	// The drop is reported in the log too, with the connector and plugin.
	waitFor(t, func() bool {
		for _, l := range out.lines() {
			if strings.HasPrefix(l["msg"].(string), "plugin log lines dropped") {
				return l["connector"] == "flood" && l["dropped"].(float64) > 0
			}
		}
		return false
	})
	t.Logf("%d flood lines: %d logged, %d dropped in %v", total, logged, dropped.Load(), elapsed.Round(time.Millisecond))
}
