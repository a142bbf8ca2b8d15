package chaos

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/connectd/connectd/connectors/aerospike/aerofake"
)

// Fault kinds. Disruptive faults run one at a time, each after the cluster
// has fully recovered from the previous one, so that their recovery times
// are their own; background faults (plugin crashes, Aerospike trouble, bad
// records) land at any moment, including in the middle of a disruptive
// fault's recovery.
const (
	KindWorkerKill        = "worker-sigkill"         // down past the session timeout: failover
	KindWorkerKillRestart = "worker-sigkill-restart" // back within seconds: crash-restart
	KindWorkerZombie      = "worker-sigstop"         // SIGSTOP past the session timeout, then SIGCONT
	KindWorkerAdd         = "worker-add"
	KindWorkerRemove      = "worker-remove"
	KindBrokerRestart     = "broker-restart"
	KindPauseResume       = "connector-pause-resume"
	KindRestart           = "connector-restart"
	KindConfigUpdate      = "config-update"
	KindBadREST           = "bad-rest-requests"
	KindPluginKill        = "plugin-sigkill"
	KindAeroErrors        = "aerospike-errors"
	KindAeroLatency       = "aerospike-latency"
	KindBadRecords        = "bad-records"

	// kindRejoin is a consequence, not an injected fault: a killed worker
	// restarting and taking its share of the work back.
	kindRejoin = "worker-rejoin"
)

type weighted struct {
	kind   string
	weight int
}

var disruptiveKinds = []weighted{
	{KindWorkerKill, 5}, {KindWorkerKillRestart, 3}, {KindWorkerZombie, 3}, {KindWorkerAdd, 2},
	{KindBrokerRestart, 2}, {KindPauseResume, 3}, {KindRestart, 3}, {KindConfigUpdate, 3}, {KindBadREST, 2},
}

var backgroundKinds = []weighted{
	{KindPluginKill, 3}, {KindAeroErrors, 4}, {KindAeroLatency, 3}, {KindBadRecords, 3},
}

// without returns ws minus the kinds in exclude.
func without(ws []weighted, exclude []string) []weighted {
	var out []weighted
	for _, w := range ws {
		if !slices.Contains(exclude, w.kind) {
			out = append(out, w)
		}
	}
	return out
}

func pick(r *rand.Rand, ws []weighted) string {
	total := 0
	for _, w := range ws {
		total += w.weight
	}
	n := r.IntN(total)
	for _, w := range ws {
		if n < w.weight {
			return w.kind
		}
		n -= w.weight
	}
	return ws[len(ws)-1].kind
}

func between(r *rand.Rand, lo, hi time.Duration) time.Duration {
	if hi <= lo {
		return lo
	}
	return lo + time.Duration(r.Int64N(int64(hi-lo)))
}

// event is one injected fault (or a consequence of one) and what it did.
type event struct {
	N           int       `json:"n"`
	Kind        string    `json:"kind"`
	Detail      string    `json:"detail"`
	At          time.Time `json:"at"`
	WindowEnd   time.Time `json:"-"`
	Disruptive  bool      `json:"disruptive"`
	Consequence bool      `json:"consequence,omitempty"`
	Err         string    `json:"error,omitempty"`
	// scope: nil = every unit; else the connectors whose units count.
	scope map[string]bool
	// worker, for a plugin crash: only units that ran there count.
	worker string
	// failuresOnly: only episodes that began with a FAILED state count
	// (what Aerospike trouble or a bad record can do to a task).
	failuresOnly bool
	// Recovery is the longest time a unit in scope was not running after
	// At (0 when none went down).
	Recovery time.Duration `json:"recovery_ns"`
	Down     []string      `json:"down,omitempty"`
	// Hosted, for a plugin crash: the units in scope that the monitor last
	// saw on the worker, i.e. what the killed process hosted.
	Hosted []string `json:"hosted,omitempty"`
}

// events is the run's fault log.
type events struct {
	mu    sync.Mutex
	list  []*event
	last  *event // the last disruptive event, whose window the next one ends
	onAdd func(*event)
}

