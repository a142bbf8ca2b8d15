package herder

import (
	"errors"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// rebalanceMetrics tracks rebalances as this worker sees them. In
// connectd's protocol a rebalance is complete when the worker applies a
// new assignment generation; it starts when the group membership changes
// (or, for rebalances the leader starts on its own, such as a new
// connector, is complete at once).
type rebalanceMetrics struct {
	completed prometheus.Counter
	duration  prometheus.Histogram
	timeout   time.Duration // a change with no new generation stops counting as a rebalance after this

	mu        sync.Mutex
	gen       int32
	applied   bool      // gen has been set once
	pending   bool      // a membership change awaits a new generation
	since     time.Time // start of the pending rebalance
	lastApply time.Time
}

// membershipChanged marks the start of a rebalance.
func (r *rebalanceMetrics) membershipChanged() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.pending {
		r.pending, r.since = true, time.Now()
	}
}

// generationApplied ends a rebalance when gen is new.
func (r *rebalanceMetrics) generationApplied(gen int32) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.applied && gen == r.gen {
		return
	}
	now := time.Now()
	r.gen, r.applied, r.lastApply = gen, true, now
	r.completed.Inc()
	d := time.Duration(0)
	if r.pending {
		d = now.Sub(r.since)
	}
	r.duration.Observe(d.Seconds())
	r.pending = false
}

// rebalancing reports whether a membership change awaits its assignment.
func (r *rebalanceMetrics) rebalancing() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.pending && time.Since(r.since) < r.timeout
}

// collector reports what is read at scrape time: leadership, the current
// generation and this worker's share of the assignment.
type collector struct {
	h *Herder

	leader, generation, rebalancing, lastRebalance *prometheus.Desc
	workers, assignedConnectors, assignedTasks     *prometheus.Desc
}

func newCollector(h *Herder) *collector {
	return &collector{
		h:             h,
		leader:        prometheus.NewDesc("connectd_worker_leader", "1 while this worker leads the cluster (leader-name).", nil, nil),
		generation:    prometheus.NewDesc("connectd_worker_assignment_generation", "Generation of the assignment this worker applied last (rebalance epoch).", nil, nil),
		rebalancing:   prometheus.NewDesc("connectd_worker_rebalancing", "1 while the group membership changed and this worker waits for the new assignment (rebalancing).", nil, nil),
		lastRebalance: prometheus.NewDesc("connectd_worker_last_rebalance_timestamp_seconds", "When this worker last applied a new assignment generation, as a Unix time (time-since-last-rebalance-ms is time() minus this).", nil, nil),
		workers:       prometheus.NewDesc("connectd_cluster_workers", "Workers in the assignment this worker applied last.", nil, nil),
		assignedConnectors: prometheus.NewDesc("connectd_worker_assigned_connectors",
			"Connectors assigned to this worker (connector-count, assigned-connectors).", nil, nil),
		assignedTasks: prometheus.NewDesc("connectd_worker_assigned_tasks",
			"Tasks assigned to this worker (task-count, assigned-tasks).", nil, nil),
	}
}

func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.leader, c.generation, c.rebalancing, c.lastRebalance, c.workers, c.assignedConnectors, c.assignedTasks} {
		ch <- d
	}
}

func (c *collector) Collect(ch chan<- prometheus.Metric) {
	h := c.h
	gauge := func(d *prometheus.Desc, v float64) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v)
	}
	b := func(v bool) float64 {
		if v {
			return 1
		}
		return 0
	}
	gauge(c.leader, b(h.IsLeader()))
	gauge(c.generation, float64(h.Generation()))
	gauge(c.rebalancing, b(h.rebal.rebalancing()))
	h.rebal.mu.Lock()
	last := h.rebal.lastApply
	h.rebal.mu.Unlock()
	if !last.IsZero() {
		gauge(c.lastRebalance, float64(last.UnixNano())/1e9)
	}
	var conns, tasks, workers int
	if h.local != nil {
		if mine := h.local.mine.Load(); mine != nil {
			conns, tasks = len(mine.Connectors), len(mine.TaskIDs())
		}
	}
	if h.configs != nil {
		if a := h.configs.Snapshot().Assignment(); a != nil {
			workers = len(a.Workers)
		}
	}
	gauge(c.workers, float64(workers))
	gauge(c.assignedConnectors, float64(conns))
	gauge(c.assignedTasks, float64(tasks))
}

// registerMetrics registers the herder's metrics on reg (nil: nowhere).
func (h *Herder) registerMetrics(reg prometheus.Registerer) error {
	h.rebal = &rebalanceMetrics{
		// A group rebalance that brings no new assignment within a session
		// timeout re-formed the group with the same workers (a static
		// member rejoining, a second cooperative round): nothing is waited
		// for any more. A rebalance that moves work produces its
		// generation well within that (the leader acts on the callback).
		timeout: h.cfg.SessionTimeout,
		completed: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "connectd_worker_rebalances_total",
			Help: "New assignment generations this worker applied: completed rebalances (completed-rebalances-total).",
		}),
		duration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "connectd_worker_rebalance_duration_seconds",
			Help:    "From a group membership change to this worker applying the new assignment; 0 for rebalances the leader starts itself, such as a new connector (rebalance-avg/max-time-ms).",
			Buckets: []float64{0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15, 30, 60, 120},
		}),
	}
	if reg == nil {
		return nil
	}
	for _, c := range []prometheus.Collector{h.rebal.completed, h.rebal.duration, newCollector(h)} {
		if err := reg.Register(c); err != nil {
			var are prometheus.AlreadyRegisteredError
			if errors.As(err, &are) {
				return errors.New("herder: metrics are already registered on this registerer (one herder per registry)")
			}
			return err
		}
	}
	return nil
}
