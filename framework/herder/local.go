package herder

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/connectd/connectd/framework/herder/assignment"
	"github.com/connectd/connectd/framework/herder/clusterstate"
	"github.com/connectd/connectd/framework/rest/api"
	"github.com/connectd/connectd/framework/worker"
)

// local applies this worker's share of the assignment to the runtime: it
// starts and stops connectors and tasks, follows target states and restart
// requests, and has the connectors it runs generate task configs, which it
// sends to the leader.
type local struct {
	h   *Herder
	log *slog.Logger

	// gen is the generation of the assignment applied last; status
	// records carry it.
	gen atomic.Int32
	// mine is this worker's share of that assignment.
	mine atomic.Pointer[clusterstate.WorkerAssignment]

	// Owned by the loop goroutine.
	connectors map[string]*localConnector
	tasks      map[api.ConnectorTaskID]*localTask
	// refused are the tasks assigned here but not started because this
	// worker runs worker.tasks.max tasks, with the task generation whose
	// FAILED status was written; they start once it runs fewer.
	refused     map[api.ConnectorTaskID]int64
	targets     map[string]clusterstate.TargetState // target applied per connector
	restartSeen map[string]int64
	// loggerSeen is the offset of the logger-cluster-<ns> record applied
	// last, per namespace.
	loggerSeen map[string]int64

	// reconf holds each running connector's task-config request channel;
	// the runtime's reconfiguration callback reaches it from other
	// goroutines.
	mu     sync.Mutex
	reconf map[string]chan struct{}

	pings chan chan struct{}
	calls chan loopCall
	loops sync.WaitGroup
}

type loopCall struct {
	fn   func(ctx context.Context)
	done chan struct{}
}

type localConnector struct {
	configOffset int64
	target       clusterstate.TargetState
	reconfigure  chan struct{} // cap 1: a task-config generation is wanted
	cancel       context.CancelFunc
	done         chan struct{}
	// overLimit: the config exceeds an admission limit, so the runtime
	// never started it.
	overLimit bool
}

type localTask struct {
	taskGen int64
}

func newLocal(h *Herder) *local {
	l := &local{
		h:           h,
		log:         h.log.With("component", "local"),
		connectors:  map[string]*localConnector{},
		tasks:       map[api.ConnectorTaskID]*localTask{},
		refused:     map[api.ConnectorTaskID]int64{},
		targets:     map[string]clusterstate.TargetState{},
		restartSeen: map[string]int64{},
		loggerSeen:  map[string]int64{},
		reconf:      map[string]chan struct{}{},
		pings:       make(chan chan struct{}),
		calls:       make(chan loopCall),
	}
	l.mine.Store(&clusterstate.WorkerAssignment{})
	return l
}

// run applies assignments until ctx ends, then stops everything this
// worker runs.
func (l *local) run(ctx context.Context, initial *clusterstate.Snapshot) {
	// Restart requests written before this worker started are history.
	for c, r := range initial.Restarts() {
		l.restartSeen[c] = r.Offset
	}
	resync := time.NewTicker(5 * time.Second)
	defer resync.Stop()
	for ctx.Err() == nil {
		ch := l.h.configs.changed.C()
		snap := l.h.configs.Snapshot()
		l.applyLoggers(snap)
		l.reconcile(ctx, snap)
		select {
		case <-ctx.Done():
		case <-ch:
		case <-resync.C:
		case p := <-l.pings:
			close(p)
		case c := <-l.calls:
			c.fn(ctx)
			close(c.done)
		}
	}
}

