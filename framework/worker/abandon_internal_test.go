package worker

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/connectd/connectd/plugins/host"
)

// taskStates records TaskState calls.
type taskStates struct {
	mu  sync.Mutex
	got map[TaskID][]State
}

func (s *taskStates) ConnectorState(string, State, string) {}
func (s *taskStates) TaskState(id TaskID, st State, _ string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.got[id] = append(s.got[id], st)
}

// A task runtime the worker stopped waiting for must not publish a state
// when it finally ends: its successor owns the status by then. One that
// ends within the grace period still reports. The chaos soak found the
// stale UNASSIGNED of an abandoned sink task hiding its running successor
// for the rest of the run.
func TestAbandonedTaskReportsNothing(t *testing.T) {
	rec := &taskStates{got: map[TaskID][]State{}}
	cat, err := host.OpenCatalog(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	w, err := New(context.Background(), Config{
		WorkerID: "test", BootstrapServers: "127.0.0.1:9", TaskShutdownTimeout: 10 * time.Millisecond,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Metrics: prometheus.NewRegistry(), Plugins: cat,
	}, rec)
	if err != nil {
		t.Fatal(err)
	}
	runtime := func(task int) *taskRuntime {
		rt := w.newTaskRuntime(TaskID{Connector: "c", Task: task}, map[string]string{}, map[string]string{}, TargetStarted)
		rt.stop, rt.hardCancel = func() {}, func() {}
		return rt
	}
	quick, stuck := runtime(0), runtime(1)
	go func() {
		time.Sleep(100 * time.Millisecond) // past the shutdown timeout, within the grace period
		quick.report(StateFailed, "stopped late")
		close(quick.done)
	}()
	w.stopRuntimes(context.Background(), []*taskRuntime{quick, stuck})
	if quick.abandoned.Load() || !stuck.abandoned.Load() {
		t.Fatalf("abandoned: quick %v, stuck %v; want false, true", quick.abandoned.Load(), stuck.abandoned.Load())
	}
	stuck.report(StateFailed, "stopped too late") // what an incarnation reports as it ends, late
	stuck.report(StateUnassigned, "")
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if got := rec.got[quick.id]; len(got) != 1 || got[0] != StateFailed {
		t.Errorf("the task that stopped within the grace period reported %v, want [FAILED]", got)
	}
	if got := rec.got[stuck.id]; len(got) != 0 {
		t.Errorf("the abandoned task reported %v, want nothing", got)
	}
}
