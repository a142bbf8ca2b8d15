package worker_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/connectd/connectd/framework/metrics"
	"github.com/connectd/connectd/framework/worker"
	"github.com/connectd/connectd/internal/kafkatest"
)

// floodCounter is the worker's log output in TestMisbehavingSharedPlugin:
// it counts the lines the test source's flood got into the log (they
// must be rate-limited) and passes the others to the test's log.
type floodCounter struct {
	t     testing.TB
	mu    sync.Mutex
	lines map[string]int // "stdout", "stderr", "log": flood lines logged
	done  bool
}

func newFloodCounter(t testing.TB) *floodCounter {
	c := &floodCounter{t: t, lines: map[string]int{}}
	t.Cleanup(func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.done = true
	})
	return c
}

func (c *floodCounter) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, stream := range []string{"stdout", "stderr", "log"} {
		if bytes.Contains(p, []byte("testsource: "+stream+" flood line")) {
			c.lines[stream]++
			return len(p), nil
		}
	}
	if !c.done {
		c.t.Log(strings.TrimRight(string(p), "\n"))
	}
	return len(p), nil
}

func (c *floodCounter) count(stream string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lines[stream]
}

// scraper GETs the worker's /metrics (the endpoint that calls into every
// plugin process) over HTTP until stopped, and records the slowest answer
// and any failure.
type scraper struct {
	mu      sync.Mutex
	n       int
	slowest time.Duration
	errs    []string
	stop    chan struct{}
	done    chan struct{}
}

func startScraper(t *testing.T, w *worker.Worker, reg *prometheus.Registry) *scraper {
	t.Helper()
	g, err := metrics.NewGatherer(reg, metrics.GathererOptions{})
	if err != nil {
		t.Fatal(err)
	}
	g.SetPlugins(func() []metrics.PluginTarget {
		var out []metrics.PluginTarget
		for _, p := range w.PluginProcesses() {
			out = append(out, metrics.PluginTarget{Connector: p.Connector, Plugin: p.Plugin, Source: p.Process})
		}
		return out
	})
	srv := httptest.NewServer(metrics.Handler(g, nil))
	s := &scraper{stop: make(chan struct{}), done: make(chan struct{})}
	client := &http.Client{Timeout: 20 * time.Second}
	go func() {
		defer close(s.done)
		for {
			select {
			case <-s.stop:
				return
			case <-time.After(200 * time.Millisecond):
			}
			start := time.Now()
			resp, err := client.Get(srv.URL + "/metrics")
			if err == nil {
				_, err = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if err == nil && resp.StatusCode != http.StatusOK {
					err = fmt.Errorf("status %s", resp.Status)
				}
			}
			s.mu.Lock()
			s.n++
			s.slowest = max(s.slowest, time.Since(start))
			if err != nil {
				s.errs = append(s.errs, err.Error())
			}
			s.mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		s.finish()
		srv.Close()
	})
	return s
}

// finish stops the scrapes and returns how many there were, the slowest
// and the failures.
func (s *scraper) finish() (int, time.Duration, []string) {
	select {
	case <-s.stop:
	default:
		close(s.stop)
	}
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n, s.slowest, s.errs
}

// pidWatch samples the worker's plugin processes of one plugin until
// stopped: every pid it ever saw, so that none is left behind.
func pidWatch(t *testing.T, w *worker.Worker, plugin string) func() []int {
	t.Helper()
	var (
		mu   sync.Mutex
		seen []int
	)
	sample := func() {
		mu.Lock()
		defer mu.Unlock()
		for _, p := range w.PluginProcesses() {
			if p.Plugin == plugin && !slices.Contains(seen, p.Process.Pid()) {
				seen = append(seen, p.Process.Pid())
			}
		}
	}
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		for {
			sample()
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	var once sync.Once
	finish := func() []int {
		once.Do(func() { close(stop); <-done })
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(seen)
	}
	t.Cleanup(func() { finish() })
	return finish
}

func testSourceProps(topic string, count int) map[string]string {
	return map[string]string{
		"connector.class": "TestSource", "tasks.max": "1", "topic": topic, "count": strconv.Itoa(count),
		"transaction.boundary": "interval", "transaction.boundary.interval.ms": "200",
		"key.converter":   "org.apache.kafka.connect.storage.StringConverter",
		"value.converter": "org.apache.kafka.connect.json.JsonConverter", "value.converter.schemas.enable": "false",
	}
}

// TestMisbehavingSharedPlugin runs, in one shared TestSource process, a
// well-behaved connector and one that misbehaves (testsource's misbehave
// key), plus a datagen connector in a process of its own, for each
// misbehaviour. A misbehaviour that takes the process down fails the
// tasks of that process only, each FAILED with why, and they restart with
// backoff; one that does not (a flood) fails nothing and is rate-limited.
// Meanwhile the datagen connector delivers every record exactly once from
// its untouched process, and /metrics (which calls into every plugin
// process) answers. Once the bad connector is deleted, no process of it
// is left and the good connector runs again (in a fresh process when the
// old one died) and delivers every record exactly once.
func TestMisbehavingSharedPlugin(t *testing.T) {
	for _, tc := range []struct {
		mode  string
		after int
		// trace is what the FAILED tasks' traces say; "" when the
		// misbehaviour must fail nothing.
		trace string
	}{
		{mode: "die-at-start", trace: "misbehave=die-at-start"},
		{mode: "exit", after: 300, trace: "misbehave=exit"},
		{mode: "garbage", after: 300, trace: "after the worker closed its data channel: data channel protocol violation"},
		{mode: "flood", after: 300},
		{mode: "leak", after: 300, trace: "out of memory"},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			runMisbehaving(t, tc.mode, tc.after, tc.trace)
		})
	}
}