func (es *events) add(e *event) *event {
	es.mu.Lock()
	defer func() {
		es.mu.Unlock()
		if es.onAdd != nil {
			es.onAdd(e)
		}
	}()
	e.N = len(es.list) + 1
	if e.Disruptive || e.Consequence {
		if es.last != nil && es.last.WindowEnd.IsZero() {
			es.last.WindowEnd = e.At
		}
		es.last = e
	} else if e.WindowEnd.IsZero() {
		e.WindowEnd = e.At.Add(time.Minute)
	}
	es.list = append(es.list, e)
	return e
}

func (es *events) all() []*event {
	es.mu.Lock()
	defer es.mu.Unlock()
	return append([]*event(nil), es.list...)
}

// closeWindows ends the open window of the last disruptive event.
func (es *events) closeWindows(at time.Time) {
	es.mu.Lock()
	defer es.mu.Unlock()
	if es.last != nil && es.last.WindowEnd.IsZero() {
		es.last.WindowEnd = at
	}
}

// attribute computes every event's recovery from the monitor's episodes.
// Background events are matched first and narrowly: a plugin crash owns
// the episodes that began within 20 s of the units on its worker of every
// connector of its plugin (they all lived in the one process it killed);
// an episode that began with a FAILED state in the scope of Aerospike
// trouble or a bad record belongs to the latest such event
// before it (within a minute). A disruptive event (or the rejoin after
// one) then owns every other episode in scope that overlaps its window:
// the cluster was healthy when it began, so they are its doing. An event's
// recovery is the longest time one of its episodes kept a unit down after
// the event: End − At for faults that stop units at once (kills, stops,
// restarts, pauses — the monitor sees them up to a poll later), and
// End − max(Start, At) for Aerospike trouble and bad records, which fail a
// task (if ever) only later.
func attribute(evs []*event, eps []episode) {
	owner := make([]*event, len(eps))
	inScope := func(e *event, ep episode) bool { return e.scope == nil || e.scope[ep.Unit.Connector] }
	began := func(ep episode, e *event, within time.Duration) bool {
		return !ep.Start.Before(e.At.Add(-time.Second)) && !ep.Start.After(e.At.Add(within))
	}
	for i, ep := range eps {
		for _, e := range evs {
			switch {
			case e.Disruptive || e.Consequence || !inScope(e, ep):
			case e.worker != "":
				if ep.Worker == e.worker && began(ep, e, 20*time.Second) {
					owner[i] = e
				}
			case e.failuresOnly:
				if strings.HasPrefix(ep.Why, "FAILED") && began(ep, e, time.Minute) &&
					(owner[i] == nil || owner[i].failuresOnly && e.At.After(owner[i].At)) {
					owner[i] = e
				}
			}
		}
	}
	for i, ep := range eps {
		if owner[i] != nil {
			continue
		}
		for _, e := range evs {
			if (e.Disruptive || e.Consequence) && inScope(e, ep) && ep.End.After(e.At) && !ep.Start.After(e.WindowEnd) {
				owner[i] = e
				credit(e, ep)
			}
		}
	}
	for i, ep := range eps {
		if e := owner[i]; e != nil && !e.Disruptive && !e.Consequence {
			credit(e, ep)
		}
	}
	for _, e := range evs {
		sort.Strings(e.Down)
		e.Down = slices.Compact(e.Down)
	}
}

// credit counts an episode towards an event's recovery.
func credit(e *event, ep episode) {
	from := e.At
	if e.failuresOnly && ep.Start.After(from) {
		from = ep.Start
	}
	if d := ep.End.Sub(from); d > e.Recovery {
		e.Recovery = d
	}
	e.Down = append(e.Down, ep.Unit.String())
}

// injector carries out faults.
type injector struct {
	r *run
}

