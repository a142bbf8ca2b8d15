package worker

import (
	"errors"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/connectd/connectd/framework/chain"
	"github.com/connectd/connectd/framework/convert"
	"github.com/connectd/connectd/framework/sdk"
)

// metrics are the worker's task metrics, labelled connector and task
// (Kafka Connect's source-task-metrics, sink-task-metrics and
// task-error-metrics, as Prometheus counters and histograms).
type metrics struct {
	sourcePolled   *prometheus.CounterVec
	sourceWritten  *prometheus.CounterVec
	txnRecords     *prometheus.HistogramVec
	commitDuration *prometheus.HistogramVec
	offsetCommits  *prometheus.CounterVec
	sinkRead       *prometheus.CounterVec
	sinkSent       *prometheus.CounterVec
	putDuration    *prometheus.HistogramVec
	sinkPartitions *prometheus.GaugeVec
	recordErrors   *prometheus.CounterVec
	retries        *prometheus.CounterVec
	skipped        *prometheus.CounterVec
	dlqRecords     *prometheus.CounterVec
	restarts       *prometheus.CounterVec
	state          *prometheus.GaugeVec
	lastError      *prometheus.GaugeVec

	// Added with the observability work: bytes, batch sizes, consumer lag
	// and the plugin processes.
	sourceBytes    *prometheus.CounterVec
	sourceBatch    *prometheus.HistogramVec
	sinkBytes      *prometheus.CounterVec
	sinkBatch      *prometheus.HistogramVec
	sinkLag        *prometheus.GaugeVec
	pluginRestarts *prometheus.CounterVec
	startsActive   prometheus.Gauge
	startsWaiting  prometheus.Gauge
	pluginLogDrops *prometheus.CounterVec
	taskProducers  prometheus.Gauge

	// Worker-level startup outcomes (connect-worker-metrics
	// connector/task-startup-{success,failure}-total).
	connectorStartups *prometheus.CounterVec
	taskStartups      *prometheus.CounterVec
}

