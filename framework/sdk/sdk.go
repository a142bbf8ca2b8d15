package sdk

import (
	"context"
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/connectd/connectd/framework/configdef"
)

// Type says which way a connector moves data relative to Kafka.
type Type string

const (
	// Source connectors read an external system and produce to Kafka.
	Source Type = "source"
	// Sink connectors consume Kafka and write an external system.
	Sink Type = "sink"
)

// Spec describes a connector class: what the REST API lists under
// /connector-plugins and what `connectd plugin install` records in the
// plugin's manifest.
type Spec struct {
	// Class is the value users put in connector.class, e.g. "DatagenSource".
	Class string
	// Version is the connector's own version, shown by the REST API.
	Version string
	// Type is Source or Sink.
	Type Type
	// Summary is one sentence for listings.
	Summary string
	// Config holds the connector-specific configuration keys. The framework
	// adds the common keys (name, connector.class, tasks.max, converters,
	// transforms, predicates, errors.*) itself; a connector must not define
	// them again.
	Config *configdef.Def
	// DefinesTransactionBoundaries reports whether source tasks can use
	// transaction.boundary=connector through SourceTaskContext.Transactions.
	DefinesTransactionBoundaries bool
	// ExactlyOnce reports whether the source connector supports exactly-once
	// delivery: it assigns each source partition to at most one task and
	// keeps all of its position in the framework's offsets.
	ExactlyOnce bool
	// RawBytes declares that a source connector's record keys and values
	// are already the bytes Kafka must hold (optional BYTES schema), like a
	// replicator's copies. The worker's default key.converter and
	// value.converter then do not apply: the framework writes the bytes
	// unchanged (ByteArrayConverter), unless the connector's own config
	// names converters, which it honours as usual. Without this, a worker
	// whose defaults are JsonConverter would turn every copied value into a
	// base64 JSON string. Headers are bytes in any case.
	RawBytes bool
}

// FieldError is a validation failure tied to one configuration key.
type FieldError struct {
	Key     string
	Message string
}

// Connector is the part of a connector that runs once per connector (not per
// task): it validates configuration and splits the work into task configs.
type Connector interface {
	// Spec describes the connector class. It must be cheap and constant.
	Spec() Spec
	// Validate checks rules that the ConfigDef cannot express (for example
	// "exactly one of topics and topics.regex"). It runs after the type,
	// required-key and validator checks of Spec().Config, with the raw
	// properties, and returns one FieldError per problem. nil means valid.
	Validate(ctx context.Context, props map[string]string) []FieldError
	// Start begins the connector with a validated configuration. A connector
	// that watches its environment (new topics, new tables) keeps cctx and
	// calls RequestTaskReconfiguration when TaskConfigs would now answer
	// differently.
	Start(ctx context.Context, cctx ConnectorContext, props map[string]string) error
	// TaskConfigs splits the work into at most maxTasks task configurations.
	TaskConfigs(ctx context.Context, maxTasks int) ([]map[string]string, error)
	// Stop releases what Start acquired. The context bounds how long it may take.
	Stop(ctx context.Context) error
}

// SourceConnector is a Connector whose tasks read an external system.
type SourceConnector interface {
	Connector
	// NewTask returns a fresh, unstarted task.
	NewTask() SourceTask
}

// SinkConnector is a Connector whose tasks write an external system.
type SinkConnector interface {
	Connector
	// NewTask returns a fresh, unstarted task.
	NewTask() SinkTask
}

// ConnectorContext lets a running Connector talk back to the framework.
type ConnectorContext interface {
	// RequestTaskReconfiguration asks the framework to call TaskConfigs
	// again and restart the tasks if the answer changed.
	RequestTaskReconfiguration()
	// RaiseError fails the connector with err; the framework reports it in
	// the connector's status and restarts it with backoff.
	RaiseError(err error)
	// Logger returns a logger that carries the connector's name.
	Logger() *slog.Logger
}

// TaskContext is what every task can use, whatever its direction.
type TaskContext interface {
	// Connector is the connector's name.
	Connector() string
	// TaskID is the task's number within the connector, from 0.
	TaskID() int
	// Logger returns a logger that carries connector and task attributes.
	// Its output is merged into the worker's log.
	Logger() *slog.Logger
	// Metrics returns a registerer for task-specific metrics. The worker
	// exposes them on its /metrics endpoint with connector and task labels
	// added; do not add those labels yourself.
	Metrics() prometheus.Registerer
}

