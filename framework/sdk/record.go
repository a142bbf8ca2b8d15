package sdk

import (
	"fmt"
	"time"

	"github.com/connectd/connectd/framework/data"
)

// AnyPartition as a SourceRecord's Partition lets the producer's partitioner
// choose the partition from the record key.
const AnyPartition int32 = -1

// Header is one Kafka record header. Values are raw bytes: header
// conversion is the reader's business.
type Header struct {
	Key   string
	Value []byte
}

// SourceRecord is one record a source task wants written to Kafka, with the
// position in the source system that it represents.
type SourceRecord struct {
	// SourcePartition identifies a stream of the source (a file, a table, an
	// upstream topic partition). Keys are strings; values are strings,
	// numbers or booleans, so that the framework can store it as the JSON
	// key of the offsets topic.
	SourcePartition map[string]any
	// SourceOffset is the position of this record within SourcePartition,
	// with the same value rules. Resuming from it must continue after this
	// record.
	SourceOffset map[string]any

	// Topic is the Kafka topic to write to.
	Topic string
	// Partition is the target partition, or AnyPartition. The zero value
	// means partition 0.
	Partition int32

	KeySchema   *data.Schema // nil for schemaless keys
	Key         any
	ValueSchema *data.Schema // nil for schemaless values
	Value       any          // nil produces a tombstone
	Headers     []Header
	// Timestamp is the record's Kafka timestamp; the zero value lets the
	// producer set it.
	Timestamp time.Time
}

// SourceOffset is a committed position of one source partition, as reported
// to SourceTask.Commit.
type SourceOffset struct {
	Partition map[string]any
	Offset    map[string]any
}

// TopicPartition names one partition of a Kafka topic.
type TopicPartition struct {
	Topic     string
	Partition int32
}

func (tp TopicPartition) String() string { return fmt.Sprintf("%s-%d", tp.Topic, tp.Partition) }

// SinkRecord is one record consumed from Kafka, after the connector's
// converters and transforms.
type SinkRecord struct {
	// Topic and Partition may have been changed by transforms (RegexRouter,
	// TimestampRouter); the Original* fields always name where the record
	// was consumed from, which is what offsets and idempotence keys use.
	Topic     string
	Partition int32
	Offset    int64

	KeySchema   *data.Schema
	Key         any
	ValueSchema *data.Schema
	Value       any // nil for a tombstone
	Headers     []Header
	Timestamp   time.Time

	OriginalTopic     string
	OriginalPartition int32
	OriginalOffset    int64
}

// OriginalTopicPartition is the partition the record was consumed from.
func (r *SinkRecord) OriginalTopicPartition() TopicPartition {
	return TopicPartition{Topic: r.OriginalTopic, Partition: r.OriginalPartition}
}