// applyLoggers applies the cluster-wide log levels not applied yet, in
// the order they were written.
func (l *local) applyLoggers(snap *clusterstate.Snapshot) {
	if l.h.cfg.LogLevels == nil {
		return
	}
	type change struct {
		ns string
		e  clusterstate.LoggerLevel
	}
	var todo []change
	for ns, e := range snap.Loggers() {
		if seen, ok := l.loggerSeen[ns]; !ok || e.Offset > seen {
			todo = append(todo, change{ns, e})
		}
	}
	slices.SortFunc(todo, func(a, b change) int { return cmp.Compare(a.e.Offset, b.e.Offset) })
	for _, c := range todo {
		l.loggerSeen[c.ns] = c.e.Offset
		affected, err := l.h.cfg.LogLevels.Set(c.ns, c.e.Level)
		if err != nil {
			l.log.Warn("cannot apply a cluster-wide log level", "logger", c.ns, "level", c.e.Level, "err", err)
			continue
		}
		l.log.Info("applied a cluster-wide log level", "logger", c.ns, "level", c.e.Level, "affected", len(affected))
	}
}

// ping waits until the loop is responsive (for the health check).
func (l *local) ping(ctx context.Context) error {
	p := make(chan struct{})
	select {
	case l.pings <- p:
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case <-p:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// loopHandoff bounds how long a REST request waits for the loop to take
// its call: the loop may be stopping many tasks (up to
// task.shutdown.graceful.timeout.ms and their grace), and a request does
// not wait that out but is told to retry.
const loopHandoff = 2 * time.Second

// runOnLoop runs fn on the loop goroutine, which owns the local state. A
// loop busy starting or stopping work for longer than loopHandoff answers
// a RebalanceError (409 with Retry-After).
func (l *local) runOnLoop(ctx context.Context, fn func(ctx context.Context)) error {
	c := loopCall{fn: fn, done: make(chan struct{})}
	busy := time.NewTimer(loopHandoff)
	defer busy.Stop()
	select {
	case l.calls <- c:
	case <-busy.C:
		return &RebalanceError{Msg: "Cannot complete request momentarily: this worker is busy starting or stopping connectors and tasks, likely because a rebalance or reconfiguration is underway", RetryAfter: rebalanceRetryAfter}
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case <-c.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// reconcile makes what this worker runs match its share of the
// assignment in snap, in an order that never runs a task twice: first
// stop what is no longer ours or changed, then follow target states, then
// start what is newly ours, and last carry out restart requests.
func (l *local) reconcile(ctx context.Context, snap *clusterstate.Snapshot) {
	a, mine := l.adopt(snap)
	wantConn, wantTask := l.wanted(snap, mine)
	l.stopTasks(ctx, snap, a, wantTask)
	l.dropRefused(snap, a, wantTask)
	l.stopConnectors(ctx, snap, a, wantConn)
	l.followTargets(ctx, snap)
	if !l.startConnectors(ctx, snap, wantConn) {
		return // stopping: what started is stopped by stopAll
	}
	if !l.startTasks(ctx, snap, wantTask) {
		return
	}
	l.applyRestarts(ctx, snap)
}

// adopt records snap's assignment as the one this worker applies: its
// generation (which status records carry) and this worker's share.
func (l *local) adopt(snap *clusterstate.Snapshot) (*clusterstate.Assignment, clusterstate.WorkerAssignment) {
	a := snap.Assignment()
	var mine clusterstate.WorkerAssignment
	var gen int32
	if a != nil {
		mine = a.Workers[l.h.cfg.WorkerURL]
		gen = a.Generation
	}
	l.gen.Store(gen)
	l.mine.Store(&mine)
	if a != nil {
		l.h.rebal.generationApplied(gen)
	}
	return a, mine
}

// wanted lists the connectors and tasks this worker should run: its share
// of the assignment that the snapshot still defines and the limits admit.
func (l *local) wanted(snap *clusterstate.Snapshot, mine clusterstate.WorkerAssignment) (map[string]bool, map[api.ConnectorTaskID]bool) {
	wantConn := map[string]bool{}
	for _, c := range mine.Connectors {
		if snap.Contains(c) {
			wantConn[c] = true
		}
	}
	wantTask := map[api.ConnectorTaskID]bool{}
	for _, id := range mine.TaskIDs() {
		// An assignment from a leader without the limits may still give
		// this worker tasks of a connector beyond them.
		if id.Task < snap.TaskCount(id.Connector) && l.h.cfg.Limits.assignable(snap, id.Connector) {
			wantTask[id] = true
		}
	}
	return wantConn, wantTask
}

// releasedHere reports whether a task this worker stops was taken away
// from it without an owner yet (phase one of a move): its UNASSIGNED
// status is what lets the leader give it to its new owner.
func releasedHere(snap *clusterstate.Snapshot, a *clusterstate.Assignment, id api.ConnectorTaskID) bool {
	_, owned := a.OwnerOfTask(id)
	return !owned && snap.Contains(id.Connector) && id.Task < snap.TaskCount(id.Connector)
}

// stopTasks stops the tasks that are no longer ours or whose configs
// changed.
func (l *local) stopTasks(ctx context.Context, snap *clusterstate.Snapshot, a *clusterstate.Assignment, wantTask map[api.ConnectorTaskID]bool) {
	var stop []api.ConnectorTaskID
	var released []api.ConnectorTaskID
	for id, t := range l.tasks {
		switch {
		case !wantTask[id]:
			stop = append(stop, id)
			if releasedHere(snap, a, id) {
				released = append(released, id)
			}
		case t.taskGen != snap.TaskGeneration(id.Connector):
			stop = append(stop, id)
		}
	}
	if len(stop) == 0 {
		return
	}
	clusterstate.SortTaskIDs(stop)
	l.log.Info("stopping tasks", "tasks", taskList(stop), "generation", l.gen.Load())
	ids := make([]TaskID, len(stop))
	for i, id := range stop {
		ids[i] = toRuntimeID(id)
	}
	if err := l.h.rt.StopTasks(ctx, ids); err != nil {
		l.log.Warn("stopping tasks reported an error", "err", err)
	}
	for _, id := range stop {
		delete(l.tasks, id)
	}
	for _, id := range released {
		l.h.statuses.putTask(id, l.status(StateUnassigned, ""))
	}
}

// dropRefused forgets the tasks refused here (worker.tasks.max) that are no
// longer ours, releasing them like stopped ones.
func (l *local) dropRefused(snap *clusterstate.Snapshot, a *clusterstate.Assignment, wantTask map[api.ConnectorTaskID]bool) {
	for id := range l.refused {
		if wantTask[id] {
			continue
		}
		delete(l.refused, id)
		if releasedHere(snap, a, id) {
			l.h.statuses.putTask(id, l.status(StateUnassigned, ""))
		}
	}
}

// stopConnectors stops the connectors that are no longer ours or whose
// config changed, and forgets the target states of connectors of which
// nothing runs here any more.
func (l *local) stopConnectors(ctx context.Context, snap *clusterstate.Snapshot, a *clusterstate.Assignment, wantConn map[string]bool) {
	for name, c := range l.connectors {
		if wantConn[name] && c.configOffset == snap.ConfigOffset(name) {
			continue
		}
		l.stopConnector(ctx, name)
		if _, owned := a.OwnerOfConnector(name); !owned && snap.Contains(name) {
			l.h.statuses.putConnector(name, l.status(StateUnassigned, ""))
		}
	}
	for c := range l.targets {
		if !l.runsAny(c) {
			delete(l.targets, c)
		}
	}
}

// followTargets applies target-state changes to what keeps running.
func (l *local) followTargets(ctx context.Context, snap *clusterstate.Snapshot) {
	for c, applied := range l.targets {
		want := snap.Target(c)
		if want == applied {
			continue
		}
		l.log.Info("changing target state", "connector", c, "from", applied, "to", want)
		if err := l.h.rt.SetTargetState(ctx, c, RuntimeTarget(want)); err != nil {
			l.log.Warn("setting the target state failed", "connector", c, "target", want, "err", err)
			continue
		}
		l.targets[c] = want
		if lc, ok := l.connectors[c]; ok {
			lc.target = want
			if want == clusterstate.TargetStarted {
				l.requestTaskConfigs(c)
			}
		}
	}
}

// startConnectors starts the connectors newly ours, and asks those running
// whose task configs are stale for new ones. It returns false when ctx
// ended on the way.
func (l *local) startConnectors(ctx context.Context, snap *clusterstate.Snapshot, wantConn map[string]bool) bool {
	for _, name := range sortedKeys(wantConn) {
		if ctx.Err() != nil {
			return false
		}
		if _, running := l.connectors[name]; running {
			if snap.TaskConfigsStale(name) && snap.Target(name) == clusterstate.TargetStarted {
				l.requestTaskConfigs(name)
			}
			continue
		}
		l.startConnector(ctx, snap, name)
	}
	return true
}

// startTasks starts the tasks newly ours (an exactly-once generation only
// once its predecessors are fenced), up to worker.tasks.max; a task beyond
// it is FAILED once per task generation. It returns false when ctx ended
// on the way.
func (l *local) startTasks(ctx context.Context, snap *clusterstate.Snapshot, wantTask map[api.ConnectorTaskID]bool) bool {
	var start []api.ConnectorTaskID
	for id := range wantTask {
		if _, running := l.tasks[id]; !running && !l.h.fencingPending(snap, id.Connector) {
			start = append(start, id)
		}
	}
	clusterstate.SortTaskIDs(start)
	var refused []api.ConnectorTaskID
	for _, id := range start {
		if ctx.Err() != nil {
			return false
		}
		if full := l.h.cfg.Limits.workerFull(id, len(l.tasks)); full != nil {
			gen := snap.TaskGeneration(id.Connector)
			if seen, ok := l.refused[id]; !ok || seen != gen {
				l.refused[id] = gen
				l.h.statuses.putTask(id, l.status(StateFailed, full.Error()))
				refused = append(refused, id)
			}
			continue
		}
		delete(l.refused, id)
		l.startTask(ctx, snap, id)
	}
	if len(refused) > 0 {
		l.log.Warn("not starting tasks: this worker runs as many as it may", "tasks", len(refused), "first", refused[0].String(),
			"limit", KeyWorkerTasksMax, "value", l.h.cfg.Limits.WorkerTasks)
	}
	return true
}

// applyRestarts carries out the restart requests not seen yet.
func (l *local) applyRestarts(ctx context.Context, snap *clusterstate.Snapshot) {
	restarts := snap.Restarts()
	for _, c := range sortedKeys(restarts) {
		r := restarts[c]
		if r.Offset <= l.restartSeen[c] {
			continue
		}
		l.restartSeen[c] = r.Offset
		l.restart(ctx, snap, c, r.Request)
	}
}

func (l *local) runsAny(c string) bool {
	if _, ok := l.connectors[c]; ok {
		return true
	}
	for id := range l.tasks {
		if id.Connector == c {
			return true
		}
	}
	return false
}

// status builds a status record of this worker at the applied generation.
func (l *local) status(state, trace string) Status {
	return Status{State: state, Trace: trace, WorkerID: l.h.workerID, Generation: l.gen.Load()}
}

func (l *local) startConnector(ctx context.Context, snap *clusterstate.Snapshot, name string) {
	raw, _ := snap.ConnectorConfig(name)
	target := snap.Target(name)
	if err := l.h.cfg.Limits.checkConfig(name, raw); err != nil {
		// A config the REST API would refuse, in the config topic
		// (an older version or a hand-written record): record it as
		// started so that it is not retried on every pass, and fail it.
		l.connectors[name] = &localConnector{configOffset: snap.ConfigOffset(name), target: target, cancel: func() {}, done: closedChan(), overLimit: true}
		l.targets[name] = target
		l.log.Error("not starting the connector: its stored config exceeds a limit", "connector", name, "err", err)
		l.h.statuses.putConnector(name, l.status(StateFailed, err.Error()))
		return
	}
	lc := &localConnector{
		configOffset: snap.ConfigOffset(name),
		target:       target,
		reconfigure:  make(chan struct{}, 1),
		done:         make(chan struct{}),
	}
	l.connectors[name] = lc
	l.targets[name] = target
	l.mu.Lock()
	l.reconf[name] = lc.reconfigure
	l.mu.Unlock()
	gctx, cancel := context.WithCancel(ctx)
	lc.cancel = cancel
	l.loops.Add(1)
	go func() {
		defer l.loops.Done()
		defer close(lc.done)
		l.taskConfigLoop(gctx, name, lc.configOffset, lc.reconfigure)
	}()

	resolved, err := l.h.resolveFor(name, raw)
	if err != nil {
		l.log.Error("cannot resolve the connector's config placeholders", "connector", name, "err", err)
		l.h.statuses.putConnector(name, l.status(StateFailed, err.Error()))
		return
	}
	l.log.Info("starting connector", "connector", name, "target", target, "generation", l.gen.Load())
	onReconfigure := func(string) { l.requestTaskConfigs(name) }
	if err := l.h.rt.StartConnector(ctx, name, resolved, RuntimeTarget(target), onReconfigure); err != nil {
		l.log.Error("starting the connector failed", "connector", name, "err", l.h.scrub(name, err.Error()))
		l.h.statuses.putConnector(name, l.status(StateFailed, l.h.scrub(name, err.Error())))
		return
	}
	if target == clusterstate.TargetStarted {
		l.requestTaskConfigs(name)
	}
}

func (l *local) stopConnector(ctx context.Context, name string) {
	lc, ok := l.connectors[name]
	if !ok {
		return
	}
	l.mu.Lock()
	delete(l.reconf, name)
	l.mu.Unlock()
	lc.cancel()
	<-lc.done
	if lc.overLimit {
		delete(l.connectors, name)
		return
	}
	l.log.Info("stopping connector", "connector", name)
	if err := l.h.rt.StopConnector(ctx, name); err != nil {
		l.log.Warn("stopping the connector reported an error", "connector", name, "err", err)
	}
	delete(l.connectors, name)
}

// requestTaskConfigs asks the connector's task-config loop for a new round.
// It is safe to call from any goroutine (the runtime calls it when the
// connector requests reconfiguration).
func (l *local) requestTaskConfigs(name string) {
	l.mu.Lock()
	ch := l.reconf[name]
	l.mu.Unlock()
	if ch == nil {
		return
	}
	select {
	case ch <- struct{}{}:
	default:
	}
}

// taskConfigLoop generates the connector's task configs when asked and
// sends them to the leader, retrying with backoff until the leader took
// them or the connector stops here.
func (l *local) taskConfigLoop(ctx context.Context, name string, configOffset int64, want <-chan struct{}) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-want:
		}
		backoff := 250 * time.Millisecond
		for {
			err := l.generateTaskConfigs(ctx, name, configOffset)
			if err == nil || ctx.Err() != nil {
				break
			}
			l.log.Warn("sending task configs to the leader failed; retrying", "connector", name, "in", backoff, "err", err)
			select {
			case <-ctx.Done():
				return
			case <-time.After(backoff):
			}
			backoff = min(backoff*2, 10*time.Second)
		}
	}
}

// errTooManyTasks: the connector returned more task configs than tasks.max.
var errTooManyTasks = errors.New("more task configs than tasks.max")

func (l *local) generateTaskConfigs(ctx context.Context, name string, configOffset int64) error {
	snap := l.h.configs.Snapshot()
	raw, ok := snap.ConnectorConfig(name)
	if !ok || snap.Target(name) != clusterstate.TargetStarted || snap.ConfigOffset(name) != configOffset {
		// Gone, not started, or reconfigured: the connector instance
		// started with the new config sends the task configs.
		return nil
	}
	if l.h.cfg.Limits.checkConfig(name, raw) != nil {
		return nil // reported when the connector started
	}
	resolved, err := l.h.resolveFor(name, raw)
	if err != nil {
		return nil // reported when the connector started
	}
	maxTasks := 1
	if v, ok := resolved["tasks.max"]; ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			l.h.statuses.putConnector(name, l.status(StateFailed, fmt.Sprintf("invalid tasks.max %q: must be an integer >= 1", v)))
			return nil
		}
		maxTasks = n
	}
	configs, err := l.h.rt.ConnectorTaskConfigs(ctx, name, maxTasks)
	if err != nil {
		return fmt.Errorf("generating task configs: %w", err)
	}
	if len(configs) > maxTasks {
		msg := fmt.Sprintf("connector %s generated %d task configs, more than tasks.max=%d", name, len(configs), maxTasks)
		l.log.Error(msg, "connector", name)
		l.h.statuses.putConnector(name, l.status(StateFailed, fmt.Errorf("%s: %w", msg, errTooManyTasks).Error()))
		return nil
	}
	if err := l.h.cfg.Limits.checkTaskConfigs(name, configs); err != nil {
		l.log.Error("the connector's task configs exceed a limit", "connector", name, "err", err)
		l.h.statuses.putConnector(name, l.status(StateFailed, err.Error()))
		return nil
	}
	configs = reverseTransform(raw, resolved, configs)
	snap = l.h.configs.Snapshot()
	if snap.ConfigOffset(name) != configOffset {
		return nil
	}
	if !snap.TaskConfigsStale(name) && equalTaskConfigs(configs, snap.TaskConfigs(name)) {
		return nil
	}
	l.log.Info("sending task configs to the leader", "connector", name, "tasks", len(configs))
	return l.h.sendTaskConfigs(ctx, name, configs)
}

