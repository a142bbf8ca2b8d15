package aerospike

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
)

// sinkMetrics are a task's metrics. The framework adds the connector and
// task labels.
type sinkMetrics struct {
	written    prometheus.Counter
	duplicates prometheus.Counter
	conflicts  prometheus.Counter
	retries    prometheus.Counter
	putSeconds prometheus.Histogram
	errors     *prometheus.CounterVec
}

func newSinkMetrics(reg prometheus.Registerer) (*sinkMetrics, error) {
	const ns, sub = "connectd", "aerospike_sink"
	m := &sinkMetrics{
		written: prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Subsystem: sub,
			Name: "records_written_total",
			Help: "Kafka records whose effect was applied to Aerospike (folded writes count each record)."}),
		duplicates: prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Subsystem: sub,
			Name: "duplicates_skipped_total",
			Help: "Kafka records skipped because the target record's positions bin shows them applied (replays, zombie writers)."}),
		conflicts: prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Subsystem: sub,
			Name: "generation_conflicts_total",
			Help: "Conditional writes refused because another writer changed the record first (GENERATION_ERROR, KEY_EXISTS_ERROR); each is re-read and retried."}),
		retries: prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Subsystem: sub,
			Name: "retries_total",
			Help: "Key reads and writes retried after a transient failure (timeouts, KEY_BUSY, unavailable partitions, connection errors)."}),
		putSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: ns, Subsystem: sub,
			Name:    "batch_duration_seconds",
			Help:    "Time to apply one put batch, reads, writes and retries included.",
			Buckets: prometheus.ExponentialBuckets(0.0005, 2, 16)}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub,
			Name: "errors_total",
			Help: "Failed key reads and writes by Aerospike result code (BAD_MAPPING: records rejected by the mapping)."},
			[]string{"result_code"}),
	}
	for _, c := range []prometheus.Collector{m.written, m.duplicates, m.conflicts, m.retries, m.putSeconds, m.errors} {
		if err := reg.Register(c); err != nil {
			var are prometheus.AlreadyRegisteredError
			if !errors.As(err, &are) {
				return nil, err
			}
		}
	}
	return m, nil
}
