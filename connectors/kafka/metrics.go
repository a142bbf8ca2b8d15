package kafka

import (
	"fmt"
	"time"

	ckafka "github.com/confluentinc/confluent-kafka-go/v2/kafka"
	"github.com/prometheus/client_golang/prometheus"
)

// taskMetrics are a task's replication metrics. The worker adds the
// connector and task labels.
type taskMetrics struct {
	records    prometheus.Counter
	bytes      prometheus.Counter
	partitions prometheus.Gauge
	lagRecords prometheus.GaugeFunc
	lagSeconds prometheus.GaugeFunc
	reg        prometheus.Registerer
}

func newTaskMetrics(t *Task) *taskMetrics {
	m := &taskMetrics{
		records: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "connectd_replication_records_total",
			Help: "Records copied from the source cluster: written to the target and committed with their offsets.",
		}),
		bytes: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "connectd_replication_bytes_total",
			Help: "Key, value and header bytes of the records copied (as read from the source, before provenance headers).",
		}),
		partitions: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "connectd_replication_partitions",
			Help: "Source partitions assigned to the task.",
		}),
	}
	m.lagRecords = prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "connectd_replication_lag_records",
		Help: "Offsets between the source partitions' end (high watermark) and the last committed copy, summed over the task's partitions.",
	}, func() float64 { r, _ := t.lag(time.Now()); return r })
	m.lagSeconds = prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "connectd_replication_lag_seconds",
		Help: "Worst partition of the task: age of the oldest record read but not yet committed, or, when a partition lags " +
			"with nothing in flight, the time since it last committed; 0 when the task is caught up.",
	}, func() float64 { _, s := t.lag(time.Now()); return s })
	m.partitions.Set(float64(len(t.order)))
	return m
}

func (m *taskMetrics) collectors() []prometheus.Collector {
	return []prometheus.Collector{m.records, m.bytes, m.partitions, m.lagRecords, m.lagSeconds}
}

func (m *taskMetrics) register(reg prometheus.Registerer) error {
	if reg == nil {
		return nil
	}
	for i, c := range m.collectors() {
		if err := reg.Register(c); err != nil {
			for _, done := range m.collectors()[:i] {
				reg.Unregister(done)
			}
			return fmt.Errorf("registering replication metrics: %w", err)
		}
	}
	m.reg = reg
	return nil
}

func (m *taskMetrics) unregister() {
	if m.reg == nil {
		return
	}
	for _, c := range m.collectors() {
		m.reg.Unregister(c)
	}
	m.reg = nil
}

// lag computes the task's replication lag from the consumer's cached
// watermarks (no network round trip).
func (t *Task) lag(now time.Time) (records, seconds float64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.consumer == nil || len(t.order) == 0 {
		return 0, 0
	}
	tps := make([]ckafka.TopicPartition, len(t.order))
	for i, p := range t.order {
		tps[i] = ckafka.TopicPartition{Topic: &p.tp.Topic, Partition: p.tp.Partition}
	}
	positions, err := t.consumer.Position(tps)
	if err != nil || len(positions) != len(t.order) {
		positions = nil
	}
	for i, p := range t.order {
		lo, hi, err := t.consumer.GetWatermarkOffsets(p.tp.Topic, p.tp.Partition)
		if err != nil || hi < 0 {
			continue
		}
		done := p.committed
		if done < 0 && lo >= 0 {
			done = lo
		}
		// With nothing in flight, everything before the consumer's position
		// is copied or was never data (transaction markers, aborted records).
		if len(p.inflight) == 0 && positions != nil && positions[i].Offset >= 0 {
			done = max(done, int64(positions[i].Offset))
		}
		if done < 0 || hi <= done {
			continue
		}
		records += float64(hi - done)
		since := p.lastCommitted
		if len(p.inflight) > 0 && !p.inflight[0].firstTS.IsZero() {
			since = p.inflight[0].firstTS
		}
		seconds = max(seconds, now.Sub(since).Seconds())
	}
	return records, seconds
}
