package rest

import (
	"errors"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the request metrics, labelled by handler (the route's
// OpenAPI operationId, "unmatched" or "cors_preflight") and status code.
type metrics struct {
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "connectd_rest_requests_total",
			Help: "REST API requests, by handler and HTTP status code.",
		}, []string{"handler", "code"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "connectd_rest_request_duration_seconds",
			Help:    "REST API request latency, by handler.",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 90},
		}, []string{"handler"}),
	}
	if reg == nil {
		return m, nil
	}
	for _, c := range []prometheus.Collector{m.requests, m.duration} {
		if err := reg.Register(c); err != nil {
			var are prometheus.AlreadyRegisteredError
			if errors.As(err, &are) {
				return nil, errors.New("REST metrics are already registered on this registerer (one Server per registry)")
			}
			return nil, err
		}
	}
	return m, nil
}

func (m *metrics) observe(handler string, code int, d time.Duration) {
	m.requests.WithLabelValues(handler, strconv.Itoa(code)).Inc()
	m.duration.WithLabelValues(handler).Observe(d.Seconds())
}
