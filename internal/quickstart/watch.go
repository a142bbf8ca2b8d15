package quickstart

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"github.com/connectd/connectd/framework/rest/client"
)

// WatchOptions configure Watch.
type WatchOptions struct {
	Bootstrap  string
	RESTURL    string
	MetricsURL string // empty: duplicates are not shown
	// Once makes Watch return as soon as the pipeline is complete and
	// verified, or fail at Timeout; otherwise it watches until ctx ends.
	Once     bool
	Timeout  time.Duration
	Interval time.Duration // refresh period (default 1 s)
	Out      io.Writer
	// Live redraws the status block in place (a terminal); otherwise a
	// one-line summary is printed when something changed, at most every
	// LineEvery (default 5 s).
	Live      bool
	LineEvery time.Duration
	// Width is the terminal's width: live lines are cut to it, so that
	// none wraps and the redraw stays in place (0: no limit).
	Width int
}

// ConnectorState is one connector's state as the REST API reports it.
type ConnectorState struct {
	Name         string
	State        string // "" until the worker reports it
	Tasks        int
	RunningTasks int
	Trace        string // first line of a FAILED connector's or task's trace
}

// Snapshot is the pipeline's progress at one moment.
type Snapshot struct {
	At         time.Time
	Connectors []ConnectorState

	Produced        int64 // committed records in the generator's topic
	Replicated      int64 // committed records in the replica topic
	ReplicaExists   bool
	Applied         int64 // records applied to Aerospike (count bins)
	Amounts         map[string]int64
	AmountTotal     int64
	Duplicates      int64
	DuplicatesKnown bool
	// DuplicatesDurable: Duplicates is the sink's stats.set count, which
	// survives restarts; otherwise it is the worker's current plugin
	// process counter, which starts from 0 with every process.
	DuplicatesDurable bool
	Worker            WorkerStatus
	SinkOffsetLag     int64 // the sink group's committed offsets behind the end of its topic
	SinkOffsetLagSet  bool

	Problems []string // what could not be read this time
}

// WorkerStatus is whether the worker's REST API answers, and since when.
type WorkerStatus struct {
	Up    bool
	Since time.Time // when it went down or came back; zero: up since the watch began
	// DownFor is how long the last outage lasted (Up and Since set: the
	// worker is back after it).
	DownFor time.Duration
	Outages int // times it went down during the watch
}

// workerTracker turns one reachability observation per refresh into a
// WorkerStatus.
type workerTracker struct {
	st   WorkerStatus
	seen bool
}

func (w *workerTracker) observe(now time.Time, up bool) WorkerStatus {
	switch {
	case !w.seen:
		w.seen = true
		w.st.Up = up
		if !up {
			w.st.Since = now
			w.st.Outages = 1
		}
	case w.st.Up && !up:
		w.st.Up, w.st.Since = false, now
		w.st.Outages++
	case !w.st.Up && up:
		w.st.DownFor = now.Sub(w.st.Since)
		w.st.Up, w.st.Since = true, now
	}
	return w.st
}

// workerUp: the worker answered for at least one connector (a 404 is an
// answer); every request failing means it is down or unreachable.
func workerUp(cs []ConnectorState) bool {
	for _, c := range cs {
		if c.State != stateUnreachable {
			return true
		}
	}
	return false
}

const stateUnreachable = "worker unreachable"

// Verdict compares a snapshot with the expected totals.
type Verdict struct {
	Complete bool     // every stage holds exactly the expected records and totals
	Wrong    []string // impossible states: more than expected anywhere means duplicates
}

