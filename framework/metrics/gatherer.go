package metrics

import (
	"context"
	"log/slog"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/model"
	"google.golang.org/protobuf/proto"
)

// PluginSource is what a plugin process offers: its tasks' metric
// families. plugins/host's *Process implements it.
type PluginSource interface {
	Gather(ctx context.Context) ([]*dto.MetricFamily, error)
}

// PluginTarget is one plugin process to gather from. Its series carry
// connector labels of their own (the SDK's task metrics do); Connector,
// when set (a process that is one connector's own), labels those that do
// not.
type PluginTarget struct {
	Connector string
	Plugin    string // the plugin's class, naming a shared process in failures
	Source    PluginSource
}

// name is what failures and their warnings call the target.
func (t PluginTarget) name() string {
	if t.Connector != "" {
		return t.Connector
	}
	return t.Plugin
}

// Reasons a plugin's metrics (or part of them) are left out of a scrape,
// the reason label of connectd_plugin_metrics_failures_total.
const (
	ReasonGather  = "gather"  // the Gather call failed or timed out
	ReasonClash   = "clash"   // a family name the worker uses, or a type another plugin's family of that name disagrees with
	ReasonInvalid = "invalid" // an invalid metric or label name, or a sample missing its value
)

// Gatherer is the worker's whole scrape: the registry's own families plus
// every running plugin process's. It implements prometheus.Gatherer.
type Gatherer struct {
	host     prometheus.Gatherer
	timeout  time.Duration
	log      *slog.Logger
	targets  atomic.Pointer[func() []PluginTarget]
	failures *prometheus.CounterVec

	logMu     sync.Mutex
	lastWarns map[string]time.Time
}

// GathererOptions configure NewGatherer.
type GathererOptions struct {
	// Timeout bounds each plugin's Gather (default 2 s). Plugins are
	// gathered concurrently, so a scrape takes at most about this long
	// longer than the registry's own gather.
	Timeout time.Duration
	// Logger receives plugin metric failures, at most once a minute per
	// connector and reason.
	Logger *slog.Logger
}

// NewGatherer returns the scrape of reg plus the plugin processes that
// SetPlugins lists. It registers connectd_plugin_metrics_failures_total
// on reg.
func NewGatherer(reg *prometheus.Registry, opts GathererOptions) (*Gatherer, error) {
	if opts.Timeout <= 0 {
		opts.Timeout = 2 * time.Second
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	g := &Gatherer{
		host: reg, timeout: opts.Timeout, log: opts.Logger, lastWarns: map[string]time.Time{},
		failures: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "connectd_plugin_metrics_failures_total",
			Help: "Plugin metrics left out of a scrape, by connector and reason (gather: the plugin's Gather failed or timed out; clash: a family name the worker owns or another plugin uses with another type; invalid: malformed names or samples).",
		}, []string{"connector", "reason"}),
	}
	if err := reg.Register(g.failures); err != nil {
		return nil, err
	}
	return g, nil
}

// SetPlugins sets the function that lists the running plugin processes; it
// is called on every scrape. The worker exists after the REST server, so
// this is set once it does.
func (g *Gatherer) SetPlugins(list func() []PluginTarget) { g.targets.Store(&list) }

