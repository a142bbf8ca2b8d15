package worker

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/connectd/connectd/framework/connconfig"
	"github.com/connectd/connectd/plugins/host"
)

// procEntry is one plugin process slot on this worker: the process of a
// plugin binary, shared by every connector instance and task of that
// plugin here (plugin.isolation=plugin), or a connector's own
// (plugin.isolation=connector).
type procEntry struct {
	plugin   string // the plugin's class
	isolated string // the connector whose own process this is; "" when shared

	mu    sync.Mutex // serializes launches
	proc  *host.Process
	users int // acquisitions not yet released, of proc and of the processes it replaced
	// dead is the process that exited under its users and has not been
	// replaced yet: the next launch counts as a restart.
	dead *host.Process
	// current mirrors proc for metrics, which must not wait for a launch;
	// after a crash it keeps the dead process until the next launch.
	current atomic.Pointer[host.Process]

	// cmu guards conns and crashed, read by metrics without mu.
	cmu   sync.Mutex
	conns map[string]int // acquisitions not yet released, by connector
	// crashed are the connectors that used a process which then exited
	// unexpectedly, until its replacement is launched: their restart
	// counters go up then.
	crashed map[string]bool
}

// procKey names the process a connector uses on this worker: its plugin
// binary's, or its own. A binary is its file and the checksum its manifest
// pins (class and version): two manifests that claim the same checksum for
// different files never share a process, or a file that no longer matches
// its manifest would be served by another file's running process instead
// of being refused at launch.
func procKey(m host.Manifest, connector, isolation string) string {
	if isolation == connconfig.IsolationConnector {
		return "connector\x00" + connector
	}
	return "plugin\x00" + m.Path() + "\x00" + m.SHA256
}

// isolation is the connector's plugin.isolation, or the worker's default.
func (w *Worker) isolation(props map[string]string) (string, error) {
	switch v := strings.TrimSpace(props[KeyPluginIsolation]); v {
	case "":
		return w.cfg.PluginIsolation, nil
	case connconfig.IsolationPlugin, connconfig.IsolationConnector:
		return v, nil
	default:
		return "", &ConfigError{Key: KeyPluginIsolation, Message: fmt.Sprintf("Invalid value %s for configuration %s: String must be one of: %s, %s",
			v, KeyPluginIsolation, connconfig.IsolationPlugin, connconfig.IsolationConnector)}
	}
}

// entry returns the slot of key, creating it.
func (w *Worker) entry(key string, m host.Manifest, isolated string) (*procEntry, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return nil, ErrClosed
	}
	e := w.procs[key]
	if e == nil {
		e = &procEntry{plugin: m.Name, isolated: isolated, conns: map[string]int{}, crashed: map[string]bool{}}
		w.procs[key] = e
	}
	return e, nil
}

func (w *Worker) launchOptions() host.LaunchOptions {
	opts := w.cfg.PluginLaunch
	if opts.Logger == nil {
		opts.Logger = w.log
	}
	// Every connector of a plugin may share the process.
	return opts
}

// acquireProcess returns the plugin process the connector uses on this
// worker, launching it (again, after a crash) when needed. release must be
// called once; the process stops when its last user releases it.
func (w *Worker) acquireProcess(ctx context.Context, connector string, props map[string]string) (*host.Process, host.Manifest, func(), error) {
	m, err := w.lookupPlugin(props)
	if err != nil {
		return nil, host.Manifest{}, nil, err
	}
	iso, err := w.isolation(props)
	if err != nil {
		return nil, m, nil, err
	}
	isolated := ""
	if iso == connconfig.IsolationConnector {
		isolated = connector
	}
	e, err := w.entry(procKey(m, connector, iso), m, isolated)
	if err != nil {
		return nil, m, nil, err
	}
	// The restart counter's series exists from the first acquisition, so
	// that increase() sees the first restart.
	w.metrics.pluginRestarts.WithLabelValues(connector)

	e.mu.Lock()
	defer e.mu.Unlock()
	if e.proc == nil || exited(e.proc) || e.proc.Manifest().SHA256 != m.SHA256 {
		if err := w.launchInto(ctx, e, m, connector); err != nil {
			return nil, m, nil, err
		}
	}
	p := e.proc
	e.users++
	e.cmu.Lock()
	e.conns[connector]++
	e.cmu.Unlock()
	var once sync.Once
	release := func() { once.Do(func() { w.release(e, p, connector) }) }
	return p, m, release, nil
}