// Check computes the verdict of s for p.
func (p *Pipeline) Check(s Snapshot) Verdict {
	var v Verdict
	if s.Produced > p.ExpectedRecords {
		v.Wrong = append(v.Wrong, fmt.Sprintf("%s holds %d committed records, the generator makes %d", p.OrdersTopic, s.Produced, p.ExpectedRecords))
	}
	if p.Replication != nil && s.Replicated > p.ExpectedRecords {
		v.Wrong = append(v.Wrong, fmt.Sprintf("%s holds %d committed records, more than the %d produced", p.ReplicaTopic, s.Replicated, p.ExpectedRecords))
	}
	if p.Sink != nil {
		if s.Applied > p.ExpectedRecords {
			v.Wrong = append(v.Wrong, fmt.Sprintf("%d records applied to Aerospike, more than the %d produced", s.Applied, p.ExpectedRecords))
		}
		for _, k := range slices.Sorted(maps.Keys(s.Amounts)) {
			if want, got := p.ExpectedAmounts[k], s.Amounts[k]; got > want {
				v.Wrong = append(v.Wrong, fmt.Sprintf("counter %s is %d, above its expected total %d", k, got, want))
			}
		}
	}
	complete := s.Produced == p.ExpectedRecords
	if p.Replication != nil {
		complete = complete && s.Replicated == p.ExpectedRecords
	}
	if p.Sink != nil {
		complete = complete && s.Applied == p.ExpectedRecords && maps.Equal(s.Amounts, p.ExpectedAmounts)
	}
	v.Complete = complete && len(v.Wrong) == 0
	return v
}

// ErrIncomplete is returned by Watch in Once mode when the pipeline did not
// complete within the timeout.
var ErrIncomplete = errors.New("the pipeline did not complete")

// ErrWrongTotals is returned by Watch when a stage holds more than it
// should: a duplicate got through.
var ErrWrongTotals = errors.New("wrong totals")

// Watch observes the pipeline and renders its progress to opts.Out. In Once
// mode it returns nil when the pipeline is complete and every total
// matches, ErrWrongTotals at the first sign of a duplicate, and
// ErrIncomplete at the timeout. Otherwise it runs until ctx is done (and
// still returns ErrWrongTotals on a duplicate).
func Watch(ctx context.Context, p *Pipeline, opts WatchOptions) (Snapshot, error) {
	if opts.Interval <= 0 {
		opts.Interval = time.Second
	}
	if opts.LineEvery <= 0 {
		opts.LineEvery = 5 * time.Second
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 10 * time.Minute
	}
	rc, err := client.New(opts.RESTURL, client.WithRebalanceRetries(2, 100*time.Millisecond, time.Second))
	if err != nil {
		return Snapshot{}, err
	}
	topics := []string{p.OrdersTopic}
	if p.ReplicaTopic != "" {
		topics = append(topics, p.ReplicaTopic)
	}
	cnt, err := newCounter(opts.Bootstrap, topics)
	if err != nil {
		return Snapshot{}, err
	}
	cctx, stopCounting := context.WithCancel(ctx)
	counted := make(chan struct{})
	go func() { defer close(counted); cnt.run(cctx) }()
	defer func() { stopCounting(); <-counted }()

	admin, err := kafka.NewAdminClient(&kafka.ConfigMap{"bootstrap.servers": opts.Bootstrap, "log_level": 3})
	if err != nil {
		return Snapshot{}, err
	}
	defer admin.Close()
	// A plain consumer for watermark queries; it never subscribes.
	wm, err := kafka.NewConsumer(&kafka.ConfigMap{"bootstrap.servers": opts.Bootstrap, "group.id": "connectd-quickstart-watermarks", "log_level": 3})
	if err != nil {
		return Snapshot{}, err
	}
	defer wm.Close()

	sink := &sinkObserver{p: p, metricsURL: opts.MetricsURL, admin: admin, wm: wm, hc: &http.Client{Timeout: 3 * time.Second}}
	defer sink.close()
	r := &renderer{out: opts.Out, live: opts.Live, p: p, lineEvery: opts.LineEvery, width: opts.Width}

	var worker workerTracker
	deadline := time.Now().Add(opts.Timeout)
	tick := time.NewTicker(opts.Interval)
	defer tick.Stop()
	for {
		s := Snapshot{At: time.Now()}
		s.Connectors = connectorStates(ctx, rc, p)
		s.Worker = worker.observe(s.At, workerUp(s.Connectors))
		var ok bool
		s.Produced, _ = cnt.count(p.OrdersTopic)
		if p.ReplicaTopic != "" {
			s.Replicated, ok = cnt.count(p.ReplicaTopic)
			s.ReplicaExists = ok
		}
		if cerr := cnt.failure(); cerr != nil {
			s.Problems = append(s.Problems, "counting records: "+cerr.Error())
		}
		if p.Sink != nil {
			sink.observe(ctx, &s)
		}
		v := p.Check(s)
		r.render(s, v, false)
		if len(v.Wrong) > 0 {
			r.render(s, v, true)
			return s, fmt.Errorf("%w: %s", ErrWrongTotals, strings.Join(v.Wrong, "; "))
		}
		if opts.Once && v.Complete {
			r.render(s, v, true)
			return s, nil
		}
		if opts.Once && time.Now().After(deadline) {
			r.render(s, v, true)
			return s, fmt.Errorf("%w within %s", ErrIncomplete, opts.Timeout)
		}
		select {
		case <-ctx.Done():
			r.render(s, v, true)
			return s, nil
		case <-tick.C:
		}
	}
}

