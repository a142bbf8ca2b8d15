package worker

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/connectd/connectd/plugins/host"
)

// connectorRuntime runs one connector instance (the part that validates
// and splits work into task configs) in the connector's plugin process,
// restarting it with backoff when it fails.
type connectorRuntime struct {
	w             *Worker
	name          string
	props         map[string]string
	onReconfigure func(string)
	log           *slog.Logger

	// life ends when the instance is stopped for good (StopConnector):
	// launches waiting for a start slot give up.
	life    context.Context
	endLife context.CancelFunc

	mu      sync.Mutex
	target  TargetState
	state   State
	conn    *host.Connector
	release func()
	// version is the plugin version of the process the running instance
	// uses: what its status reports, even while a version change leaves
	// the older process running for others.
	version string
	gen     int // bumps on every (re)start; stale event loops stop
	stopped bool
	retry   *time.Timer

	// launched is closed once the launch of StartConnector (or of a
	// resume from STOPPED) has succeeded or failed; guarded by mu.
	launched chan struct{}
	// reportMu keeps a launch's RUNNING from landing after the
	// UNASSIGNED of a stop that overtook it.
	reportMu sync.Mutex
	attempt  int
}

// StartConnector starts a connector instance in the target state; its
// task configurations are then available from ConnectorTaskConfigs.
// onReconfigure is called when the connector asks for its tasks to be
// reconfigured. A connector that fails (or whose plugin dies) is reported
// FAILED and restarted with backoff.
//
// It returns before the plugin process is launched: the caller (the
// herder's assignment loop, which REST requests may wait for) must not
// wait for a plugin to start. ConnectorTaskConfigs waits for the launch.
func (w *Worker) StartConnector(ctx context.Context, name string, props map[string]string, target TargetState, onReconfigure func(name string)) error {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return ErrClosed
	}
	if _, ok := w.connectors[name]; ok {
		w.mu.Unlock()
		return fmt.Errorf("start connector %s: already running on this worker", name)
	}
	if target == "" {
		target = TargetStarted
	}
	if onReconfigure == nil {
		onReconfigure = func(string) {}
	}
	c := &connectorRuntime{
		w: w, name: name, props: clone(props), onReconfigure: onReconfigure,
		log: w.log.With("connector", name), target: target, state: StateUnassigned,
		launched: make(chan struct{}),
	}
	// Not bound to ctx, which ends when the herder stops applying
	// assignments: as with the automatic restarts, a stop that overtakes
	// the launch stops what it started (launch checks stopped).
	c.life, c.endLife = context.WithCancel(context.WithoutCancel(ctx))
	w.connectors[name] = c
	w.mu.Unlock()
	if target == TargetStopped {
		close(c.launched)
		c.report(StateStopped, "")
		return nil
	}
	launched := c.launched
	go func() {
		defer close(launched)
		if err := c.launch(c.life); err != nil {
			// Like a task, a connector that cannot start is FAILED and
			// retried.
			c.failed(err)
		}
	}()
	return nil
}

func (c *connectorRuntime) report(s State, trace string) {
	c.reportMu.Lock()
	defer c.reportMu.Unlock()
	c.reportLocked(s, trace)
}

func (c *connectorRuntime) reportLocked(s State, trace string) {
	c.mu.Lock()
	c.state = s
	c.mu.Unlock()
	if s == StateFailed {
		c.log.Error("connector failed", "trace", trace)
	} else {
		c.log.Info("connector state", "state", string(s))
	}
	c.w.status.ConnectorState(c.name, s, trace)
}

