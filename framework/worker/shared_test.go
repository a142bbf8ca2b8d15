package worker_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/connectd/connectd/framework/configdef"
	"github.com/connectd/connectd/framework/worker"
	"github.com/connectd/connectd/internal/kafkatest"
)

// pluginPids returns the pids of the worker's plugin processes by plugin
// class, each process once.
func pluginPids(w *worker.Worker) map[string][]int {
	out := map[string][]int{}
	for _, p := range w.PluginProcesses() {
		out[p.Plugin] = append(out[p.Plugin], p.Process.Pid())
	}
	return out
}

// alive says whether a process with that pid still exists (and is not a
// zombie, which the host reaps).
func alive(pid int) bool {
	return syscall.Kill(pid, 0) == nil
}

// Connectors of one plugin share one process on a worker; a connector with
// plugin.isolation=connector gets its own; another plugin has its own; and
// once every connector is deleted no plugin process is left.
func TestSharedPluginProcesses(t *testing.T) {
	e := newEnv(t)
	cfg := e.config(false)
	w, st := e.start(cfg)
	topic := kafkatest.Topic(t, kafkatest.Partitions(2))
	shared := []string{kafkatest.UniqueName(t, "a"), kafkatest.UniqueName(t, "b")}
	own := kafkatest.UniqueName(t, "own")
	sink := kafkatest.UniqueName(t, "sink")
	var ids []worker.TaskID
	for _, name := range shared {
		ids = append(ids, e.run(w, name, datagenProps(topic, 2, 100_000_000))...)
	}
	ownProps := datagenProps(topic, 1, 100_000_000)
	ownProps["plugin.isolation"] = "connector"
	ids = append(ids, e.run(w, own, ownProps)...)
	ids = append(ids, e.run(w, sink, sinkProps(topic, filepath.Join(t.TempDir(), "out"), 1))...)
	for _, id := range ids {
		st.waitFor(t, id.String(), worker.StateRunning, time.Minute)
	}

	pids := pluginPids(w)
	if len(pids["DatagenSource"]) != 2 || len(pids["TestFileSink"]) != 1 || len(pids) != 2 {
		t.Fatalf("plugin processes by plugin %v, want 2 of DatagenSource (shared, isolated) and 1 of TestFileSink", pids)
	}
	for _, p := range w.PluginProcesses() {
		want := shared
		switch {
		case p.Connector == own:
			want = []string{own}
		case p.Plugin == "TestFileSink":
			want = []string{sink}
		}
		slices.Sort(want)
		if !slices.Equal(p.Conns, want) {
			t.Errorf("process %d of %s (own connector %q) runs %v, want %v", p.Process.Pid(), p.Plugin, p.Connector, p.Conns, want)
		}
	}
	for _, name := range append(shared, own) {
		if v := w.PluginVersion(name); v == "" {
			t.Errorf("PluginVersion(%s) is empty", name)
		}
	}
	// Validation uses the running shared process (no extra one is left).
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := w.Validate(ctx, map[string]string{"name": "v", "connector.class": "DatagenSource", "kafka.topic": topic, "quickstart": "counter", "plugin.isolation": "nope"})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(res.Configs, func(c configdef.ConfigInfo) bool {
		return c.Value.Name == "plugin.isolation" && len(c.Value.Errors) > 0
	}) {
		t.Errorf("validate accepted plugin.isolation=nope: %+v", res)
	}

	var all []int
	for _, ps := range pids {
		all = append(all, ps...)
	}
	if err := w.StopTasks(ctx, ids); err != nil {
		t.Fatal(err)
	}
	for _, name := range append(append(shared, own), sink) {
		if err := w.StopConnector(ctx, name); err != nil && !errors.Is(err, worker.ErrUnknownConnector) {
			t.Fatal(err)
		}
	}
	kafkatest.Eventually(t, 30*time.Second, func() (bool, string) {
		var left []int
		for _, pid := range all {
			if alive(pid) {
				left = append(left, pid)
			}
		}
		return len(left) == 0 && len(w.PluginProcesses()) == 0,
			fmt.Sprintf("plugin processes left after every connector was deleted: pids %v, %+v", left, w.PluginProcesses())
	})
}

