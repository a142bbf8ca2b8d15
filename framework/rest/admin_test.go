package rest_test

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/connectd/connectd/framework/logging"
	"github.com/connectd/connectd/framework/rest"
	"github.com/connectd/connectd/framework/rest/resttest"
)

func TestLoggers(t *testing.T) {
	e := newEnv(t, rest.Config{})
	e.do("GET", "/admin/loggers", nil).want(t, 200,
		`{"root":{"level":"INFO","last_modified":null},"connectd.worker":{"level":"INFO","last_modified":null},"connectd.worker.task":{"level":"INFO","last_modified":null}}`)
	e.do("GET", "/admin/loggers/connectd.worker", nil).want(t, 200, `{"level":"INFO","last_modified":null}`)
	e.do("GET", "/admin/loggers/nope", nil).wantError(t, 404, "Logger nope not found. Known loggers: connectd.worker, connectd.worker.task, root.")

	e.do("PUT", "/admin/loggers/connectd.worker", `{"level":"DEBUG"}`).want(t, 200, `["connectd.worker","connectd.worker.task"]`)
	r := e.do("GET", "/admin/loggers/connectd.worker.task", nil)
	if r.code != 200 || !strings.Contains(string(r.body), `"level":"DEBUG"`) || strings.Contains(string(r.body), `"last_modified":null`) {
		t.Fatalf("after PUT: %d %s", r.code, r.body)
	}
	if lv := e.levels.Var("connectd.worker.task").Level(); lv != slog.LevelDebug {
		t.Fatalf("level var = %v", lv)
	}
	// A new logger name is created, as log4j does.
	e.do("PUT", "/admin/loggers/org.example?scope=worker", `{"level":"warn"}`).want(t, 200, `["org.example"]`)
	// Unknown scopes fall back to the worker, with a warning.
	e.do("PUT", "/admin/loggers/org.example?scope=galaxy", `{"level":"ERROR"}`).want(t, 200, `["org.example"]`)
	if !strings.Contains(e.logs.String(), "unknown scope") {
		t.Fatal("no warning for an unknown scope")
	}

	before := e.levels.All()
	e.do("PUT", "/admin/loggers/connectd.worker", `{"level":"LOUD"}`).wantError(t, 404,
		"invalid log level 'LOUD'. Allowed levels: OFF, FATAL, ERROR, WARN, INFO, DEBUG, TRACE")
	e.do("PUT", "/admin/loggers/connectd.worker", `{}`).wantError(t, 400, "Desired 'level' parameter was not specified in the request.")
	e.do("PUT", "/admin/loggers/connectd.worker", `{"level":null}`).wantError(t, 400, "Desired 'level' parameter was not specified in the request.")
	e.do("PUT", "/admin/loggers/connectd.worker", `{"level":["DEBUG"]}`).wantErrorContaining(t, 400, `"level"`)
	e.do("PUT", "/admin/loggers/connectd.worker", `nope`).wantErrorContaining(t, 400, "JSON")
	e.do("PUT", "/admin/loggers/connectd.worker?scope=cluster", `{"level":"DEBUG"}`).wantError(t, 400, "scope=cluster is not supported by this worker; use scope=worker")
	// A name that cannot be a logger is refused, naming the allowed form and
	// the known loggers; it is not created.
	for _, bad := range []string{"has%20space", "a..b", "trailing.", "semi%3Bcolon", strings.Repeat("x", 256)} {
		e.do("PUT", "/admin/loggers/"+bad, `{"level":"DEBUG"}`).wantErrorContaining(t, 400,
			"invalid logger name", "dot-separated words", "Known loggers: connectd.worker, connectd.worker.task, org.example, root.")
	}
	if after := e.levels.All(); mustJSON(after) != mustJSON(before) {
		t.Fatalf("rejected logger changes changed levels:\n%v\n%v", before, after)
	}
}

// clusterHerder supports scope=cluster.
type clusterHerder struct {
	*resttest.Herder
	got []string
}

func (c *clusterHerder) SetClusterLoggerLevel(_ context.Context, ns, level string) error {
	c.got = append(c.got, ns+"="+level)
	return nil
}

func TestClusterScopeLogger(t *testing.T) {
	ch := &clusterHerder{Herder: resttest.New()}
	srv, err := rest.NewServer(rest.Config{}, ch, rest.WithLogLevels(logging.New(slog.LevelInfo)))
	if err != nil {
		t.Fatal(err)
	}
	rec := newRecorder()
	req := mustReq("PUT", "/admin/loggers/connectd?scope=cluster")
	req.Body = ioNopCloser(strings.NewReader(`{"level":"debug"}`))
	req.Header.Set("Content-Type", "application/json")
	srv.Handler().ServeHTTP(rec, req)
	if rec.Code != 204 || len(ch.got) != 1 || ch.got[0] != "connectd=DEBUG" {
		t.Fatalf("cluster scope: %d %s %v", rec.Code, rec.Body, ch.got)
	}
	// An invalid name is refused before it reaches the cluster.
	rec = newRecorder()
	req = mustReq("PUT", "/admin/loggers/a..b?scope=cluster")
	req.Body = ioNopCloser(strings.NewReader(`{"level":"debug"}`))
	req.Header.Set("Content-Type", "application/json")
	srv.Handler().ServeHTTP(rec, req)
	if rec.Code != 400 || !strings.Contains(rec.Body.String(), "invalid logger name") || len(ch.got) != 1 {
		t.Fatalf("invalid name, cluster scope: %d %s %v", rec.Code, rec.Body, ch.got)
	}
}