var taskLabels = []string{"connector", "task"}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		sourcePolled: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "connectd_source_records_polled_total",
			Help: "Records returned by source task Poll, before transforms (Kafka Connect source-record-poll-total).",
		}, taskLabels),
		sourceWritten: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "connectd_source_records_written_total",
			Help: "Source records written to Kafka and committed, after transforms (source-record-write-total).",
		}, taskLabels),
		txnRecords: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "connectd_source_transaction_records",
			Help:    "Records per committed exactly-once source transaction (transaction-size).",
			Buckets: prometheus.ExponentialBuckets(1, 4, 10),
		}, taskLabels),
		commitDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "connectd_task_commit_duration_seconds",
			Help:    "Time to commit: a source transaction, a source offset flush, or a sink flush plus consumer offset commit.",
			Buckets: prometheus.ExponentialBuckets(0.0005, 2, 16),
		}, taskLabels),
		offsetCommits: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "connectd_task_offset_commits_total",
			Help: "Offset commits by result (success, failure).",
		}, append(taskLabels, "result")),
		sinkRead: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "connectd_sink_records_read_total",
			Help: "Records consumed from Kafka by sink tasks (sink-record-read-total).",
		}, taskLabels),
		sinkSent: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "connectd_sink_records_sent_total",
			Help: "Records handed to the sink task's Put and accepted (sink-record-send-total).",
		}, taskLabels),
		putDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "connectd_sink_put_duration_seconds",
			Help:    "Time of one sink Put batch (put-batch-time).",
			Buckets: prometheus.ExponentialBuckets(0.0005, 2, 16),
		}, taskLabels),
		sinkPartitions: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "connectd_sink_partitions",
			Help: "Topic partitions assigned to the sink task (partition-count).",
		}, taskLabels),
		recordErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "connectd_task_record_errors_total",
			Help: "Records that failed, by stage and, for the converter stages, the converter class (total-record-errors).",
		}, append(taskLabels, "stage", "class")),
		retries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "connectd_task_retries_total",
			Help: "Retries of retriable failures, by stage (total-retries).",
		}, append(taskLabels, "stage")),
		skipped: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "connectd_task_records_skipped_total",
			Help: "Failed records skipped under errors.tolerance=all, by stage (total-records-skipped).",
		}, append(taskLabels, "stage")),
		dlqRecords: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "connectd_task_dlq_records_total",
			Help: "Dead-letter queue writes by result (deadletterqueue-produce-requests / -failures).",
		}, append(taskLabels, "result")),
		restarts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "connectd_task_restarts_total",
			Help: "Task restarts, automatic and requested.",
		}, taskLabels),
		state: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "connectd_task_state",
			Help: "Task state, one-hot: 1 for the current state.",
		}, append(taskLabels, "state")),
		lastError: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "connectd_task_last_error_timestamp_seconds",
			Help: "When the task last had a record fail, as a Unix time (last-error-timestamp).",
		}, taskLabels),
		sourceBytes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "connectd_source_bytes_written_total",
			Help: "Key and value bytes of the source records counted in connectd_source_records_written_total.",
		}, taskLabels),
		sourceBatch: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "connectd_source_batch_records",
			Help:    "Records per poll batch received from the source task, before transforms (batch-size).",
			Buckets: batchBuckets,
		}, taskLabels),
		sinkBytes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "connectd_sink_bytes_read_total",
			Help: "Key and value bytes of the records counted in connectd_sink_records_read_total.",
		}, taskLabels),
		sinkBatch: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "connectd_sink_batch_records",
			Help:    "Records per Put batch handed to the sink task (batch-size).",
			Buckets: batchBuckets,
		}, taskLabels),
		sinkLag: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "connectd_sink_lag_records",
			Help: "Records the sink task's consumer is behind, the maximum over its partitions, from librdkafka statistics (sink-record-lag-max).",
		}, taskLabels),
		pluginRestarts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "connectd_plugin_process_restarts_total",
			Help: "Plugin processes launched again after the previous one exited unexpectedly, by connector.",
		}, []string{"connector"}),
		startsActive: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "connectd_worker_starts_in_progress",
			Help: "Connector instances and task incarnations starting on this worker now, bounded by worker.start.concurrency.",
		}),
		startsWaiting: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "connectd_worker_starts_waiting",
			Help: "Connector instances and task incarnations waiting for a start slot (worker.start.concurrency).",
		}),
		taskProducers: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "connectd_worker_task_producers",
			Help: "Kafka producers the worker's source tasks hold: one per at-least-once producer configuration shared by plugin.isolation=plugin connectors, one per task otherwise (exactly-once, plugin.isolation=connector).",
		}),
		connectorStartups: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "connectd_worker_connector_startups_total",
			Help: "Connector instance starts on this worker by result: success (started), failure (the plugin process or the connector's Start failed).",
		}, []string{"result"}),
		taskStartups: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "connectd_worker_task_startups_total",
			Help: "Task incarnations started on this worker by result: success (reached RUNNING or PAUSED), failure (failed before that).",
		}, []string{"result"}),
		pluginLogDrops: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "connectd_plugin_log_lines_dropped_total",
			Help: "Plugin log lines dropped by the rate limit (plugin.log.lines.per.second) or a log output that cannot keep up, by connector.",
		}, []string{"connector"}),
	}
	var err error
	register := func(c prometheus.Collector) prometheus.Collector {
		if err != nil {
			return c
		}
		if e := reg.Register(c); e != nil {
			var are prometheus.AlreadyRegisteredError
			if errors.As(e, &are) {
				// Several workers in one process (tests) share a registry.
				return are.ExistingCollector
			}
			err = e
		}
		return c
	}
	m.sourcePolled = register(m.sourcePolled).(*prometheus.CounterVec)
	m.sourceWritten = register(m.sourceWritten).(*prometheus.CounterVec)
	m.txnRecords = register(m.txnRecords).(*prometheus.HistogramVec)
	m.commitDuration = register(m.commitDuration).(*prometheus.HistogramVec)
	m.offsetCommits = register(m.offsetCommits).(*prometheus.CounterVec)
	m.sinkRead = register(m.sinkRead).(*prometheus.CounterVec)
	m.sinkSent = register(m.sinkSent).(*prometheus.CounterVec)
	m.putDuration = register(m.putDuration).(*prometheus.HistogramVec)
	m.sinkPartitions = register(m.sinkPartitions).(*prometheus.GaugeVec)
	m.recordErrors = register(m.recordErrors).(*prometheus.CounterVec)
	m.retries = register(m.retries).(*prometheus.CounterVec)
	m.skipped = register(m.skipped).(*prometheus.CounterVec)
	m.dlqRecords = register(m.dlqRecords).(*prometheus.CounterVec)
	m.restarts = register(m.restarts).(*prometheus.CounterVec)
	m.state = register(m.state).(*prometheus.GaugeVec)
	m.lastError = register(m.lastError).(*prometheus.GaugeVec)
	m.sourceBytes = register(m.sourceBytes).(*prometheus.CounterVec)
	m.sourceBatch = register(m.sourceBatch).(*prometheus.HistogramVec)
	m.sinkBytes = register(m.sinkBytes).(*prometheus.CounterVec)
	m.sinkBatch = register(m.sinkBatch).(*prometheus.HistogramVec)
	m.sinkLag = register(m.sinkLag).(*prometheus.GaugeVec)
	m.pluginRestarts = register(m.pluginRestarts).(*prometheus.CounterVec)
	m.pluginLogDrops = register(m.pluginLogDrops).(*prometheus.CounterVec)
	m.startsActive = register(m.startsActive).(prometheus.Gauge)
	m.startsWaiting = register(m.startsWaiting).(prometheus.Gauge)
	m.taskProducers = register(m.taskProducers).(prometheus.Gauge)
	m.connectorStartups = register(m.connectorStartups).(*prometheus.CounterVec)
	m.taskStartups = register(m.taskStartups).(*prometheus.CounterVec)
	if err == nil {
		for _, r := range []string{"success", "failure"} {
			m.connectorStartups.WithLabelValues(r)
			m.taskStartups.WithLabelValues(r)
		}
	}
	if err != nil {
		return nil, err
	}
	return m, nil
}

