package metrics_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/prometheus/client_golang/prometheus/testutil/promlint"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/connectd/connectd/framework/metrics"
)

// source is a plugin process stand-in: a registry of its own (as the
// plugin side keeps one per task), or a failure.
type source struct {
	reg   *prometheus.Registry
	err   error
	block bool
}

func (s source) Gather(ctx context.Context) ([]*dto.MetricFamily, error) {
	if s.block {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	if s.err != nil {
		return nil, s.err
	}
	return s.reg.Gather()
}

func pluginRegistry(t *testing.T, connector string, task string, cs ...prometheus.Collector) *prometheus.Registry {
	t.Helper()
	reg := prometheus.NewRegistry()
	r := prometheus.WrapRegistererWith(prometheus.Labels{"connector": connector, "task": task}, reg)
	for _, c := range cs {
		if err := r.Register(c); err != nil {
			t.Fatal(err)
		}
	}
	return reg
}

func counter(name string, v float64) prometheus.Counter {
	c := prometheus.NewCounter(prometheus.CounterOpts{Name: name, Help: "h"})
	c.Add(v)
	return c
}

func scrape(t *testing.T, g prometheus.Gatherer) map[string]*dto.MetricFamily {
	t.Helper()
	srv := httptest.NewServer(metrics.Handler(g, nil))
	defer srv.Close()
	resp, err := srv.Client().Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("GET /metrics: %d %s", resp.StatusCode, body)
	}
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("parse scrape: %v\n%s", err, body)
	}
	return fams
}

func value(t *testing.T, fams map[string]*dto.MetricFamily, name string, labels map[string]string) (float64, bool) {
	t.Helper()
	f, ok := fams[name]
	if !ok {
		return 0, false
	}
next:
	for _, m := range f.Metric {
		got := map[string]string{}
		for _, lp := range m.Label {
			got[lp.GetName()] = lp.GetValue()
		}
		for k, v := range labels {
			if got[k] != v {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue(), true
		case m.Gauge != nil:
			return m.Gauge.GetValue(), true
		case m.Untyped != nil:
			return m.Untyped.GetValue(), true
		}
		return 0, true
	}
	return 0, false
}

func TestRegistryLintsCleanAndHasRuntimeCollectors(t *testing.T) {
	reg := metrics.NewRegistry(metrics.BuildInfo{Version: "1.2.3", Commit: "abc"})
	probs, err := promlint.NewWithMetricFamilies(mustGather(t, reg)).Lint()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range probs {
		t.Errorf("promlint: %s: %s", p.Metric, p.Text)
	}
	fams := scrape(t, reg)
	for _, name := range []string{"go_goroutines", "go_gc_duration_seconds", "process_cpu_seconds_total", "process_resident_memory_bytes", "connectd_build_info"} {
		if _, ok := fams[name]; !ok {
			t.Errorf("%s missing from the scrape", name)
		}
	}
	if v, ok := value(t, fams, "connectd_build_info", map[string]string{"version": "1.2.3", "commit": "abc"}); !ok || v != 1 {
		t.Errorf("connectd_build_info = %v, %v", v, ok)
	}
	// No global registry: a second registry in the same process is
	// independent and registers the same collectors again.
	_ = metrics.NewRegistry(metrics.BuildInfo{})
}

func mustGather(t *testing.T, g prometheus.Gatherer) []*dto.MetricFamily {
	t.Helper()
	mfs, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	return mfs
}

func TestPluginMetricsMerged(t *testing.T) {
	reg := metrics.NewRegistry(metrics.BuildInfo{})
	own := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "connectd_task_restarts_total", Help: "h"}, []string{"connector", "task"})
	own.WithLabelValues("a", "0").Add(3)
	reg.MustRegister(own)
	var logs bytes.Buffer
	g, err := metrics.NewGatherer(reg, metrics.GathererOptions{Timeout: 200 * time.Millisecond, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}

	// Process-wide gauge without a connector label.
	procWide := prometheus.NewRegistry()
	procWide.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "plugin_pool_size", Help: "h"}, func() float64 { return 4 }))

	clashType := prometheus.NewGauge(prometheus.GaugeOpts{Name: "connectd_aerospike_sink_records_written_total", Help: "h"})
	g.SetPlugins(func() []metrics.PluginTarget {
		return []metrics.PluginTarget{
			// Two connectors running the same plugin class: one family.
			{Connector: "a", Source: source{reg: pluginRegistry(t, "a", "0", counter("connectd_aerospike_sink_records_written_total", 5))}},
			{Connector: "b", Source: source{reg: pluginRegistry(t, "b", "1", counter("connectd_aerospike_sink_records_written_total", 7),
				// A plugin may not shadow a worker metric.
				prometheus.NewCounter(prometheus.CounterOpts{Name: "connectd_task_restarts_total", Help: "evil"}))}},
			// Same name, another type: left out.
			{Connector: "c", Source: source{reg: pluginRegistry(t, "c", "0", clashType)}},
			{Connector: "d", Source: source{err: errors.New("plugin exited")}},
			{Connector: "e", Source: source{block: true}},
			{Connector: "f", Source: source{reg: procWide}},
		}
	})
	start := time.Now()
	fams := scrape(t, g)
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("a blocked plugin held the scrape for %v", d)
	}
	for _, c := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"connectd_aerospike_sink_records_written_total", map[string]string{"connector": "a", "task": "0"}, 5},
		{"connectd_aerospike_sink_records_written_total", map[string]string{"connector": "b", "task": "1"}, 7},
		{"connectd_task_restarts_total", map[string]string{"connector": "a", "task": "0"}, 3},
		{"plugin_pool_size", map[string]string{"connector": "f"}, 4},
	} {
		if v, ok := value(t, fams, c.name, c.labels); !ok || v != c.want {
			t.Errorf("%s%v = %v (present %v), want %v", c.name, c.labels, v, ok, c.want)
		}
	}
	if n := len(fams["connectd_task_restarts_total"].Metric); n != 1 {
		t.Errorf("the plugin's connectd_task_restarts_total leaked in: %d series", n)
	}
	if n := len(fams["connectd_aerospike_sink_records_written_total"].Metric); n != 2 {
		t.Errorf("records_written has %d series, want 2 (the gauge of c is left out)", n)
	}
	// The failures show up from the next scrape on.
	fams = scrape(t, g)
	for _, c := range []struct{ connector, reason string }{
		{"b", metrics.ReasonClash}, {"c", metrics.ReasonClash}, {"d", metrics.ReasonGather}, {"e", metrics.ReasonGather},
	} {
		if v, ok := value(t, fams, "connectd_plugin_metrics_failures_total", map[string]string{"connector": c.connector, "reason": c.reason}); !ok || v < 1 {
			t.Errorf("failures{connector=%s,reason=%s} = %v %v", c.connector, c.reason, v, ok)
		}
	}
	if strings.Count(logs.String(), "connector=d") != 1 {
		t.Errorf("a failing plugin must be logged once a minute, not every scrape:\n%s", logs.String())
	}
	probs, err := promlint.NewWithMetricFamilies(mustGather(t, g)).Lint()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range probs {
		if !strings.HasPrefix(p.Metric, "plugin_pool_size") {
			t.Errorf("promlint: %s: %s", p.Metric, p.Text)
		}
	}
}