func (l *local) startTask(ctx context.Context, snap *clusterstate.Snapshot, id api.ConnectorTaskID) {
	rawConn, _ := snap.ConnectorConfig(id.Connector)
	rawTask := snap.TaskConfigs(id.Connector)[id.Task]
	target := snap.Target(id.Connector)
	l.tasks[id] = &localTask{taskGen: snap.TaskGeneration(id.Connector)}
	l.targets[id.Connector] = target
	conn, err := l.h.resolveFor(id.Connector, rawConn)
	if err == nil {
		var task map[string]string
		task, err = l.h.resolveFor(id.Connector, rawTask)
		if err == nil {
			l.log.Info("starting task", "connector", id.Connector, "task", id.Task, "target", target, "generation", l.gen.Load())
			if err = l.h.rt.StartTask(ctx, toRuntimeID(id), conn, task, RuntimeTarget(target)); err == nil {
				return
			}
		}
	}
	l.log.Error("starting the task failed", "connector", id.Connector, "task", id.Task, "err", l.h.scrub(id.Connector, err.Error()))
	l.h.statuses.putTask(id, l.status(StateFailed, l.h.scrub(id.Connector, err.Error())))
}

// restart carries out a restart request for what runs here.
func (l *local) restart(ctx context.Context, snap *clusterstate.Snapshot, c string, req clusterstate.RestartRequest) {
	if _, ok := l.connectors[c]; ok {
		st, _ := l.h.statuses.connector(c)
		if !req.OnlyFailed || st.State == StateFailed {
			l.log.Info("restarting connector", "connector", c)
			l.h.statuses.putConnector(c, l.status(StateRestarting, ""))
			l.stopConnector(ctx, c)
			l.startConnector(ctx, snap, c)
		}
	}
	if !req.IncludeTasks {
		return
	}
	var ids []api.ConnectorTaskID
	for id := range l.tasks {
		if id.Connector == c {
			ids = append(ids, id)
		}
	}
	clusterstate.SortTaskIDs(ids)
	for _, id := range ids {
		st, _ := l.h.statuses.task(id)
		if req.OnlyFailed && st.State != StateFailed {
			continue
		}
		l.log.Info("restarting task", "connector", c, "task", id.Task)
		l.h.statuses.putTask(id, l.status(StateRestarting, ""))
		if err := l.h.rt.RestartTask(ctx, toRuntimeID(id)); err != nil {
			l.log.Error("restarting the task failed", "connector", c, "task", id.Task, "err", err)
		}
	}
}