// SourceTask reads an external system and returns records to produce.
//
// Poll and Commit may be called concurrently: the framework fetches the next
// batch while the previous one is being committed.
type SourceTask interface {
	// Start prepares the task. Committed positions are available through
	// tctx.Offset.
	Start(ctx context.Context, tctx SourceTaskContext, props map[string]string) error
	// Poll returns the next records. It should block until records are
	// available, but not for much longer than a second, and return promptly
	// when ctx is done. Returning no records and no error is fine.
	//
	// The framework is done with a result, the records and everything
	// they refer to (their maps, keys, values and headers), when it calls
	// Poll again or Stop: a task may reuse that memory for its next
	// result instead of allocating it afresh.
	Poll(ctx context.Context) ([]*SourceRecord, error)
	// Commit reports source offsets that are now durable in Kafka: for each
	// source partition, the latest offset whose record (and everything the
	// task returned before it) is written. Only now may the task advance
	// positions in the external system.
	Commit(ctx context.Context, offsets []SourceOffset) error
	// Stop releases resources. Poll will not be called again.
	Stop(ctx context.Context) error
}

// SourceTaskContext is the framework's side of a running source task.
type SourceTaskContext interface {
	TaskContext
	// Offset returns the committed offset of a source partition, or nil when
	// none was committed. The offsets are read (read_committed) from the
	// connector's offsets topic when the task starts.
	Offset(partition map[string]any) map[string]any
	// Transactions returns the transaction context when the connector runs
	// with transaction.boundary=connector, and nil otherwise.
	Transactions() TransactionContext
}

// TransactionContext lets a source task define its own transaction
// boundaries (transaction.boundary=connector). Requests apply to records the
// task has already returned from Poll or returns in the same Poll.
type TransactionContext interface {
	// CommitAfter commits the open transaction right after rec.
	CommitAfter(rec *SourceRecord)
	// AbortAfter aborts the open transaction after rec: every record of the
	// transaction, rec included, is discarded and will not be committed.
	AbortAfter(rec *SourceRecord)
	// Commit commits the open transaction after the last record returned by
	// the current (or, between polls, the previous) Poll.
	Commit()
	// Abort aborts the open transaction, like AbortAfter on the last record.
	Abort()
}

// SinkTask writes records consumed from Kafka to an external system.
type SinkTask interface {
	// Start prepares the task.
	Start(ctx context.Context, tctx SinkTaskContext, props map[string]string) error
	// Open tells the task it now owns these partitions (after a rebalance).
	Open(ctx context.Context, partitions []TopicPartition) error
	// Close tells the task it no longer owns these partitions. Flush has
	// already run for them.
	Close(ctx context.Context, partitions []TopicPartition) error
	// Put writes a batch. Records of one partition arrive in offset order.
	// A record that cannot be written (bad data, rejected by the target) is
	// handed to tctx.ReportError and the batch continues; an error returned
	// from Put fails the whole batch: retriable errors (see Retriable) make
	// the framework back off and deliver the same batch again, others fail
	// the task.
	Put(ctx context.Context, records []*SinkRecord) error
	// Flush is called before consumer offsets are committed. offsets holds,
	// per partition, the next offset after the last record passed to Put.
	// Flush makes writes durable and returns the offsets that are safe to
	// commit (each the next offset to consume); returning offsets unchanged
	// is right for a task whose Put is synchronous.
	Flush(ctx context.Context, offsets map[TopicPartition]int64) (map[TopicPartition]int64, error)
	// Stop releases resources.
	Stop(ctx context.Context) error
}

// RecordBorrower is an optional interface of a SinkTask whose Put only
// borrows its records. BorrowsRecords returning true promises that once
// Put returns the task keeps no reference to the records, nor to anything
// inside them (keys, values, header values and whatever a converter built
// from the record's bytes, which may share them): it copies what it keeps.
// The framework then reuses a batch's memory for the next batches instead
// of allocating it afresh, which saves an allocation, its zeroing and the
// garbage collector's work per batch. A task that writes synchronously in
// Put, or encodes records into its own buffers, can usually promise it.
type RecordBorrower interface {
	BorrowsRecords() bool
}

// SinkTaskContext is the framework's side of a running sink task.
type SinkTaskContext interface {
	TaskContext
	// ReportError hands a record that failed inside Put to the framework's
	// error handling: per errors.tolerance it goes to the dead-letter queue
	// (durably, before its offset is committed) or fails the task. Call it
	// only from within Put, for records of the batch being put.
	ReportError(rec *SinkRecord, err error)
}