func (in injector) disruptive(ctx context.Context, rng *rand.Rand, kind string) {
	r := in.r
	ev := &event{Kind: kind, Disruptive: true}
	fail := func(err error) {
		ev.Err = err.Error()
		r.log.Warn("fault injection failed", "kind", kind, "err", err)
	}
	session := r.opts.SessionTimeout
	switch kind {
	case KindWorkerKill, KindWorkerKillRestart:
		w := r.pickBaseWorker(rng)
		down := between(rng, session+6*time.Second, session+10*time.Second)
		if kind == KindWorkerKillRestart {
			down = between(rng, time.Second, 3*time.Second)
		}
		ev.Detail = fmt.Sprintf("SIGKILL %s, restart after %v", w.Name, down.Round(100*time.Millisecond))
		ev.At = time.Now()
		pid := w.pid()
		if err := w.sigkill(); err != nil {
			fail(err)
		}
		r.events.add(ev)
		r.checkPluginsDie(ctx, pid, w.Name)
		sleepCtx(ctx, down)
		rj := r.events.add(&event{Kind: kindRejoin, Consequence: true, At: time.Now(), Detail: w.Name + " restarted"})
		if err := r.cl.start(ctx, w); err != nil {
			rj.Err = err.Error()
			r.violate("restarting %s after SIGKILL: %v", w.Name, err)
		}
	case KindWorkerZombie:
		w := r.pickBaseWorker(rng)
		d := between(rng, session+2*time.Second, session+6*time.Second)
		ev.Detail = fmt.Sprintf("SIGSTOP %s for %v, then SIGCONT", w.Name, d.Round(100*time.Millisecond))
		ev.At = time.Now()
		if err := w.sigstop(); err != nil {
			fail(err)
		}
		r.events.add(ev)
		sleepCtx(ctx, d)
		if err := w.sigcont(); err != nil {
			r.violate("SIGCONT %s: %v", w.Name, err)
		}
	case KindWorkerAdd:
		ev.At = time.Now()
		r.extra++
		name := "x" + strconv.Itoa(r.extra)
		ev.Detail = "start worker " + name
		r.events.add(ev)
		if _, err := r.cl.add(ctx, name); err != nil {
			fail(err)
			r.violate("adding worker %s: %v", name, err)
		}
	case KindWorkerRemove:
		w := r.extraWorker()
		if w == nil {
			return
		}
		ev.Detail = "SIGTERM " + w.Name + " (graceful leave)"
		ev.At = time.Now()
		r.events.add(ev)
		if !w.remove(r.opts.ShutdownTimeout + 15*time.Second) {
			r.violate("worker %s did not exit within task.shutdown.graceful.timeout.ms + 15 s of SIGTERM", w.Name)
		} else if err := w.process().exitErr(); err != nil {
			r.violate("worker %s exited with %v after SIGTERM\n%s", w.Name, err, w.process().logTail(20))
		}
	case KindBrokerRestart:
		ev.Detail = "scripts/kafka.sh restart (same data dir and port)"
		ev.At = time.Now()
		r.events.add(ev)
		start := time.Now()
		if err := r.broker.restart(ctx); err != nil {
			fail(err)
			r.violate("broker restart: %v", err)
		}
		ev.Detail += fmt.Sprintf(", broker back after %v", time.Since(start).Round(100*time.Millisecond))
		r.progress("broker back after %v", time.Since(start).Round(100*time.Millisecond))
	case KindPauseResume:
		conn := connectorNames[rng.IntN(len(connectorNames))]
		hold := between(rng, 2*time.Second, 6*time.Second)
		ev.Detail = fmt.Sprintf("pause %s, resume after %v", conn, hold.Round(100*time.Millisecond))
		ev.scope = map[string]bool{conn: true}
		cl := r.cl.any(rng.IntN(8))
		if err := cl.Pause(ctx, conn); err != nil {
			ev.At = time.Now()
			fail(err)
			r.events.add(ev)
			return
		}
		r.waitPaused(ctx, conn, 30*time.Second)
		sleepCtx(ctx, hold)
		ev.At = time.Now() // recovery counts from the resume
		if err := r.cl.any(rng.IntN(8)).Resume(ctx, conn); err != nil {
			fail(err)
			r.violate("resume %s: %v", conn, err)
		}
		r.events.add(ev)
	case KindRestart:
		conn := connectorNames[rng.IntN(len(connectorNames))]
		ev.Detail = "POST /connectors/" + conn + "/restart?includeTasks=true"
		ev.scope = map[string]bool{conn: true}
		ev.At = time.Now()
		r.events.add(ev)
		if _, err := r.cl.any(rng.IntN(8)).Restart(ctx, conn, true, false); err != nil {
			fail(err)
		}
	case KindConfigUpdate:
		conn, key, val := r.pl.randomUpdate(rng)
		ev.Detail = fmt.Sprintf("PUT %s config: %s=%s", conn, key, val)
		ev.scope = map[string]bool{conn: true}
		ev.At = time.Now()
		r.events.add(ev)
		cfg := r.pl.config(conn)
		cfg[key] = val
		if _, _, err := r.cl.any(rng.IntN(8)).PutConfig(ctx, conn, cfg); err != nil {
			fail(err)
			return
		}
		r.pl.set(conn, cfg)
	case KindBadREST:
		ev.At = time.Now()
		r.events.add(ev)
		n, bad := r.badREST(ctx, rng)
		ev.Detail = fmt.Sprintf("%d invalid requests, %d answered other than 4xx", n, bad)
	}
}

