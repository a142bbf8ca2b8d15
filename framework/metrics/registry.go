package metrics

import (
	"fmt"
	"log/slog"
	"net/http"
	"runtime"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// BuildInfo describes the running binary for connectd_build_info.
type BuildInfo struct {
	Version, Commit string
}

// NewRegistry returns a fresh registry with the Go runtime and process
// collectors and connectd_build_info{version,commit,goversion} 1. A worker
// process builds exactly one (in cmd) and hands it to every component.
func NewRegistry(bi BuildInfo) *prometheus.Registry {
	reg := prometheus.NewRegistry()
	build := prometheus.NewGauge(prometheus.GaugeOpts{
		Name:        "connectd_build_info",
		Help:        "Always 1; the labels say which connectd build runs.",
		ConstLabels: prometheus.Labels{"version": bi.Version, "commit": bi.Commit, "goversion": runtime.Version()},
	})
	build.Set(1)
	reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		build,
	)
	return reg
}

// Handler serves g in the Prometheus text format. A collector that fails
// is logged and left out; the rest of the scrape is still served.
func Handler(g prometheus.Gatherer, log *slog.Logger) http.Handler {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return promhttp.HandlerFor(g, promhttp.HandlerOpts{
		ErrorLog:      errorLog{log},
		ErrorHandling: promhttp.ContinueOnError,
		// Scrapes are cheap; more than a few at once means something is
		// looping. Extra ones wait rather than pile up work.
		MaxRequestsInFlight: 4,
	})
}

type errorLog struct{ log *slog.Logger }

func (e errorLog) Println(v ...any) {
	e.log.Warn("metrics scrape: " + strings.TrimSpace(fmt.Sprintln(v...)))
}