// restartTaskNow restarts a task this worker runs (the synchronous form of
// POST /connectors/{c}/tasks/{t}/restart). It runs on the loop so that it
// cannot fall between the stop and the start of a reconfiguration, where
// the runtime briefly does not know the task: a task the loop has not
// started (yet) is refused as a rebalance (409, retry later), and one
// whose start failed is started again.
func (l *local) restartTaskNow(ctx context.Context, snap *clusterstate.Snapshot, id api.ConnectorTaskID) error {
	if _, ok := l.refused[id]; ok {
		if err := l.h.cfg.Limits.workerFull(id, len(l.tasks)); err != nil {
			return &BadRequestError{Msg: err.Error()}
		}
		delete(l.refused, id)
		l.startTask(ctx, snap, id)
		return nil
	}
	if _, ok := l.tasks[id]; !ok || id.Task >= snap.TaskCount(id.Connector) {
		return &RebalanceError{Msg: fmt.Sprintf("Cannot restart task %s momentarily: this worker is not running it yet, likely because a rebalance or reconfiguration is underway", id), RetryAfter: rebalanceRetryAfter}
	}
	l.h.statuses.putTask(id, l.status(StateRestarting, ""))
	err := l.h.rt.RestartTask(ctx, toRuntimeID(id))
	if errors.Is(err, worker.ErrUnknownTask) {
		// Its start failed (its status says why): starting it again is
		// the restart.
		l.startTask(ctx, snap, id)
		return nil
	}
	return err
}