// A sink task hung in Put does not hold up the other tasks of its plugin
// process: the call times out, the task fails and is restarted in the same
// process (its stuck predecessor abandoned there), while another
// connector's task of the same process delivers all its records.
func TestHungTaskDoesNotBlockSharedProcess(t *testing.T) {
	e := newEnv(t)
	cfg := e.config(false)
	cfg.PluginLaunch.CallTimeout = 2 * time.Second
	w, st := e.start(cfg)
	topic := kafkatest.Topic(t, kafkatest.Partitions(2))
	const n = 2000
	produceInput(t, topic, 2, n, jsonValue)

	hung, fine := kafkatest.UniqueName(t, "hung"), kafkatest.UniqueName(t, "fine")
	hungProps := sinkProps(topic, filepath.Join(t.TempDir(), "hung"), 1)
	hungProps["put.delay.ms"] = "600000"
	e.run(w, hung, hungProps)
	failed := st.waitFor(t, hung+"-0", worker.StateFailed, time.Minute)
	t.Logf("hung task's trace: %s", firstLine(failed.trace))

	out := filepath.Join(t.TempDir(), "fine")
	e.run(w, fine, sinkProps(topic, out, 1))
	kafkatest.Eventually(t, time.Minute, func() (bool, string) {
		got := 0
		for _, offs := range applied(t, out) {
			got += len(offs)
		}
		return got == n, fmt.Sprintf("the other connector's task applied %d of %d records", got, n)
	})
	// Restarted in the same process, and failed again.
	kafkatest.Eventually(t, time.Minute, func() (bool, string) {
		_, first, _ := st.find(hung+"-0", worker.StateFailed, 0)
		_, again, ok := st.find(hung+"-0", worker.StateRunning, first+1)
		if ok {
			_, _, ok = st.find(hung+"-0", worker.StateFailed, again+1)
		}
		return ok, "the hung task did not run and fail again; events:" + st.String()
	})
	if pids := pluginPids(w)["TestFileSink"]; len(pids) != 1 {
		t.Errorf("TestFileSink processes %v, want one shared", pids)
	}
}

// At-least-once source tasks of connectors with plugin.isolation=plugin
// write through one producer per worker (connectd_worker_task_producers),
// each task still gets every delivery report of its own records and
// commits its own offsets; a plugin.isolation=connector connector's task
// has its own producer; and the last task to stop closes them.
func TestSourceTasksShareAProducer(t *testing.T) {
	e := newEnv(t)
	cfg := e.config(false)
	w, st := e.start(cfg)
	const perTask = 3000
	type conn struct {
		name, topic string
		tasks       int
	}
	var conns []conn
	for i := range 3 {
		conns = append(conns, conn{kafkatest.UniqueName(t, fmt.Sprint("s", i)), kafkatest.Topic(t, kafkatest.Partitions(2)), 2})
	}
	own := conn{kafkatest.UniqueName(t, "own"), kafkatest.Topic(t, kafkatest.Partitions(2)), 1}
	var ids []worker.TaskID
	for _, c := range append(conns, own) {
		props := datagenProps(c.topic, c.tasks, perTask)
		if c == own {
			props["plugin.isolation"] = "connector"
		}
		ids = append(ids, e.run(w, c.name, props)...)
	}
	for _, id := range ids {
		st.waitFor(t, id.String(), worker.StateRunning, time.Minute)
	}
	reg := cfg.Metrics.(prometheus.Gatherer)
	if got := gaugeValue(t, reg, "connectd_worker_task_producers"); got != 2 {
		t.Errorf("connectd_worker_task_producers = %v with 7 at-least-once tasks of which 1 isolated, want 2 (one shared, one own)", got)
	}
	for _, c := range append(conns, own) {
		checkExactlyOnce(t, readCommitted(t, c.topic, c.tasks*perTask, time.Minute), c.tasks, perTask)
	}
	for _, id := range ids {
		kafkatest.Eventually(t, 30*time.Second, func() (bool, string) {
			n := metricSum(t, cfg, "connectd_task_offset_commits_total", map[string]string{"connector": id.Connector, "task": fmt.Sprint(id.Task), "result": "success"})
			return n > 0, fmt.Sprintf("task %s committed no offsets through the shared producer", id)
		})
	}

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := w.StopTasks(ctx, ids[:1]); err != nil {
		t.Fatal(err)
	}
	if got := gaugeValue(t, reg, "connectd_worker_task_producers"); got != 2 {
		t.Errorf("connectd_worker_task_producers = %v after one of the sharing tasks stopped, want 2", got)
	}
	if err := w.StopTasks(ctx, ids[1:]); err != nil {
		t.Fatal(err)
	}
	if got := gaugeValue(t, reg, "connectd_worker_task_producers"); got != 0 {
		t.Errorf("connectd_worker_task_producers = %v after every task stopped, want 0", got)
	}
}