func (in injector) background(ctx context.Context, rng *rand.Rand, kind string) {
	r := in.r
	ev := &event{Kind: kind, At: time.Now()}
	switch kind {
	case KindPluginKill:
		var cands []proc
		for _, p := range processesUnder(r.pluginDir) {
			if w := r.workerByPID(p.PPID); w != nil && w.up() {
				cands = append(cands, p)
			}
		}
		if len(cands) == 0 {
			return
		}
		p := cands[rng.IntN(len(cands))]
		class := r.classOf[p.Exe]
		conns := r.pl.connectorsOf(class)
		w := r.workerByPID(p.PPID)
		ev.Detail = fmt.Sprintf("SIGKILL plugin %s (%s, pid %d) on %s", strings.Join(conns, "+"), class, p.PID, w.Name)
		ev.scope = pluginKillScope(conns)
		ev.worker = w.Name
		ev.Hosted = r.mon.hostedOn(w.Name, ev.scope)
		if err := syscall.Kill(p.PID, syscall.SIGKILL); err != nil {
			ev.Err = err.Error()
		}
	case KindAeroErrors:
		f := []aerofake.ControlFault{
			{Ops: []string{"write"}, Times: 5 + rng.IntN(40), ResultCode: int(aerofake.KeyBusy)},
			{Ops: []string{"write"}, Times: 3 + rng.IntN(15), ResultCode: int(aerofake.Timeout), AfterApply: true},
			{Ops: []string{"read"}, Times: 2 + rng.IntN(8), DropConnection: true},
			{Ops: []string{"batch"}, Times: 2 + rng.IntN(5), ResultCode: int(aerofake.PartitionUnavailable)},
			{Ops: []string{"write"}, Times: 2 + rng.IntN(6), DropConnection: true, AfterApply: true},
			{Ops: []string{"batch"}, Times: 1 + rng.IntN(3), ResultCode: int(aerofake.Timeout), AfterApply: true},
			{Ops: []string{"write"}, Times: 5 + rng.IntN(20), ResultCode: int(aerofake.ServerMemError)},
		}[rng.IntN(7)]
		ev.Detail = fmt.Sprintf("%+v", f)
		ev.scope = map[string]bool{connSink: true}
		ev.failuresOnly = true
		if rng.IntN(6) == 0 {
			ev.Detail = "drop every client connection"
			if err := r.aero.dropConnections(ctx); err != nil {
				ev.Err = err.Error()
			}
		} else if err := r.aero.inject(ctx, f); err != nil {
			ev.Err = err.Error()
		}
	case KindAeroLatency:
		// Whole batch commands (the sink's reads and writes are batches);
		// a delay per batch row would multiply.
		f := aerofake.ControlFault{Ops: []string{"batch"}, Times: 20 + rng.IntN(200), DelayMS: int64(20 + rng.IntN(700))}
		ev.Detail = fmt.Sprintf("%d ms on the next %d commands", f.DelayMS, f.Times)
		ev.scope = map[string]bool{connSink: true}
		ev.failuresOnly = true
		if err := r.aero.inject(ctx, f); err != nil {
			ev.Err = err.Error()
		}
	case KindBadRecords:
		n, kinds, err := r.produceBad(ctx, rng, 1+rng.IntN(4))
		ev.Detail = fmt.Sprintf("%d malformed records into %s: %v", n, r.pl.source, kinds)
		ev.scope = map[string]bool{connRepl: true, connSink: true}
		ev.failuresOnly = true
		if err != nil {
			ev.Err = err.Error()
		}
	}
	r.events.add(ev)
}

// pluginKillScope is the scope of a plugin process's SIGKILL: every
// connector of its plugin, because a worker runs one process per plugin
// hosting all of them (a connector whose tasks run elsewhere has no
// episode on the event's worker, so it is not charged).
func pluginKillScope(conns []string) map[string]bool {
	scope := make(map[string]bool, len(conns))
	for _, c := range conns {
		scope[c] = true
	}
	return scope
}

func sleepCtx(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
