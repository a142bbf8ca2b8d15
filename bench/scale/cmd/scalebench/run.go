package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"syscall"
	"time"

	"github.com/connectd/connectd/bench/internal/benchkit"
)

// Phases of a row.
const (
	phaseCreate  = "create"  // N connectors created on a fresh worker
	phaseRestart = "restart" // the worker SIGKILLed at the largest N and started again
	phaseDeleted = "deleted" // every connector deleted again
	// phaseReleased is the deleted worker measured again -release-wait
	// later: a Go worker's garbage waits for the runtime's periodic
	// collection (every 2 minutes when nothing else triggers one) before
	// its memory can go back to the system.
	phaseReleased = "deleted, later"
)

// row is one measurement of a worker's process tree.
type row struct {
	Phase string `json:"phase"`
	N     int    `json:"n"`
	// RunningSec is the time from the first POST (or from the restart) to
	// all RUNNING; absent when nothing had to start.
	RunningSec *float64 `json:"running_sec,omitempty"`
	RSSMB      float64  `json:"rss_mb"`
	PSSMB      float64  `json:"pss_mb"`
	Procs      int      `json:"procs"`
	Threads    int      `json:"threads"`
	CPUPct     float64  `json:"cpu_pct"` // of one core, over the window
	RESTP50Ms  float64  `json:"rest_p50_ms"`
	RESTMaxMs  float64  `json:"rest_max_ms"`
	// Survivors counts the processes of the killed worker's tree still
	// alive 30 s after its SIGKILL (restart rows only).
	Survivors int `json:"survivors,omitempty"`
}

// pass is one system's run through the N list.
type pass struct {
	System string `json:"system"`
	Rep    int    `json:"rep"`
	Rows   []row  `json:"rows"`
	// Events are the rebalances of the -workers mode.
	Events []event `json:"events,omitempty"`
	Err    string  `json:"error,omitempty"`
}

// settings are the measurement flags.
type settings struct {
	ns       []int
	settle   time.Duration // after all RUNNING, before measuring
	window   time.Duration // CPU sampling window
	requests int           // REST latency samples
	timeout  time.Duration // per wait for all RUNNING
	restart  bool
	release  time.Duration // from the deleted row to the "deleted, later" one (0: none)
}

// measure samples the worker's tree over the window, then times the REST
// API.
func measure(ctx context.Context, w *worker, set settings, phase string, n int, running time.Duration) (row, error) {
	return measureTree(ctx, w, []*worker{w}, set, phase, n, running)
}

// measureTree is measure over the process trees of several workers, w
// among them answering the REST requests.
func measureTree(ctx context.Context, w *worker, all []*worker, set settings, phase string, n int, running time.Duration) (row, error) {
	r := row{Phase: phase, N: n}
	if running > 0 {
		s := running.Seconds()
		r.RunningSec = &s
	}
	select {
	case <-ctx.Done():
		return r, ctx.Err()
	case <-time.After(set.settle):
	}
	var roots []int
	for _, x := range all {
		roots = append(roots, x.proc.Pid())
	}
	u0 := benchkit.TreeUsage(roots...)
	t0 := time.Now()
	select {
	case <-ctx.Done():
		return r, ctx.Err()
	case <-w.proc.Done():
		return r, fmt.Errorf("the worker exited")
	case <-time.After(set.window):
	}
	u1 := benchkit.TreeUsage(roots...)
	r.CPUPct = 100 * benchkit.CPUBetween(u0.CPU, u1.CPU).Seconds() / time.Since(t0).Seconds()
	r.RSSMB, r.PSSMB = float64(u1.RSS)/(1<<20), float64(u1.PSS)/(1<<20)
	r.Procs, r.Threads = u1.Procs, u1.Threads
	p50, mx, err := w.latency(ctx, set.requests)
	if err != nil {
		return r, err
	}
	r.RESTP50Ms, r.RESTMaxMs = float64(p50.Microseconds())/1000, float64(mx.Microseconds())/1000
	return r, nil
}

func (r row) String() string {
	s := fmt.Sprintf("%s N=%d: RSS %.0f MB, PSS %.0f MB, %d procs, %d threads, CPU %.1f %%, REST p50 %.1f ms max %.1f ms",
		r.Phase, r.N, r.RSSMB, r.PSSMB, r.Procs, r.Threads, r.CPUPct, r.RESTP50Ms, r.RESTMaxMs)
	if r.RunningSec != nil {
		s += fmt.Sprintf(", all RUNNING after %.1f s", *r.RunningSec)
	}
	return s
}