// connectorStates asks the worker for the state of the pipeline's
// connectors.
func connectorStates(ctx context.Context, rc *client.Client, p *Pipeline) []ConnectorState {
	var out []ConnectorState
	for _, c := range p.Connectors() {
		st := ConnectorState{Name: c.Name}
		sctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		info, err := rc.Status(sctx, c.Name)
		cancel()
		if err != nil {
			var ae *client.Error
			switch {
			case errors.As(err, &ae) && ae.StatusCode == http.StatusNotFound:
				st.State = "starting"
			default:
				st.State = stateUnreachable
			}
			out = append(out, st)
			continue
		}
		st.State = info.Connector.State
		if info.Connector.State == "FAILED" {
			st.Trace = firstLine(info.Connector.Trace)
		}
		st.Tasks = len(info.Tasks)
		for _, t := range info.Tasks {
			switch t.State {
			case "RUNNING":
				st.RunningTasks++
			case "FAILED":
				if st.Trace == "" {
					st.Trace = fmt.Sprintf("task %d: %s", t.ID, firstLine(t.Trace))
				}
			}
		}
		out = append(out, st)
	}
	return out
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return l
}

// sinkObserver reads what the sink stage has done: the records applied in
// Aerospike, the sink's durable duplicate count (or its metrics), and its
// consumer lag.
type sinkObserver struct {
	p          *Pipeline
	metricsURL string
	admin      *kafka.AdminClient
	wm         *kafka.Consumer
	hc         *http.Client
	aero       *aerospikeReader // connected on first use, as Aerospike may start after the watch
}

func (o *sinkObserver) close() {
	if o.aero != nil {
		o.aero.close()
	}
}

func (o *sinkObserver) observe(ctx context.Context, s *Snapshot) {
	p := o.p
	if o.aero == nil {
		aero, err := newAerospikeReader(p.AerospikeHosts, p.Namespace, p.Set)
		if err != nil {
			s.Problems = append(s.Problems, err.Error())
		} else {
			o.aero = aero
		}
	}
	if o.aero != nil {
		o.readAerospike(s)
	}
	lctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	lag, set, err := groupLag(lctx, o.admin, o.wm, p.SinkGroup(), p.SinkTopic)
	cancel()
	if err == nil {
		s.SinkOffsetLag, s.SinkOffsetLagSet = lag, set
	}
	if o.metricsURL != "" && p.StatsSet == "" {
		mctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		d, found, err := scrapeSum(mctx, o.hc, o.metricsURL, DuplicatesMetric)
		cancel()
		if err == nil && found {
			s.Duplicates, s.DuplicatesKnown = int64(d), true
		}
	}
}

// readAerospike reads the applied records and, with a stats set, the
// sink's durable duplicate count.
func (o *sinkObserver) readAerospike(s *Snapshot) {
	c, err := o.aero.scan()
	if err != nil {
		s.Problems = append(s.Problems, "scanning Aerospike: "+err.Error())
	} else {
		s.Amounts, s.Applied = c.amounts, c.applied
		for _, v := range c.amounts {
			s.AmountTotal += v
		}
	}
	if o.p.StatsSet == "" {
		return
	}
	_, d, found, err := o.aero.sinkStats(o.p.StatsSet, o.p.Sink.Name)
	switch {
	case err != nil:
		s.Problems = append(s.Problems, "reading the sink's stats record: "+err.Error())
	case found:
		s.Duplicates, s.DuplicatesKnown, s.DuplicatesDurable = d, true, true
	}
}