// launchInto launches e's process, replacing a dead one or one of an older
// binary (an isolated connector's new version). Called with e.mu held.
func (w *Worker) launchInto(ctx context.Context, e *procEntry, m host.Manifest, connector string) error {
	// A replacement keeps its slot; a first process takes one.
	slot := e.proc == nil
	if slot && !w.reserveProcess() {
		return &ProcessLimitError{Connector: connector, Limit: w.cfg.MaxPluginProcesses}
	}
	opts := w.launchOptions()
	// The process-level connector attribute only when the process is the
	// connector's own: in a shared one, the SDK's loggers carry it.
	opts.Connector = e.isolated
	label := e.isolated
	if label == "" {
		// Lines are dropped before they are read, so a shared process's
		// drops cannot be told apart by connector.
		label = e.plugin
	}
	drops := w.metrics.pluginLogDrops.WithLabelValues(label)
	opts.OnLogDropped = func(n int) { drops.Add(float64(n)) }
	p, err := host.Launch(ctx, m, opts)
	if err != nil {
		if slot {
			w.liveProcs.Add(-1)
		}
		return err
	}
	restart := e.dead != nil || (e.proc != nil && exited(e.proc))
	e.cmu.Lock()
	if restart {
		// Every connector that lived in the dead process: those still
		// holding it and those that already let it go.
		for c, n := range e.conns {
			if n > 0 {
				e.crashed[c] = true
			}
		}
		for c := range e.crashed {
			// A connector deleted since keeps no series (forgetIfGone).
			if w.hasWork(c) {
				w.metrics.pluginRestarts.WithLabelValues(c).Inc()
			}
		}
	}
	clear(e.crashed)
	e.cmu.Unlock()
	if old := e.proc; old != nil {
		// A crashed process, or an older binary: its users fail or
		// finish on their own.
		go func() { _ = old.Close(context.Background()) }()
	}
	e.dead = nil
	e.proc = p
	e.current.Store(p)
	return nil
}

// release gives back one acquisition of p by connector, stopping p when it
// was the last.
func (w *Worker) release(e *procEntry, p *host.Process, connector string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.users--
	gone := exited(p)
	e.cmu.Lock()
	if connector != "" {
		if e.conns[connector]--; e.conns[connector] <= 0 {
			delete(e.conns, connector)
		}
		if gone && (e.proc == p || e.dead == p) {
			e.crashed[connector] = true
		}
	}
	e.cmu.Unlock()
	if e.users > 0 || e.proc != p {
		return
	}
	e.proc = nil
	w.liveProcs.Add(-1)
	if gone {
		// It died under its users: the next launch is a restart, and
		// until then the metrics show it down.
		e.dead = p
	} else {
		e.current.Store(nil)
	}
	if e.isolated == "" && !w.sharedRunning(e) {
		// A shared process's drops are labelled by plugin (an isolated
		// one's by connector, which forgetIfGone drops): the plugin left
		// with its last user leaves no series.
		w.metrics.pluginLogDrops.DeleteLabelValues(e.plugin)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_ = p.Close(ctx)
}

// sharedRunning reports whether another shared process of self's plugin
// class (another version) is up on this worker.
func (w *Worker) sharedRunning(self *procEntry) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, e := range w.procs {
		if e != self && e.isolated == "" && e.plugin == self.plugin && e.current.Load() != nil {
			return true
		}
	}
	return false
}

