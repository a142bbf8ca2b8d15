package chaos

import (
	"context"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/connectd/connectd/framework/rest/api"
)

// unit is a connector instance (Task -1) or one of its tasks.
type unit struct {
	Connector string
	Task      int
}

func (u unit) String() string {
	if u.Task < 0 {
		return u.Connector
	}
	return fmt.Sprintf("%s-%d", u.Connector, u.Task)
}

// episode is a period during which a unit was not running.
type episode struct {
	Unit       unit
	Start, End time.Time // End zero: still open
	Why        string    // what was seen first
	Worker     string    // the worker its status named when it went down
}

// monitor polls the connectors' statuses and keeps, per unit, the periods
// it was not running. "Running" is stricter than the status topic: the
// status must be RUNNING, the worker it names must be up (not killed, not
// SIGSTOPped), and that worker must have a live plugin process of the
// connector's class. A status topic keeps saying RUNNING for tasks of a
// worker that was just killed until another worker takes them over; this
// overlay counts that time as down, which it is.
type monitor struct {
	cl        *cluster
	pl        *pipeline
	pluginDir string
	classOf   map[string]string // plugin binary path → connector class
	log       *slog.Logger
	interval  time.Duration

	mu        sync.Mutex
	open      map[unit]*episode
	closed    []episode
	lastOK    time.Time       // last poll at which everything ran
	runsOn    map[unit]string // the worker each unit's status named at the last poll
	lastPoll  time.Time
	allOK     bool
	failed    map[unit]string // units seen FAILED, with the trace (first line)
	orphans   map[int]time.Time
	orphanErr []string
	polls     int
	pollFails int
}

func newMonitor(cl *cluster, pl *pipeline, pluginDir string, classOf map[string]string, log *slog.Logger) *monitor {
	return &monitor{cl: cl, pl: pl, pluginDir: pluginDir, classOf: classOf, log: log, interval: 500 * time.Millisecond,
		open: map[unit]*episode{}, failed: map[unit]string{}, orphans: map[int]time.Time{}, runsOn: map[unit]string{}}
}