// runPass starts a worker of sys, grows it through set.ns, kills and
// restarts it at the largest N, deletes everything and measures each step.
func runPass(ctx context.Context, sys system, r *run, set settings) (rows []row, err error) {
	if err := prepare(ctx, r); err != nil {
		return nil, err
	}
	defer cleanup(r, sys)
	w, err := startWorker(ctx, sys, r)
	if err != nil {
		return nil, err
	}
	defer func() { w.proc.Stop(20 * time.Second) }()
	label := sys.name()
	created := 0
	for _, n := range set.ns {
		l := fmt.Sprintf("%s N=%d", label, n)
		var took time.Duration
		if n > created {
			log.Printf("%s: creating %d connectors", l, n-created)
			t0, err := w.create(l, created, n, sys.connectorConfig(r))
			if err != nil {
				return rows, err
			}
			created = n
			if took, err = w.waitRunning(ctx, l, n, "", t0, set.timeout); err != nil {
				return rows, err
			}
		}
		log.Printf("%s: measuring", l)
		m, err := measure(ctx, w, set, phaseCreate, n, took)
		if err != nil {
			return rows, fmt.Errorf("%s: %w", l, err)
		}
		log.Printf("%s: %s", label, m)
		rows = append(rows, m)
	}
	if set.restart && created > 0 {
		m, nw, err := killRestart(ctx, sys, r, w, created, set)
		if nw != nil {
			w = nw
		}
		if err != nil {
			return rows, err
		}
		log.Printf("%s: %s", label, m)
		rows = append(rows, m)
	}
	m, err := deleteAll(ctx, w, label, created, set)
	if err != nil {
		return rows, err
	}
	log.Printf("%s: %s", label, m)
	rows = append(rows, m)
	if set.release <= 0 {
		return rows, nil
	}
	log.Printf("%s: measuring again in %v", label, set.release)
	select {
	case <-ctx.Done():
		return rows, ctx.Err()
	case <-time.After(set.release):
	}
	if m, err = measure(ctx, w, set, phaseReleased, 0, 0); err != nil {
		return rows, err
	}
	log.Printf("%s: %s", label, m)
	return append(rows, m), nil
}

// prepare makes the pass's directory, empty file and topic.
func prepare(ctx context.Context, r *run) error {
	if err := os.MkdirAll(r.dir, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(r.file, nil, 0o644); err != nil {
		return err
	}
	return benchkit.CreateTopic(ctx, r.bootstrap, r.topic, 1)
}

func startWorker(ctx context.Context, sys system, r *run) (*worker, error) {
	port, err := benchkit.FreePort()
	if err != nil {
		return nil, err
	}
	log.Printf("%s: starting the worker on port %d", sys.name(), port)
	p, err := sys.startWorker(ctx, r, port)
	if err != nil {
		return nil, err
	}
	return newWorker(port, p), nil
}

// killRestart SIGKILLs the worker (alone, as a crash would), waits for its
// children to go, starts it again on another port (so that its worker id
// differs) and times until every connector runs on the new worker.
func killRestart(ctx context.Context, sys system, r *run, w *worker, n int, set settings) (row, *worker, error) {
	label := fmt.Sprintf("%s N=%d restart", sys.name(), n)
	st, err := w.statuses(ctx)
	if err != nil {
		return row{}, nil, err
	}
	_, oldID := running(st, "")
	tree := benchkit.Descendants([]int{w.proc.Pid()})
	log.Printf("%s: SIGKILL of the worker (%d processes in its tree)", label, len(tree))
	w.proc.Kill()
	survivors := waitGone(tree[1:], 30*time.Second)
	for _, pid := range tree[1:] {
		_ = syscall.Kill(pid, syscall.SIGKILL) // leave nothing to the next measurement
	}
	t0 := time.Now()
	nw, err := startWorker(ctx, sys, r)
	if err != nil {
		return row{}, nil, err
	}
	took, err := nw.waitRunning(ctx, label, n, oldID, t0, set.timeout)
	if err != nil {
		return row{}, nw, err
	}
	m, err := measure(ctx, nw, set, phaseRestart, n, took)
	m.Survivors = survivors
	return m, nw, err
}

// waitGone waits until none of pids is alive (or timeout) and returns how
// many still are.
func waitGone(pids []int, timeout time.Duration) int {
	deadline := time.Now().Add(timeout)
	for {
		alive := 0
		for _, pid := range pids {
			if _, ok := benchkit.ProcStat(pid); ok {
				alive++
			}
		}
		if alive == 0 || time.Now().After(deadline) {
			return alive
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// deleteAll deletes every connector, waits until the worker lists none and
// its process count has not fallen for 10 s, then measures.
func deleteAll(ctx context.Context, w *worker, label string, n int, set settings) (row, error) {
	log.Printf("%s: deleting %d connectors", label, n)
	if err := w.deleteAll(ctx, label, n); err != nil {
		return row{}, err
	}
	deadline := time.Now().Add(set.timeout)
	procs, since := -1, time.Now()
	for {
		st, err := w.statuses(ctx)
		if err == nil && len(st) == 0 {
			p := benchkit.TreeUsage(w.proc.Pid()).Procs
			if p != procs {
				procs, since = p, time.Now()
			} else if time.Since(since) >= 10*time.Second {
				break
			}
		}
		if time.Now().After(deadline) {
			return row{}, fmt.Errorf("%s: connectors or processes still there %v after deleting", label, set.timeout)
		}
		select {
		case <-ctx.Done():
			return row{}, ctx.Err()
		case <-time.After(time.Second):
		}
	}
	return measure(ctx, w, set, phaseDeleted, 0, 0)
}

// cleanup deletes the pass's topics.
func cleanup(r *run, sys system) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	topics, _ := benchkit.ListTopics(r.bootstrap, sys.topicPrefix(r))
	if err := benchkit.DeleteTopics(ctx, r.bootstrap, append(topics, r.topic)...); err != nil {
		log.Printf("%s: deleting the pass's topics: %v", sys.name(), err)
	}
	_ = os.Remove(r.file)
}
