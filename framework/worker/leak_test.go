package worker_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/connectd/connectd/framework/worker"
	"github.com/connectd/connectd/internal/kafkatest"
)

// footprint is what a worker process holds that grows with the connectors
// it runs.
type footprint struct {
	threads    int            // OS threads (/proc/self/task): librdkafka clients own several each
	names      map[string]int // threads by name
	goroutines int
	plugins    int // child processes
	series     int // metric series labelled with a connector
}

func (f footprint) String() string {
	return fmt.Sprintf("%d threads %v, %d goroutines, %d plugin processes, %d connector metric series", f.threads, f.names, f.goroutines, f.plugins, f.series)
}

func measure(t *testing.T, reg prometheus.Gatherer) footprint {
	t.Helper()
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]int{}
	for _, task := range tasks {
		comm, _ := os.ReadFile(filepath.Join("/proc/self/task", task.Name(), "comm"))
		names[strings.TrimSpace(string(comm))]++
	}
	return footprint{threads: len(tasks), names: names, goroutines: runtime.NumGoroutine(), plugins: childProcesses(t), series: connectorSeries(t, reg)}
}

// childProcesses counts the live processes whose parent is this one.
func childProcesses(t *testing.T) int {
	t.Helper()
	stats, err := filepath.Glob("/proc/[0-9]*/stat")
	if err != nil {
		t.Fatal(err)
	}
	self := strconv.Itoa(os.Getpid())
	n := 0
	for _, path := range stats {
		raw, err := os.ReadFile(path)
		if err != nil {
			continue // exited meanwhile
		}
		// pid (comm) state ppid ...: comm may hold spaces, so split
		// after its closing parenthesis.
		s := string(raw)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(f) > 1 && f[1] == self && f[0] != "Z" {
			n++
		}
	}
	return n
}

func connectorSeries(t *testing.T, reg prometheus.Gatherer) int {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "connector" {
					n++
					break
				}
			}
		}
	}
	return n
}

// TestDeletedConnectorsReleaseEverything starts connectors of a source and
// a sink plugin with real plugin processes, stops them all the way the
// herder does when they are deleted, and checks that the worker returns to
// the footprint it had before: no goroutine, plugin process or
// metric series of theirs stays behind, and a second round adds no thread.
func TestDeletedConnectorsReleaseEverything(t *testing.T) {
	const pairs = 10 // a source and a sink connector each
	e := newEnv(t)
	topic := kafkatest.Topic(t, kafkatest.Partitions(2))
	cfg := e.config(true)
	cfg.TaskShutdownTimeout = 5 * time.Second
	reg := prometheus.NewRegistry()
	cfg.Metrics = reg
	w, st := e.start(cfg)
	dir := t.TempDir()

	// start runs n pairs and returns how to stop them.
	start := func(round string, n int) (stop func()) {
		t.Helper()
		var names []string
		var ids []worker.TaskID
		for i := range n {
			for kind, props := range map[string]map[string]string{
				"src":  datagenProps(topic, 1, 1_000_000_000),
				"sink": sinkProps(topic, filepath.Join(dir, fmt.Sprintf("%s-%d.out", round, i)), 1),
			} {
				name := fmt.Sprintf("%s-%s-%d", round, kind, i)
				if kind == "src" {
					props["max.interval"] = "100" // idle-ish: a record every ~50 ms
				}
				names = append(names, name)
				ids = append(ids, e.run(w, name, props)...)
			}
		}
		for _, id := range ids {
			st.waitFor(t, id.String(), worker.StateRunning, time.Minute)
		}
		return func() {
			t.Helper()
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			if err := w.StopTasks(ctx, ids); err != nil {
				t.Fatal(err)
			}
			for _, name := range names {
				if err := w.StopConnector(ctx, name); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	// One round first: what the first clients set up once per process
	// (librdkafka's global state, the plugin binaries' page cache) is not
	// per connector.
	start("warm", 1)()
	settle := func(want footprint, slack int) footprint {
		t.Helper()
		var got footprint
		kafkatest.Eventually(t, 30*time.Second, func() (bool, string) {
			got = measure(t, reg)
			ok := got.threads <= want.threads+slack && got.goroutines <= want.goroutines+slack &&
				got.plugins <= want.plugins && got.series <= want.series
			return ok, fmt.Sprintf("after deleting every connector the worker holds %v; before it held %v", got, want)
		})
		return got
	}
	base := settle(measure(t, reg), 1<<20)
	t.Logf("before: %v", base)

	// Go's runtime keeps the OS threads it started for blocking calls
	// (golang.org/issue/14592) and reuses them; ending them is not an
	// option here, because a plugin process started from a thread gets
	// SIGKILL (Pdeathsig) when that thread ends. So threads are held to a
	// second round: the idle threads of the first must serve it, and a
	// leak is several more per connector.
	start("load", pairs)()
	first := settle(footprint{threads: 1 << 20, goroutines: base.goroutines, plugins: base.plugins, series: base.series}, 4)
	t.Logf("after the first round: %v", first)
	stop := start("again", pairs)
	t.Logf("%d connectors running: %v", 2*pairs, measure(t, reg))
	stop()
	// A small slack: the runtime's own threads and goroutines (GC
	// workers, timers) come and go.
	after := settle(footprint{threads: first.threads, goroutines: base.goroutines, plugins: base.plugins, series: base.series}, 4)
	t.Logf("after: %v", after)
}