// taskMetrics are one task's series, resolved once so the hot path does
// no label lookups.
type taskMetrics struct {
	m              *metrics
	labels         prometheus.Labels
	classes        converterClasses
	kind           sdk.Type // whose series are resolved: "" until forKind
	sourcePolled   prometheus.Counter
	sourceWritten  prometheus.Counter
	txnRecords     prometheus.Observer
	commitDuration prometheus.Observer
	commitOK       prometheus.Counter
	commitFailed   prometheus.Counter
	sinkRead       prometheus.Counter
	sinkSent       prometheus.Counter
	putDuration    prometheus.Observer
	sinkPartitions prometheus.Gauge
	dlqOK          prometheus.Counter
	dlqFailed      prometheus.Counter
	restarts       prometheus.Counter
	lastError      prometheus.Gauge
	sourceBytes    prometheus.Counter
	sourceBatch    prometheus.Observer
	sinkBytes      prometheus.Counter
	sinkBatch      prometheus.Observer
}

func (m *metrics) task(id TaskID, classes converterClasses) *taskMetrics {
	l := prometheus.Labels{"connector": id.Connector, "task": strconv.Itoa(id.Task)}
	c, t := id.Connector, strconv.Itoa(id.Task)
	// Every stage's error, retry and skip series exists from the start at
	// 0, so that rate() and increase() see the first failure and panels
	// and alerts have a series to show before anything failed. A converter
	// stage's error series carries the class the task will run, as the
	// failures will.
	for _, st := range allStages {
		m.recordErrors.WithLabelValues(c, t, string(st), classes.of(st))
		m.retries.WithLabelValues(c, t, string(st))
		m.skipped.WithLabelValues(c, t, string(st))
	}
	return &taskMetrics{
		m:              m,
		labels:         l,
		classes:        classes,
		commitDuration: m.commitDuration.WithLabelValues(c, t),
		commitOK:       m.offsetCommits.WithLabelValues(c, t, "success"),
		commitFailed:   m.offsetCommits.WithLabelValues(c, t, "failure"),
		dlqOK:          m.dlqRecords.WithLabelValues(c, t, "success"),
		dlqFailed:      m.dlqRecords.WithLabelValues(c, t, "failure"),
		restarts:       m.restarts.WithLabelValues(c, t),
		lastError:      m.lastError.WithLabelValues(c, t),
	}
}

// forKind resolves the series of the task's kind, so that a source task
// exports connectd_source_* and no connectd_sink_* series, and a sink
// task the reverse: a dashboard or alert summing a family then counts
// only the tasks it is about, and a scrape carries no zero series that
// can never move. It runs before each incarnation's runner starts (the
// runner's goroutines read the fields after that), and drops the other
// kind's series should a reinstalled plugin have changed kind.
func (tm *taskMetrics) forKind(kind sdk.Type) {
	if tm.kind == kind {
		return
	}
	m, c, t := tm.m, tm.labels["connector"], tm.labels["task"]
	tm.kind = kind
	switch kind {
	case sdk.Source:
		for _, v := range tm.sinkVecs() {
			v.DeletePartialMatch(tm.labels)
		}
		tm.sourcePolled = m.sourcePolled.WithLabelValues(c, t)
		tm.sourceWritten = m.sourceWritten.WithLabelValues(c, t)
		tm.txnRecords = m.txnRecords.WithLabelValues(c, t)
		tm.sourceBytes = m.sourceBytes.WithLabelValues(c, t)
		tm.sourceBatch = m.sourceBatch.WithLabelValues(c, t)
	case sdk.Sink:
		for _, v := range tm.sourceVecs() {
			v.DeletePartialMatch(tm.labels)
		}
		tm.sinkRead = m.sinkRead.WithLabelValues(c, t)
		tm.sinkSent = m.sinkSent.WithLabelValues(c, t)
		tm.putDuration = m.putDuration.WithLabelValues(c, t)
		tm.sinkPartitions = m.sinkPartitions.WithLabelValues(c, t)
		tm.sinkBytes = m.sinkBytes.WithLabelValues(c, t)
		tm.sinkBatch = m.sinkBatch.WithLabelValues(c, t)
	}
}