func TestInvalidPluginFamiliesLeftOut(t *testing.T) {
	reg := metrics.NewRegistry(metrics.BuildInfo{})
	g, err := metrics.NewGatherer(reg, metrics.GathererOptions{})
	if err != nil {
		t.Fatal(err)
	}
	name := func(s string) *string { return &s }
	bad := []*dto.MetricFamily{
		{Name: name("bad-name"), Type: dto.MetricType_COUNTER.Enum(), Metric: []*dto.Metric{{Counter: &dto.Counter{Value: new(float64)}}}},
		{Name: name("no_value_total"), Type: dto.MetricType_COUNTER.Enum(), Metric: []*dto.Metric{{Gauge: &dto.Gauge{Value: new(float64)}}}},
		{Name: name("bad_label"), Type: dto.MetricType_GAUGE.Enum(), Metric: []*dto.Metric{{
			Label: []*dto.LabelPair{{Name: name("bad label"), Value: name("x")}}, Gauge: &dto.Gauge{Value: new(float64)}}}},
		{Name: name("good"), Type: dto.MetricType_GAUGE.Enum(), Metric: []*dto.Metric{{Gauge: &dto.Gauge{Value: new(float64)}}}},
	}
	g.SetPlugins(func() []metrics.PluginTarget {
		return []metrics.PluginTarget{{Connector: "x", Source: fixed(bad)}}
	})
	fams := scrape(t, g)
	if _, ok := fams["good"]; !ok {
		t.Error("the valid family was dropped with the invalid ones")
	}
	for _, n := range []string{"bad-name", "no_value_total", "bad_label"} {
		if _, ok := fams[n]; ok {
			t.Errorf("invalid family %s was exposed", n)
		}
	}
	if got := testutil.ToFloat64(counterOf(t, g, "x", metrics.ReasonInvalid)); got != 3 {
		t.Errorf("invalid failures = %v, want 3", got)
	}
}

type fixed []*dto.MetricFamily

func (f fixed) Gather(context.Context) ([]*dto.MetricFamily, error) { return f, nil }

// counterOf reads connectd_plugin_metrics_failures_total{connector,reason}
// from the gatherer's own scrape.
func counterOf(t *testing.T, g prometheus.Gatherer, connector, reason string) prometheus.Collector {
	t.Helper()
	v, _ := value(t, scrape(t, g), "connectd_plugin_metrics_failures_total", map[string]string{"connector": connector, "reason": reason})
	c := prometheus.NewCounter(prometheus.CounterOpts{Name: "x_total", Help: "h"})
	c.Add(v)
	return c
}
