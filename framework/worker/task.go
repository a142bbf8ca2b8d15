package worker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"
)

// runner is one incarnation of a task. run returns when the task ends:
// after ctx is cancelled (a graceful stop: it commits what it can and
// returns nil) or when it fails. ctl.hard is cancelled when the graceful
// stop time is over; blocking calls use it so that run returns promptly.
type runner interface {
	run(ctx context.Context, ctl *taskControl) error
}

// noRestartError marks a failure that must not be retried automatically:
// a fenced exactly-once task would fight its successor for the
// transactional id. fenced says the producer was fenced; fatal says it
// failed fatally otherwise (librdkafka cannot use it again, and a
// successor may exist). Config.OwnsTask may clear either: the cluster
// still assigns the task here, so no successor exists.
type noRestartError struct {
	err    error
	fenced bool
	fatal  bool
}

func (e *noRestartError) Error() string { return e.err.Error() }
func (e *noRestartError) Unwrap() error { return e.err }

// taskControl is how a runner learns about target-state changes and
// reports its state.
type taskControl struct {
	hard    context.Context
	targets <-chan TargetState // latest wins
	initial TargetState
	report  func(State)
	log     *slog.Logger
}

// taskRuntime supervises one task on this worker: it runs incarnations of
// the runner, reports states, and restarts failed incarnations with
// exponential backoff.
type taskRuntime struct {
	w         *Worker
	id        TaskID
	connProps map[string]string
	taskProps map[string]string
	log       *slog.Logger
	tm        *taskMetrics

	targets chan TargetState // capacity 1, latest wins
	restart chan struct{}    // capacity 1: a requested restart

	stop       context.CancelFunc // graceful stop of the whole runtime
	hardCancel context.CancelFunc // abandon
	done       chan struct{}

	mu        sync.Mutex
	target    TargetState
	state     State
	trace     string
	runCancel context.CancelFunc // stops the current incarnation
	// startRelease frees the start slot the current incarnation holds
	// until it runs (Config.StartConcurrency).
	startRelease func()

	reportMu sync.Mutex // keeps listener calls in order
	// started: this incarnation reached RUNNING or PAUSED (startup
	// metrics).
	started atomic.Bool
	// abandoned: the worker stopped waiting for this runtime (StopTasks'
	// deadline passed). Its successor, here or on another worker, owns
	// the task's status now, so whatever this one reports when it finally
	// ends is only logged: the chaos soak saw a sink task abandoned while
	// its consumer's close waited for a restarting broker report
	// UNASSIGNED 16 s later, over its running successor, for good.
	abandoned atomic.Bool
}

func (w *Worker) newTaskRuntime(id TaskID, connProps, taskProps map[string]string, target TargetState) *taskRuntime {
	return &taskRuntime{
		w: w, id: id, connProps: connProps, taskProps: taskProps,
		log:     w.log.With("connector", id.Connector, "task", id.Task),
		tm:      w.metrics.task(id, resolveConverterClasses(connProps, w.cfg.ConverterDefaults)),
		targets: make(chan TargetState, 1),
		restart: make(chan struct{}, 1),
		done:    make(chan struct{}),
		target:  target,
		state:   StateUnassigned,
	}
}

func (t *taskRuntime) start() {
	ctx, stop := context.WithCancel(context.Background())
	hard, hardCancel := context.WithCancel(context.Background())
	t.stop, t.hardCancel = stop, hardCancel
	go t.supervise(ctx, hard)
}

// setTarget passes a new target state to the running incarnation.
func (t *taskRuntime) setTarget(s TargetState) {
	t.mu.Lock()
	t.target = s
	t.mu.Unlock()
	for {
		select {
		case t.targets <- s:
			return
		default:
		}
		select {
		case <-t.targets: // drop the stale one
		default:
		}
	}
}

func (t *taskRuntime) currentTarget() TargetState {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.target
}

// requestRestart stops the current incarnation (if any) and starts a new
// one at once, whatever the backoff.
func (t *taskRuntime) requestRestart() {
	select {
	case t.restart <- struct{}{}:
	default:
	}
	t.mu.Lock()
	if t.runCancel != nil {
		t.runCancel()
	}
	t.mu.Unlock()
}

func (t *taskRuntime) report(s State, trace string) {
	t.reportMu.Lock()
	defer t.reportMu.Unlock()
	t.mu.Lock()
	changed := t.state != s || t.trace != trace
	t.state, t.trace = s, trace
	t.mu.Unlock()
	if s == StateRunning || s == StatePaused {
		t.releaseStart()
	}
	if !changed {
		return
	}
	if t.abandoned.Load() {
		t.log.Info("abandoned task incarnation reached a state; not reported, its successor owns the status", "state", string(s))
		return
	}
	t.tm.setState(s)
	if (s == StateRunning || s == StatePaused) && t.started.CompareAndSwap(false, true) {
		t.w.metrics.taskStartups.WithLabelValues("success").Inc()
	}
	if s == StateFailed {
		t.log.Error("task failed", "state", string(s), "trace", trace)
	} else {
		t.log.Info("task state", "state", string(s))
	}
	t.w.status.TaskState(t.id, s, trace)
}

func (t *taskRuntime) status() (State, string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.state, t.trace
}