type partialDeleter interface {
	DeletePartialMatch(prometheus.Labels) int
}

func (tm *taskMetrics) sourceVecs() []partialDeleter {
	m := tm.m
	return []partialDeleter{m.sourcePolled, m.sourceWritten, m.txnRecords, m.sourceBytes, m.sourceBatch}
}

func (tm *taskMetrics) sinkVecs() []partialDeleter {
	m := tm.m
	return []partialDeleter{m.sinkRead, m.sinkSent, m.putDuration, m.sinkPartitions, m.sinkBytes, m.sinkBatch, m.sinkLag}
}

// converterClasses are the converter classes a task runs, as its record
// failures name them (the canonical class, aliases resolved): the
// connector's key.converter, value.converter and header.converter, else
// the worker's.
type converterClasses struct {
	key, value, header string
}

func resolveConverterClasses(props map[string]string, defaults chain.Defaults) converterClasses {
	class := func(role string) string {
		rc, ok := chain.ResolveConverter(role, props, defaults)
		if !ok {
			return ""
		}
		if info, ok := convert.Lookup(rc.Class); ok {
			return info.Class
		}
		return rc.Class
	}
	return converterClasses{
		key:    class(chain.KeyConverter),
		value:  class(chain.ValueConverter),
		header: class(chain.HeaderConverter),
	}
}

// of is the class label of a stage's record errors: the converter's for
// the converter stages, empty for the others (the task, its
// transformations and the Kafka clients, which the stage and connector
// labels already name).
func (c converterClasses) of(st sdk.Stage) string {
	switch st {
	case sdk.StageKeyConverter:
		return c.key
	case sdk.StageValueConverter:
		return c.value
	case sdk.StageHeaderConverter:
		return c.header
	}
	return ""
}

// allStages are the stage label's values (Kafka Connect's stages).
var allStages = []sdk.Stage{
	sdk.StageTaskPoll, sdk.StageTaskPut, sdk.StageTransformation, sdk.StageKeyConverter,
	sdk.StageValueConverter, sdk.StageHeaderConverter, sdk.StageKafkaProduce, sdk.StageKafkaConsume,
}

// batchBuckets cover batch sizes from one record to sink.batch.max.records
// and well beyond (a source may return any number per poll).
var batchBuckets = prometheus.ExponentialBuckets(1, 4, 9)

// setLag sets the sink lag gauge; its series appears with the first
// statistics, so source tasks have none.
func (tm *taskMetrics) setLag(records int64) {
	tm.m.sinkLag.WithLabelValues(tm.labels["connector"], tm.labels["task"]).Set(float64(records))
}

// polled counts a poll batch as the plugin returned it.
func (tm *taskMetrics) polled(records int) {
	tm.sourcePolled.Add(float64(records))
	tm.sourceBatch.Observe(float64(records))
}

// recordError counts a failed record. class is the class that failed, as
// the failure names it; it labels only converter stages, so that a
// converter the worker did not foresee (a RawBytes source runs
// ByteArrayConverter whatever the defaults say) still gets its own series.
func (tm *taskMetrics) recordError(stage sdk.Stage, class string) {
	label := ""
	if isConverterStage(stage) {
		label = class
	}
	tm.m.recordErrors.WithLabelValues(tm.labels["connector"], tm.labels["task"], string(stage), label).Inc()
	tm.lastError.SetToCurrentTime()
}

func (tm *taskMetrics) retry(stage string) {
	tm.m.retries.WithLabelValues(tm.labels["connector"], tm.labels["task"], stage).Inc()
}

func (tm *taskMetrics) skip(stage string) {
	tm.m.skipped.WithLabelValues(tm.labels["connector"], tm.labels["task"], stage).Inc()
}

func (tm *taskMetrics) setState(s State) {
	for _, st := range states {
		v := 0.0
		if st == s {
			v = 1
		}
		tm.m.state.WithLabelValues(tm.labels["connector"], tm.labels["task"], string(st)).Set(v)
	}
}

func isConverterStage(st sdk.Stage) bool {
	return st == sdk.StageKeyConverter || st == sdk.StageValueConverter || st == sdk.StageHeaderConverter
}

// remove drops the task's series when it leaves this worker.
func (tm *taskMetrics) remove() {
	all := append(tm.sourceVecs(), tm.sinkVecs()...)
	all = append(all, tm.m.commitDuration, tm.m.offsetCommits, tm.m.recordErrors,
		tm.m.retries, tm.m.skipped, tm.m.dlqRecords, tm.m.restarts, tm.m.state, tm.m.lastError)
	for _, v := range all {
		v.DeletePartialMatch(tm.labels)
	}
}