func (c *connectorRuntime) launch(ctx context.Context) (err error) {
	defer func() {
		if err != nil {
			c.w.metrics.connectorStartups.WithLabelValues("failure").Inc()
		}
	}()
	// The instance holds a start slot while its plugin process launches
	// and it starts (Config.StartConcurrency); the launch's time limit
	// starts once it has one.
	started, err := c.w.starts.acquire(ctx)
	if err != nil {
		return fmt.Errorf("waiting for a start slot (%s): %w", KeyStartConcurrency, err)
	}
	defer started()
	c.mu.Lock()
	stopped := c.stopped
	c.mu.Unlock()
	if stopped {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	p, _, release, err := c.w.acquireProcess(ctx, c.name, c.props)
	if err != nil {
		return err
	}
	conn, err := p.StartConnector(ctx, c.name, c.props)
	if err != nil {
		release()
		return err
	}
	c.mu.Lock()
	if c.stopped {
		c.mu.Unlock()
		_ = conn.Stop(ctx)
		release()
		return nil
	}
	c.conn, c.release, c.version = conn, release, p.Manifest().Version
	c.gen++
	gen := c.gen
	target := c.target
	c.mu.Unlock()
	c.w.metrics.connectorStartups.WithLabelValues("success").Inc()
	c.reportMu.Lock()
	c.mu.Lock()
	current := c.gen == gen && !c.stopped
	c.mu.Unlock()
	if current {
		if target == TargetPaused {
			c.reportLocked(StatePaused, "")
		} else {
			c.reportLocked(StateRunning, "")
		}
	}
	c.reportMu.Unlock()
	go c.events(conn, gen)
	return nil
}

func (c *connectorRuntime) events(conn *host.Connector, gen int) {
	for ev := range conn.Events() {
		switch ev.Type {
		case host.ReconfigurationRequested:
			c.onReconfigure(c.name)
		case host.Failed:
			c.mu.Lock()
			current := c.gen == gen && !c.stopped
			c.mu.Unlock()
			if current {
				c.failed(ev.Err)
			}
			return
		}
	}
}

// failed reports the failure and schedules a restart with backoff.
func (c *connectorRuntime) failed(err error) {
	c.mu.Lock()
	if c.stopped {
		c.mu.Unlock()
		return
	}
	conn, release := c.conn, c.release
	c.conn, c.release = nil, nil
	c.gen++
	d := backoff(c.w.cfg.RestartBackoffInitial, c.w.cfg.RestartBackoffMax, c.attempt)
	c.attempt++
	auto := !c.w.cfg.DisableAutoRestart
	c.mu.Unlock()
	if conn != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_ = conn.Stop(ctx)
		cancel()
	}
	if release != nil {
		release()
	}
	c.report(StateFailed, err.Error())
	if !auto {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopped {
		return
	}
	c.retry = time.AfterFunc(d, func() {
		c.mu.Lock()
		stopped := c.stopped
		c.mu.Unlock()
		if stopped {
			return
		}
		c.report(StateRestarting, err.Error())
		if err := c.launch(c.life); err != nil {
			c.failed(err)
			return
		}
		c.mu.Lock()
		c.attempt = 0
		c.mu.Unlock()
	})
}

func (c *connectorRuntime) setTarget(ctx context.Context, target TargetState) {
	c.mu.Lock()
	prev := c.target
	c.target = target
	running := c.conn != nil
	c.mu.Unlock()
	switch {
	case target == TargetStopped && prev != TargetStopped:
		c.shutdown(ctx)
		c.mu.Lock()
		c.stopped = false // may start again
		c.mu.Unlock()
		c.report(StateStopped, "")
	case prev == TargetStopped && target != TargetStopped:
		// Off the caller's path, as in StartConnector.
		launched := make(chan struct{})
		c.mu.Lock()
		c.launched = launched
		c.mu.Unlock()
		go func() {
			defer close(launched)
			if err := c.launch(c.life); err != nil {
				c.failed(err)
			}
		}()
	case running && target == TargetPaused:
		c.report(StatePaused, "")
	case running && target == TargetStarted:
		c.report(StateRunning, "")
	}
}

// shutdown stops the instance and any pending restart.
func (c *connectorRuntime) shutdown(ctx context.Context) {
	c.mu.Lock()
	c.stopped = true
	if c.retry != nil {
		c.retry.Stop()
	}
	conn, release := c.conn, c.release
	c.conn, c.release = nil, nil
	c.gen++
	c.mu.Unlock()
	if conn != nil {
		if err := conn.Stop(ctx); err != nil {
			c.log.Warn("connector did not stop cleanly", "error", err)
		}
	}
	if release != nil {
		release()
	}
}

// ConnectorTaskConfigs asks a running connector for at most maxTasks task
// configurations.
func (w *Worker) ConnectorTaskConfigs(ctx context.Context, name string, maxTasks int) ([]map[string]string, error) {
	w.mu.Lock()
	c, ok := w.connectors[name]
	w.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("task configs of %s: %w", name, ErrUnknownConnector)
	}
	c.mu.Lock()
	launched := c.launched
	c.mu.Unlock()
	select {
	case <-launched:
	case <-ctx.Done():
		return nil, fmt.Errorf("task configs of %s: waiting for the connector to start: %w", name, ctx.Err())
	}
	c.mu.Lock()
	conn := c.conn
	c.mu.Unlock()
	if conn == nil {
		return nil, fmt.Errorf("task configs of %s: the connector is not running (state %s)", name, c.currentState())
	}
	return conn.TaskConfigs(ctx, maxTasks)
}

func (c *connectorRuntime) currentState() State {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.state
}

// StopConnector stops a connector instance on this worker (not its tasks:
// the herder stops those with StopTasks).
func (w *Worker) StopConnector(ctx context.Context, name string) error {
	w.mu.Lock()
	c, ok := w.connectors[name]
	delete(w.connectors, name)
	w.mu.Unlock()
	if !ok {
		return fmt.Errorf("stop connector %s: %w", name, ErrUnknownConnector)
	}
	c.shutdown(ctx)
	c.endLife()
	c.report(StateUnassigned, "")
	w.forgetIfGone(name)
	return nil
}