// restartConnectorNow restarts a connector this worker runs (the
// synchronous form of POST /connectors/{c}/restart).
func (l *local) restartConnectorNow(ctx context.Context, snap *clusterstate.Snapshot, c string) {
	if _, ok := l.connectors[c]; !ok {
		return
	}
	l.stopConnector(ctx, c)
	l.startConnector(ctx, snap, c)
}

// stopAll stops everything this worker runs (graceful shutdown). The
// statuses say UNASSIGNED, as Kafka Connect's do after a clean stop.
func (l *local) stopAll(ctx context.Context) {
	var ids []TaskID
	var cids []api.ConnectorTaskID
	for id := range l.tasks {
		ids = append(ids, toRuntimeID(id))
		cids = append(cids, id)
	}
	if len(ids) > 0 {
		l.log.Info("stopping all tasks", "tasks", len(ids))
		if err := l.h.rt.StopTasks(ctx, ids); err != nil {
			l.log.Warn("stopping tasks reported an error", "err", err)
		}
	}
	for _, name := range sortedKeys(l.connectors) {
		l.stopConnector(ctx, name)
		l.h.statuses.putConnector(name, l.status(StateUnassigned, ""))
	}
	for id := range l.refused {
		cids = append(cids, id)
	}
	for _, id := range cids {
		l.h.statuses.putTask(id, l.status(StateUnassigned, ""))
	}
	l.tasks = map[api.ConnectorTaskID]*localTask{}
	l.refused = map[api.ConnectorTaskID]int64{}
	l.loops.Wait()
}

// owns reports whether the applied assignment gives the item to this
// worker.
func (l *local) owns(it assignment.Item) bool {
	mine := l.mine.Load()
	if assignment.IsConnector(it) {
		for _, c := range mine.Connectors {
			if c == it.Connector {
				return true
			}
		}
		return false
	}
	for _, n := range mine.Tasks[it.Connector] {
		if n == it.Task {
			return true
		}
	}
	return false
}

func equalTaskConfigs(a, b []map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !maps.Equal(a[i], b[i]) {
			return false
		}
	}
	return true
}

func taskList(ids []api.ConnectorTaskID) string {
	s := ""
	for i, id := range ids {
		if i > 0 {
			s += ","
		}
		s += id.String()
	}
	return s
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func closedChan() chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}