// Gather implements prometheus.Gatherer. Errors come only from the
// registry's own collectors; plugin failures are counted and logged, never
// returned, so that a plugin cannot fail the scrape.
func (g *Gatherer) Gather() ([]*dto.MetricFamily, error) {
	own, err := g.host.Gather()
	list := g.targets.Load()
	if list == nil {
		return own, err
	}
	targets := (*list)()
	if len(targets) == 0 {
		return own, err
	}
	reserved := make(map[string]bool, len(own))
	for _, f := range own {
		reserved[f.GetName()] = true
	}
	type result struct {
		fams []*dto.MetricFamily
		err  error
	}
	results := make([]result, len(targets))
	var wg sync.WaitGroup
	for i, t := range targets {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), g.timeout)
			defer cancel()
			fams, err := t.Source.Gather(ctx)
			results[i] = result{fams, err}
		}()
	}
	wg.Wait()

	merged := map[string]*dto.MetricFamily{}
	seen := map[string]map[string]bool{} // family → label signatures
	for i, t := range targets {
		r := results[i]
		if r.err != nil {
			g.fail(t.name(), ReasonGather, "plugin metrics not gathered", "error", r.err)
			continue
		}
		for _, f := range r.fams {
			if f == nil {
				continue
			}
			name := f.GetName()
			if reason, why := checkFamily(f); reason != "" {
				g.fail(t.name(), reason, "plugin metric family left out: "+why, "family", name)
				continue
			}
			if reserved[name] {
				g.fail(t.name(), ReasonClash, "plugin metric family left out: the worker exports a family of that name", "family", name)
				continue
			}
			dst := merged[name]
			if dst == nil {
				dst = &dto.MetricFamily{Name: f.Name, Help: f.Help, Type: f.Type, Unit: f.Unit}
				merged[name] = dst
				seen[name] = map[string]bool{}
			} else if dst.GetType() != f.GetType() {
				g.fail(t.name(), ReasonClash, "plugin metric family left out: another plugin exports it with another type",
					"family", name, "type", f.GetType().String(), "other_type", dst.GetType().String())
				continue
			}
			for _, m := range f.Metric {
				m = withConnector(m, t.Connector)
				sig := signature(m)
				if seen[name][sig] {
					continue // the same series twice: keep the first
				}
				seen[name][sig] = true
				dst.Metric = append(dst.Metric, m)
			}
		}
	}
	out := own
	for _, f := range merged {
		if len(f.Metric) == 0 {
			continue
		}
		sort.Slice(f.Metric, func(i, j int) bool { return signature(f.Metric[i]) < signature(f.Metric[j]) })
		out = append(out, f)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].GetName() < out[j].GetName() })
	return out, err
}

// checkFamily reports why a family cannot be exposed, if it cannot.
func checkFamily(f *dto.MetricFamily) (reason, why string) {
	if !model.LegacyValidation.IsValidMetricName(f.GetName()) {
		return ReasonInvalid, "invalid metric name"
	}
	if f.Type == nil {
		return ReasonInvalid, "no metric type"
	}
	for _, m := range f.Metric {
		if m == nil {
			return ReasonInvalid, "nil sample"
		}
		for _, lp := range m.Label {
			if !model.LegacyValidation.IsValidLabelName(lp.GetName()) || strings.HasPrefix(lp.GetName(), "__") {
				return ReasonInvalid, "invalid label name " + lp.GetName()
			}
		}
		ok := false
		switch f.GetType() {
		case dto.MetricType_COUNTER:
			ok = m.Counter != nil
		case dto.MetricType_GAUGE:
			ok = m.Gauge != nil
		case dto.MetricType_UNTYPED:
			ok = m.Untyped != nil
		case dto.MetricType_HISTOGRAM, dto.MetricType_GAUGE_HISTOGRAM:
			ok = m.Histogram != nil
		case dto.MetricType_SUMMARY:
			ok = m.Summary != nil
		}
		if !ok {
			return ReasonInvalid, "a sample has no value of the family's type " + f.GetType().String()
		}
	}
	return "", ""
}

// withConnector returns m with a connector label: plugin task metrics
// carry it already; process-wide ones get the connector the process runs.
func withConnector(m *dto.Metric, connector string) *dto.Metric {
	if connector == "" {
		return m
	}
	for _, lp := range m.Label {
		if lp.GetName() == "connector" {
			return m
		}
	}
	c := proto.Clone(m).(*dto.Metric)
	c.Label = append(c.Label, &dto.LabelPair{Name: proto.String("connector"), Value: proto.String(connector)})
	slices.SortFunc(c.Label, func(a, b *dto.LabelPair) int { return strings.Compare(a.GetName(), b.GetName()) })
	return c
}

func signature(m *dto.Metric) string {
	var b strings.Builder
	for _, lp := range m.Label {
		b.WriteString(lp.GetName())
		b.WriteByte(0)
		b.WriteString(lp.GetValue())
		b.WriteByte(0)
	}
	return b.String()
}

func (g *Gatherer) fail(connector, reason, msg string, args ...any) {
	g.failures.WithLabelValues(connector, reason).Inc()
	key := connector + "\x00" + reason
	now := time.Now()
	g.logMu.Lock()
	last, ok := g.lastWarns[key]
	if ok && now.Sub(last) < time.Minute {
		g.logMu.Unlock()
		return
	}
	g.lastWarns[key] = now
	g.logMu.Unlock()
	g.log.Warn(msg, append([]any{"connector", connector, "reason", reason}, args...)...)
}