func runMisbehaving(t *testing.T, mode string, after int, trace string) {
	e := newEnv(t)
	cfg := e.config(true)
	logs := newFloodCounter(t)
	log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	cfg.Logger, cfg.PluginLaunch.Logger = log, log.With("src", "plugin")
	reg := prometheus.NewRegistry()
	cfg.Metrics = reg
	// This worker is the cluster: it owns every task, as a herder would
	// answer. A plugin crash can leave the bad task's abort failing
	// fatally (INVALID_TXN_STATE); without an owner check such a task is
	// never restarted, and the test waits for restarts.
	cfg.OwnsTask = func(context.Context, worker.TaskID) (bool, error) { return true, nil }
	began := time.Now()
	w, st := e.start(cfg)
	scrapes := startScraper(t, w, reg)

	const goodCount, otherCount = 3000, 5000
	goodTopic, otherTopic, badTopic := kafkatest.Topic(t, kafkatest.Partitions(2)), kafkatest.Topic(t, kafkatest.Partitions(2)), kafkatest.Topic(t)
	good, bad, other := kafkatest.UniqueName(t, "good"), kafkatest.UniqueName(t, "bad"), kafkatest.UniqueName(t, "other")
	goodProps := testSourceProps(goodTopic, goodCount)
	goodProps["poll.size"] = "10"
	// Paced (about a record a millisecond), so that the other plugin's
	// connector is still producing while the bad one misbehaves.
	otherProps := datagenProps(otherTopic, 1, otherCount)
	otherProps["max.interval"] = "1"
	otherProps["transaction.boundary"], otherProps["transaction.boundary.interval.ms"] = "interval", "200"
	e.run(w, good, goodProps)
	e.run(w, other, otherProps)
	st.waitFor(t, good+"-0", worker.StateRunning, time.Minute)
	st.waitFor(t, other+"-0", worker.StateRunning, time.Minute)
	pids := pluginPids(w)
	if len(pids["TestSource"]) != 1 || len(pids["DatagenSource"]) != 1 {
		t.Fatalf("plugin processes %v, want one TestSource and one DatagenSource", pids)
	}
	firstPid, otherPid := pids["TestSource"][0], pids["DatagenSource"][0]
	seenPids := pidWatch(t, w, "TestSource")

	badProps := testSourceProps(badTopic, 1_000_000)
	badProps["poll.size"] = "10"
	badProps["misbehave"], badProps["misbehave.after"] = mode, strconv.Itoa(after)
	otherBefore := len(committedNow(t, otherTopic))
	badIDs := e.run(w, bad, badProps)
	badTask := bad + "-0"

	if trace != "" {
		// The bad task fails with why, is restarted with backoff, and
		// fails again; the good task of its process fails with it.
		kafkatest.Eventually(t, 2*time.Minute, func() (bool, string) {
			_, first, ok := st.find(badTask, worker.StateFailed, 0)
			if ok {
				_, _, ok = st.find(badTask, worker.StateFailed, first+1)
			}
			return ok, "the bad task did not fail twice; events:" + st.String()
		})
		failed, first, _ := st.find(badTask, worker.StateFailed, 0)
		if !strings.Contains(failed.trace, trace) {
			t.Errorf("the bad task's trace does not say %q:\n%s", trace, failed.trace)
		}
		restart, _, ok := st.find(badTask, worker.StateRestarting, first+1)
		if !ok {
			t.Errorf("the bad task failed again without a restart; events:%s", st)
		} else if gap := restart.at.Sub(failed.at); gap < cfg.RestartBackoffInitial/2 {
			t.Errorf("the bad task restarted %s after it failed, backoff is %s", gap, cfg.RestartBackoffInitial)
		}
		goodFailed := st.waitFor(t, good+"-0", worker.StateFailed, time.Minute)
		if !strings.Contains(goodFailed.trace, "exited") && !strings.Contains(goodFailed.trace, "data channel") {
			t.Errorf("the good task's trace does not say its process went away:\n%s", goodFailed.trace)
		}
		t.Logf("bad task's trace: %s\ngood task's trace: %s", firstLine(failed.trace), firstLine(goodFailed.trace))
	} else {
		// A flood breaks nothing: wait for it to go on for a while.
		kafkatest.Eventually(t, time.Minute, func() (bool, string) {
			drops := metricSum(t, cfg, "connectd_plugin_log_lines_dropped_total", map[string]string{"connector": "TestSource"})
			return drops > 5000, fmt.Sprintf("%.0f flood lines dropped; logged: %d of stdout, %d of os.Stderr, %d of the logger",
				drops, logs.count("stdout"), logs.count("stderr"), logs.count("log"))
		})
	}

	// The other plugin's connector kept delivering meanwhile.
	if now := len(committedNow(t, otherTopic)); now <= otherBefore && now < otherCount {
		t.Errorf("the other plugin's connector delivered nothing while the bad one misbehaved (%d records before, %d after)", otherBefore, now)
	}

	// Delete the bad connector.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := w.StopTasks(ctx, badIDs); err != nil {
		t.Fatal(err)
	}
	if err := w.StopConnector(ctx, bad); err != nil && !errors.Is(err, worker.ErrUnknownConnector) {
		t.Fatal(err)
	}

	// The good connector runs again, alone in a live TestSource process
	// (a fresh one if its first died), and every other process that
	// served TestSource is gone.
	var final int
	kafkatest.Eventually(t, time.Minute, func() (bool, string) {
		ev, _, ok := lastTaskEvent(st, good+"-0")
		if !ok || ev.state != worker.StateRunning {
			return false, "the good task is not RUNNING; events:" + st.String()
		}
		procs := slices.DeleteFunc(w.PluginProcesses(), func(p worker.PluginProcess) bool { return p.Plugin != "TestSource" })
		if len(procs) != 1 || !slices.Equal(procs[0].Conns, []string{good}) {
			return false, fmt.Sprintf("TestSource processes %+v, want one running only %s", procs, good)
		}
		final = procs[0].Process.Pid()
		return true, ""
	})
	if trace != "" && final == firstPid {
		t.Errorf("the good connector still runs in process %d, which its tasks failed with", firstPid)
	}
	if trace == "" && final != firstPid {
		t.Errorf("the flood replaced the shared process %d with %d", firstPid, final)
	}
	kafkatest.Eventually(t, 30*time.Second, func() (bool, string) {
		var left []int
		for _, pid := range seenPids() {
			if pid != final && alive(pid) {
				left = append(left, pid)
			}
		}
		return len(left) == 0, fmt.Sprintf("TestSource processes left behind: %v", left)
	})

	checkExactlyOnce(t, readCommitted(t, goodTopic, goodCount, 2*time.Minute), 1, goodCount)
	checkExactlyOnce(t, readCommitted(t, otherTopic, otherCount, 2*time.Minute), 1, otherCount)
	if ev, _, ok := st.find(other+"-0", worker.StateFailed, 0); ok {
		t.Errorf("the other plugin's task failed: %s", ev.trace)
	}
	if now := pluginPids(w)["DatagenSource"]; !slices.Equal(now, []int{otherPid}) {
		t.Errorf("DatagenSource processes %v, want %d untouched", now, otherPid)
	}
	if trace == "" {
		for _, task := range []string{good + "-0", badTask} {
			if ev, _, ok := st.find(task, worker.StateFailed, 0); ok {
				t.Errorf("task %s failed under a flood: %s", task, ev.trace)
			}
		}
		// Rate-limited: at most the default 1000 lines a second (and a
		// second's burst) got into the log, from both streams together.
		secs := time.Since(began).Seconds() + 1
		if n := logs.count("stdout") + logs.count("stderr") + logs.count("log"); float64(n) > 1000*secs {
			t.Errorf("%d flood lines (stdout %d, os.Stderr %d, logger %d) logged in %.0f s: not rate-limited",
				n, logs.count("stdout"), logs.count("stderr"), logs.count("log"), secs)
		}
	}
	n, slowest, errs := scrapes.finish()
	if len(errs) > 0 || n < 3 || slowest > 10*time.Second {
		t.Errorf("/metrics during the misbehaviour: %d scrapes, slowest %s, failures %v", n, slowest, errs)
	}
	t.Logf("%s: %d scrapes of /metrics meanwhile, slowest %s; TestSource processes %v, last %d", mode, n, slowest, seenPids(), final)
}