func (m *monitor) run(ctx context.Context) {
	t := time.NewTicker(m.interval)
	defer t.Stop()
	i := 0
	for {
		m.poll(ctx, i)
		i++
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// statuses fetches every connector's status from one up worker.
func (m *monitor) statuses(ctx context.Context, i int) (map[string]api.ConnectorStateInfo, error) {
	ws := m.cl.upWorkers()
	if len(ws) == 0 {
		return nil, fmt.Errorf("no worker is up")
	}
	var lastErr error
	for j := range ws {
		w := ws[(i+j)%len(ws)]
		cl := m.cl.client(w)
		out := map[string]api.ConnectorStateInfo{}
		cctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		var err error
		for _, name := range connectorNames {
			var st api.ConnectorStateInfo
			st, err = cl.Status(cctx, name)
			if err != nil {
				break
			}
			out[name] = st
		}
		cancel()
		if err == nil {
			return out, nil
		}
		lastErr = err
	}
	return nil, lastErr
}

func (m *monitor) poll(ctx context.Context, i int) {
	now := time.Now()
	sts, err := m.statuses(ctx, i)
	procs := processesUnder(m.pluginDir)
	m.mu.Lock()
	defer m.mu.Unlock()
	m.polls++
	m.checkOrphans(now, procs)
	if err != nil {
		m.pollFails++
		return
	}
	// Which workers (by pid) run a plugin process of which class.
	type key struct {
		ppid  int
		class string
	}
	hasPlugin := map[key]bool{}
	for _, p := range procs {
		hasPlugin[key{p.PPID, m.classOf[p.Exe]}] = true
	}
	nameOf := func(workerID string) string {
		if w := m.cl.byID(workerID); w != nil {
			return w.Name
		}
		return workerID
	}
	running := func(conn, state, workerID string) (bool, string) {
		if state != "RUNNING" {
			return false, state
		}
		w := m.cl.byID(workerID)
		if w == nil {
			return false, "RUNNING on unknown worker " + workerID
		}
		if !w.up() {
			return false, "RUNNING on " + w.Name + " which is down"
		}
		if !hasPlugin[key{w.pid(), m.pl.class(conn)}] {
			return false, "RUNNING on " + w.Name + " without a plugin process"
		}
		return true, ""
	}
	all := true
	seen := map[unit]bool{}
	for _, name := range connectorNames {
		st := sts[name]
		ok, why := running(name, st.Connector.State, st.Connector.WorkerID)
		if st.Connector.State == "FAILED" {
			m.failed[unit{name, -1}] = firstLine(st.Connector.Trace)
		}
		m.observe(now, unit{name, -1}, ok, why, nameOf(st.Connector.WorkerID))
		m.runsOn[unit{name, -1}] = nameOf(st.Connector.WorkerID)
		seen[unit{name, -1}] = true
		all = all && ok
		want := m.pl.tasks(name)
		byID := map[int]api.TaskState{}
		for _, ts := range st.Tasks {
			byID[ts.ID] = ts
		}
		for id := range want {
			u := unit{name, id}
			seen[u] = true
			ts, has := byID[id]
			if !has {
				m.observe(now, u, false, "no status", "")
				all = false
				continue
			}
			if ts.State == "FAILED" {
				m.failed[u] = firstLine(ts.Trace)
			}
			ok, why := running(name, ts.State, ts.WorkerID)
			m.observe(now, u, ok, why, nameOf(ts.WorkerID))
			m.runsOn[u] = nameOf(ts.WorkerID)
			all = all && ok
		}
	}
	// Units that no longer exist (fewer tasks) end their episodes.
	for u := range m.open {
		if !seen[u] {
			m.observe(now, u, true, "", "")
		}
	}
	m.allOK = all
	m.lastPoll = now
	if all {
		m.lastOK = now
	}
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

// observe records one unit's state (m.mu held). A unit that is still down
// but now named on another worker ends its episode there and begins a new
// one: the cluster has moved it, and what keeps it down from then on (a
// plugin crash on the new worker, say) is a fault of its own, to which the
// new episode is attributed, not to the fault that began the first.
func (m *monitor) observe(now time.Time, u unit, ok bool, why, worker string) {
	e, isOpen := m.open[u]
	if !ok && isOpen && worker != "" && e.Worker != "" && worker != e.Worker {
		e.End = now
		m.closed = append(m.closed, *e)
		delete(m.open, u)
		m.log.Debug("unit moved while down", "unit", u.String(), "from", e.Worker, "to", worker, "why", why, "after", now.Sub(e.Start).Round(time.Millisecond))
		isOpen = false
	}
	switch {
	case !ok && !isOpen:
		m.open[u] = &episode{Unit: u, Start: now, Why: why, Worker: worker}
		m.log.Debug("unit down", "unit", u.String(), "why", why, "worker", worker)
	case ok && isOpen:
		e.End = now
		m.closed = append(m.closed, *e)
		delete(m.open, u)
		m.log.Debug("unit up", "unit", u.String(), "after", now.Sub(e.Start).Round(time.Millisecond))
	}
}

// checkOrphans flags plugin processes whose parent is not an up-or-stopped
// worker of ours for more than 5 s (m.mu held). A killed worker's plugins
// exit within moments (Pdeathsig, and their own parent watchdog).
func (m *monitor) checkOrphans(now time.Time, procs []proc) {
	workerPIDs := map[int]bool{}
	for _, w := range m.cl.list() {
		if pid := w.pid(); pid != 0 {
			workerPIDs[pid] = true
		}
	}
	current := map[int]bool{}
	for _, p := range procs {
		if workerPIDs[p.PPID] {
			continue
		}
		current[p.PID] = true
		first, ok := m.orphans[p.PID]
		if !ok {
			m.orphans[p.PID] = now
			continue
		}
		if now.Sub(first) > 5*time.Second && first.Year() > 1 {
			m.orphanErr = append(m.orphanErr, fmt.Sprintf("plugin process %d (%s) outlived its worker by more than 5 s (parent %d)", p.PID, p.Exe, p.PPID))
			m.orphans[p.PID] = time.Time{} // report once
		}
	}
	for pid := range m.orphans {
		if !current[pid] {
			delete(m.orphans, pid)
		}
	}
}

// healthy reports whether the last poll, no older than maxAge, saw every
// unit running.
// hostedOn lists the units of the given connectors that the last poll
// saw on a worker: what a plugin process there hosts.
func (m *monitor) hostedOn(worker string, conns map[string]bool) []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for u, w := range m.runsOn {
		if w == worker && conns[u.Connector] {
			out = append(out, u.String())
		}
	}
	sort.Strings(out)
	return out
}

func (m *monitor) healthy(maxAge time.Duration) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.allOK && time.Since(m.lastPoll) <= maxAge
}

// waitHealthy waits until a poll after now sees every unit running.
func (m *monitor) waitHealthy(ctx context.Context, timeout time.Duration) error {
	since := time.Now()
	deadline := since.Add(timeout)
	for {
		m.mu.Lock()
		ok := m.allOK && m.lastPoll.After(since)
		m.mu.Unlock()
		if ok {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not every connector and task ran within %v: %s", timeout, m.downSummary())
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// downSummary lists the units that are down now.
func (m *monitor) downSummary() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var parts []string
	for u, e := range m.open {
		parts = append(parts, fmt.Sprintf("%s (%s for %v)", u, e.Why, time.Since(e.Start).Round(time.Second)))
	}
	sort.Strings(parts)
	if len(parts) == 0 {
		return "every unit is running"
	}
	return strings.Join(parts, ", ")
}

// episodes returns every episode, open ones ended at now.
func (m *monitor) episodes() []episode {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := append([]episode(nil), m.closed...)
	for _, e := range m.open {
		x := *e
		x.End = time.Now()
		out = append(out, x)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Start.Before(out[j].Start) })
	return out
}

func (m *monitor) orphanViolations() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.orphanErr...)
}

func (m *monitor) failures() map[unit]string {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := map[unit]string{}
	for k, v := range m.failed {
		out[k] = v
	}
	return out
}