func (t *taskRuntime) supervise(ctx, hard context.Context) {
	defer close(t.done)
	attempt := 0
	for {
		runCtx, runCancel := context.WithCancel(ctx)
		t.mu.Lock()
		t.runCancel = runCancel
		t.mu.Unlock()
		// Drop a restart request that predates this incarnation.
		select {
		case <-t.restart:
		default:
		}

		began := time.Now()
		t.started.Store(false)
		err := t.gatedRun(runCtx, hard)
		runCancel()
		if ctx.Err() != nil {
			t.report(StateUnassigned, "")
			return
		}
		select {
		case <-t.restart: // RestartTask: go again now
			attempt = 0
			t.tm.restarts.Inc()
			t.report(StateRestarting, "")
			continue
		default:
		}
		if err == nil {
			err = errors.New("task stopped without being asked to")
		}
		trace := err.Error()
		if !t.started.Load() {
			t.w.metrics.taskStartups.WithLabelValues("failure").Inc()
		}
		t.report(StateFailed, trace)

		auto, nr := t.autoRestart(ctx, err)
		if time.Since(began) > t.w.cfg.RestartBackoffMax {
			attempt = 0 // it ran healthy for a while: start the backoff over
		}
		var timer <-chan time.Time
		if auto {
			d := backoff(t.w.cfg.RestartBackoffInitial, t.w.cfg.RestartBackoffMax, attempt)
			t.log.Info("restarting failed task after backoff", "backoff", d, "attempt", attempt+1)
			timer = time.After(d)
			attempt++
		} else if nr != nil {
			t.log.Warn("task will not be restarted automatically", "reason", nr.err)
		}
		select {
		case <-ctx.Done():
			t.report(StateUnassigned, "")
			return
		case <-t.restart:
			attempt = 0
		case <-timer:
		}
		t.tm.restarts.Inc()
		// RESTARTING keeps the failure's trace so the status says why.
		t.report(StateRestarting, trace)
	}
}

// autoRestart decides whether a failed incarnation is restarted after a
// backoff. A failure marked noRestartError is not, unless its producer was
// fenced or failed fatally and the cluster's latest assignment still gives
// the task to this worker (Config.OwnsTask): then no successor exists to
// fight for the transactional id, and the new incarnation's
// InitTransactions aborts whatever the old producer left open. Without
// that, a plugin crash whose abort then failed fatally (the chaos soak saw
// INVALID_TXN_STATE, with no fencing involved) would stop the task for good
// on a worker that still owned it.
func (t *taskRuntime) autoRestart(ctx context.Context, err error) (bool, *noRestartError) {
	if t.w.cfg.DisableAutoRestart {
		return false, nil
	}
	var nr *noRestartError
	if !errors.As(err, &nr) {
		return true, nil
	}
	if !(nr.fenced || nr.fatal) || t.w.cfg.OwnsTask == nil {
		return false, nr
	}
	octx, cancel := context.WithTimeout(ctx, 30*time.Second)
	owns, oerr := t.w.cfg.OwnsTask(octx, t.id)
	cancel()
	switch {
	case oerr != nil:
		t.log.Warn("cannot tell whether this worker still owns the task; leaving it stopped", "error", oerr)
		return false, nr
	case !owns:
		return false, nr
	case nr.fenced:
		t.log.Warn("producer fenced, but the cluster's latest assignment still gives this task to this worker: "+
			"no successor exists (the transaction coordinator aborted a transaction that outlived transaction.timeout.ms); restarting", "error", err)
	default:
		t.log.Warn("fatal producer error, but the cluster's latest assignment still gives this task to this worker: "+
			"no successor exists; restarting with a new producer", "error", err)
	}
	return true, nil
}

// gatedRun runs one incarnation once a start slot is free; the slot is
// held until the incarnation runs (report frees it) or ends.
func (t *taskRuntime) gatedRun(ctx, hard context.Context) error {
	release, err := t.w.starts.acquire(ctx)
	if err != nil {
		return fmt.Errorf("waiting for a start slot (%s): %w", KeyStartConcurrency, err)
	}
	t.mu.Lock()
	t.startRelease = release
	t.mu.Unlock()
	defer t.releaseStart()
	return t.runOnce(ctx, hard)
}

// releaseStart frees the incarnation's start slot, if it holds one.
func (t *taskRuntime) releaseStart() {
	t.mu.Lock()
	release := t.startRelease
	t.startRelease = nil
	t.mu.Unlock()
	if release != nil {
		release()
	}
}

func (t *taskRuntime) runOnce(ctx, hard context.Context) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("task panicked: %v", r)
		}
	}()
	r, err := t.w.newRunner(t)
	if err != nil {
		return err
	}
	ctl := &taskControl{
		hard: hard, targets: t.targets, initial: t.currentTarget(), log: t.log,
		report: func(s State) { t.report(s, "") },
	}
	return r.run(ctx, ctl)
}

// backoff is initial·2^attempt capped at max, with ±20% jitter so that
// tasks failing together do not restart in lockstep.
func backoff(initial, max time.Duration, attempt int) time.Duration {
	d := initial
	for i := 0; i < attempt && d < max; i++ {
		d *= 2
	}
	d = min(d, max)
	jitter := time.Duration(float64(d) * 0.2 * (2*rand.Float64() - 1))
	return d + jitter
}