func TestAdminListenersSeparateAdminEndpoints(t *testing.T) {
	h := resttest.New()
	srv, err := rest.NewServer(rest.Config{Listeners: []string{"http://127.0.0.1:0"}, AdminListeners: []string{"http://127.0.0.1:0"}}, h,
		rest.WithLogLevels(logging.New(slog.LevelInfo)))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	if err := srv.Listen(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- srv.Serve(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	urls := srv.Listeners()
	if len(urls) != 2 {
		t.Fatalf("listeners = %v", urls)
	}
	public, admin := urls[0], urls[1]
	doURL(t, "GET", public+"/admin/loggers", nil, "", "").wantErrorContaining(t, 404, "no endpoint")
	doURL(t, "GET", public+"/connectors", nil, "", "").want(t, 200, `[]`)
	doURL(t, "GET", admin+"/admin/loggers/root", nil, "", "").want(t, 200, `{"level":"INFO","last_modified":null}`)
	doURL(t, "GET", admin+"/connectors", nil, "", "").wantErrorContaining(t, 404, "no endpoint")

	// admin.listeners= (empty) disables them.
	cfg, _, err := rest.ParseConfig(map[string]string{"listeners": "http://127.0.0.1:0", "admin.listeners": ""})
	if err != nil {
		t.Fatal(err)
	}
	srv2, err := rest.NewServer(cfg, h, rest.WithLogLevels(logging.New(slog.LevelInfo)))
	if err != nil {
		t.Fatal(err)
	}
	if err := srv2.Listen(); err != nil {
		t.Fatal(err)
	}
	ctx2, cancel2 := context.WithCancel(context.Background())
	done2 := make(chan error, 1)
	go func() { done2 <- srv2.Serve(ctx2) }()
	t.Cleanup(func() { cancel2(); <-done2 })
	doURL(t, "GET", srv2.Listeners()[0]+"/admin/loggers", nil, "", "").wantErrorContaining(t, 404, "no endpoint")
}

func TestRequestMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	e := newEnv(t, rest.Config{}, rest.WithRegisterer(reg))
	e.do("GET", "/connectors/nope", nil)
	e.do("GET", "/connectors/nope", nil)
	e.do("GET", "/connectors", nil)
	e.do("GET", "/not/a/route", nil)
	for _, tc := range []struct {
		handler, code string
		want          float64
	}{
		{"getConnector", "404", 2},
		{"listConnectors", "200", 1},
		{"unmatched", "404", 1},
	} {
		got := counterValue(t, reg, tc.handler, tc.code)
		if got != tc.want {
			t.Errorf("connectd_rest_requests_total{handler=%q,code=%q} = %v, want %v", tc.handler, tc.code, got, tc.want)
		}
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, mf := range mfs {
		if mf.GetName() == "connectd_rest_request_duration_seconds" {
			for _, m := range mf.Metric {
				n++
				if m.Histogram.GetSampleCount() == 0 {
					t.Errorf("empty histogram %v", m.Label)
				}
			}
		}
	}
	if n != 3 {
		t.Fatalf("duration series = %d; want 3 handlers", n)
	}
	// One server per registry: a second registration is a clear error.
	if _, err := rest.NewServer(rest.Config{}, e.h, rest.WithRegisterer(reg)); err == nil || !strings.Contains(err.Error(), "already registered") {
		t.Fatalf("second registration: %v", err)
	}
}

// counterValue reads one series of connectd_rest_requests_total.
func counterValue(t *testing.T, reg *prometheus.Registry, handler, code string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	v := 0.0
	for _, mf := range mfs {
		if mf.GetName() != "connectd_rest_requests_total" {
			continue
		}
		for _, m := range mf.Metric {
			labels := map[string]string{}
			for _, l := range m.Label {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["handler"] == handler && labels["code"] == code {
				v = m.Counter.GetValue()
			}
		}
	}
	return v
}

func TestOpenAPIServed(t *testing.T) {
	e := newEnv(t, rest.Config{})
	r := e.do("GET", "/openapi.json", nil)
	if r.code != http.StatusOK || !strings.HasPrefix(strings.TrimSpace(string(r.body)), "{") || !strings.Contains(string(r.body), `"openapi": "3.1.0"`) {
		t.Fatalf("GET /openapi.json: %d %.200s", r.code, r.body)
	}
}

// GET /metrics serves the handler WithMetricsHandler gives (the worker's
// scrape), counted like any endpoint; without one it is a 404.
func TestMetricsEndpoint(t *testing.T) {
	reg := prometheus.NewRegistry()
	g := prometheus.NewGauge(prometheus.GaugeOpts{Name: "connectd_test_gauge", Help: "A test gauge."})
	g.Set(42)
	reg.MustRegister(g)
	e := newEnv(t, rest.Config{}, rest.WithRegisterer(reg), rest.WithMetricsHandler(promhttp.HandlerFor(reg, promhttp.HandlerOpts{})))
	r := e.do("GET", "/metrics", nil)
	if r.code != 200 || !strings.Contains(string(r.body), "connectd_test_gauge 42") || !strings.HasPrefix(r.header.Get("Content-Type"), "text/plain") {
		t.Fatalf("GET /metrics: %d %s %s", r.code, r.header.Get("Content-Type"), r.body)
	}
	e.do("POST", "/metrics", nil).wantErrorContaining(t, 405, "not supported")
	// The scrape is counted under its own handler label.
	e.do("GET", "/metrics", nil)
	if got := counterValue(t, reg, "metrics", "200"); got != 2 {
		t.Fatalf("connectd_rest_requests_total{handler=metrics,code=200} = %v, want 2", got)
	}

	bare := newEnv(t, rest.Config{})
	bare.do("GET", "/metrics", nil).wantError(t, 404, "this worker does not serve /metrics")
}