// validationProcess returns a process to validate a config of m with: the
// running shared process of that plugin binary when there is one, else a
// short-lived one (not counted by MaxPluginProcesses). done must be called
// once.
func (w *Worker) validationProcess(ctx context.Context, m host.Manifest) (*host.Process, func(), error) {
	w.mu.Lock()
	e := w.procs[procKey(m, "", connconfig.IsolationPlugin)]
	w.mu.Unlock()
	if e != nil {
		e.mu.Lock()
		p := e.proc
		if p != nil && !exited(p) {
			e.users++
			e.mu.Unlock()
			var once sync.Once
			return p, func() { once.Do(func() { w.release(e, p, "") }) }, nil
		}
		e.mu.Unlock()
	}
	p, err := host.Launch(ctx, m, w.launchOptions())
	if err != nil {
		return nil, nil, err
	}
	return p, func() { _ = p.Close(context.WithoutCancel(ctx)) }, nil
}

// closeProcesses stops every plugin process (Close).
func (w *Worker) closeProcesses(ctx context.Context) {
	w.mu.Lock()
	procs := w.procs
	w.procs = map[string]*procEntry{}
	w.mu.Unlock()
	for _, e := range procs {
		e.mu.Lock()
		if e.proc != nil {
			_ = e.proc.Close(ctx)
		}
		e.current.Store(nil)
		e.mu.Unlock()
	}
}

// entries returns the process slots.
func (w *Worker) entries() []*procEntry {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]*procEntry, 0, len(w.procs))
	for _, e := range w.procs {
		out = append(out, e)
	}
	return out
}

// connectors lists the connectors that use e's process or used its dead
// predecessor.
func (e *procEntry) connectors() []string {
	e.cmu.Lock()
	defer e.cmu.Unlock()
	out := make([]string, 0, len(e.conns)+len(e.crashed))
	for c := range e.conns {
		out = append(out, c)
	}
	for c := range e.crashed {
		if e.conns[c] == 0 {
			out = append(out, c)
		}
	}
	sort.Strings(out)
	return out
}

// PluginVersion is the version of the plugin the connector's process on
// this worker runs ("" when none has been launched): what its status
// reports.
func (w *Worker) PluginVersion(connector string) string {
	w.mu.Lock()
	c := w.connectors[connector]
	w.mu.Unlock()
	if c != nil {
		c.mu.Lock()
		v := c.version
		c.mu.Unlock()
		if v != "" {
			return v
		}
	}
	version := ""
	for _, e := range w.entries() {
		p := e.current.Load()
		if p == nil {
			continue
		}
		for _, c := range e.connectors() {
			// During a version change the connector may use two; the
			// live one wins.
			if c == connector && (version == "" || !exited(p)) {
				version = p.Manifest().Version
			}
		}
	}
	return version
}

// reserveProcess takes a plugin-process slot if one is free.
func (w *Worker) reserveProcess() bool {
	for {
		n := w.liveProcs.Load()
		if n >= int64(w.cfg.MaxPluginProcesses) {
			return false
		}
		if w.liveProcs.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

func exited(p *host.Process) bool {
	select {
	case <-p.Done():
		return true
	default:
		return false
	}
}

// PluginProcess is a running plugin process.
type PluginProcess struct {
	// Connector is the connector whose own process it is
	// (plugin.isolation=connector); "" for a plugin's shared process.
	Connector string
	Plugin    string   // the plugin's class
	Conns     []string // the connectors with work in it, sorted
	Process   *host.Process
}

// PluginProcesses lists the plugin processes running on this worker, each
// once, sorted by plugin and connector: their Gather is the plugin side of
// the worker's /metrics.
func (w *Worker) PluginProcesses() []PluginProcess {
	var out []PluginProcess
	for _, e := range w.entries() {
		if p := e.current.Load(); p != nil && !exited(p) {
			out = append(out, PluginProcess{Connector: e.isolated, Plugin: e.plugin, Conns: e.connectors(), Process: p})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Plugin != out[j].Plugin {
			return out[i].Plugin < out[j].Plugin
		}
		return out[i].Connector < out[j].Connector
	})
	return out
}
