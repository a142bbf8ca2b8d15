package worker

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"github.com/connectd/connectd/framework/connconfig"
	"github.com/connectd/connectd/framework/sdk"
)

// recordFailure is one record that failed: in the plugin's converters or
// transforms, in the sink's Put, or when producing it. It carries what the
// error log and the dead-letter queue need.
type recordFailure struct {
	Stage   sdk.Stage
	Class   string // executing class (converter, transform, connector)
	Message string
	Trace   string

	// Sink records: where the record was consumed. Source records: the
	// target topic (Partition -1 when the partitioner chooses), Offset -1,
	// and the source position.
	Topic                         string
	Partition                     int32
	Offset                        int64
	SourcePartition, SourceOffset []byte

	Key, Value []byte
	Headers    []sdk.Header
	Timestamp  time.Time

	// DLQNote is added to the dead-letter record's exception message, e.g.
	// why its value is missing.
	DLQNote string
}

// where describes the record's position for messages and logs.
func (f *recordFailure) where() string {
	if f.SourcePartition != nil {
		s := fmt.Sprintf("source partition %s, source offset %s", f.SourcePartition, f.SourceOffset)
		if f.Topic != "" {
			s += ", topic " + f.Topic
		}
		return s
	}
	return fmt.Sprintf("topic %s, partition %d, offset %d", f.Topic, f.Partition, f.Offset)
}

// RecordError fails a task because a record failed and errors.tolerance
// is none (or the failure is one that no tolerance covers).
type RecordError struct {
	Stage   sdk.Stage
	Class   string
	Message string
	Where   string // e.g. "topic t, partition 0, offset 17"
	Trace   string
}

func (e *RecordError) Error() string {
	s := fmt.Sprintf("record failed at stage %s", e.Stage)
	if e.Class != "" {
		s += " in " + e.Class
	}
	s += fmt.Sprintf(" (%s): %s", e.Where, e.Message)
	if e.Trace != "" && e.Trace != e.Message {
		s += "\n" + e.Trace
	}
	return s
}

func (f *recordFailure) err() *RecordError {
	return &RecordError{Stage: f.Stage, Class: f.Class, Message: f.Message, Where: f.where(), Trace: f.Trace}
}

// errorHandler applies a connector's errors.* policy to failed records.
type errorHandler struct {
	policy errorPolicy
	id     TaskID
	log    *slog.Logger
	tm     *taskMetrics
}

// handle decides what a non-retriable record failure means. It returns the
// dead-letter record to produce (nil when there is no DLQ), or an error
// when the task must fail. The caller produces the DLQ record so that it
// joins the task's transaction (exactly-once source) or is acknowledged
// before the offsets that cover it are committed.
func (h *errorHandler) handle(f *recordFailure) (*kafka.Message, error) {
	h.tm.recordError(f.Stage, f.Class)
	if h.policy.Tolerance != connconfig.ToleranceAll {
		return nil, f.err()
	}
	h.tm.skip(string(f.Stage))
	if h.policy.LogEnable {
		attrs := []any{"stage", string(f.Stage), "class", f.Class, "record", f.where(), "error", f.Message}
		if h.policy.LogIncludeMessages {
			attrs = append(attrs, "key", printable(f.Key), "value", printable(f.Value))
		}
		h.log.Error("error encountered in task; record skipped (errors.tolerance=all)", attrs...)
	}
	if h.policy.DLQTopic == "" {
		return nil, nil
	}
	return h.dlqMessage(f), nil
}

// dlqMessage builds the dead-letter record: the original key, value,
// headers and timestamp, plus Kafka Connect's __connect.errors.* context
// headers when errors.deadletterqueue.context.headers.enable is true.
func (h *errorHandler) dlqMessage(f *recordFailure) *kafka.Message {
	topic := h.policy.DLQTopic
	m := &kafka.Message{
		TopicPartition: kafka.TopicPartition{Topic: &topic, Partition: kafka.PartitionAny},
		Key:            f.Key,
		Value:          f.Value,
	}
	if !f.Timestamp.IsZero() {
		m.Timestamp, m.TimestampType = f.Timestamp, kafka.TimestampCreateTime
	}
	for _, hd := range f.Headers {
		m.Headers = append(m.Headers, kafka.Header{Key: hd.Key, Value: hd.Value})
	}
	if !h.policy.DLQContextHeaders {
		return m
	}
	add := func(k, v string) {
		m.Headers = append(m.Headers, kafka.Header{Key: "__connect.errors." + k, Value: []byte(v)})
	}
	if f.Topic != "" {
		add("topic", f.Topic)
	}
	if f.Partition >= 0 {
		add("partition", strconv.Itoa(int(f.Partition)))
	}
	if f.Offset >= 0 {
		add("offset", strconv.FormatInt(f.Offset, 10))
	}
	if f.SourcePartition != nil {
		// Not in Kafka Connect, whose DLQ is sink-only: where a failed
		// source record came from.
		add("source.partition", string(f.SourcePartition))
		add("source.offset", string(f.SourceOffset))
	}
	add("connector.name", h.id.Connector)
	add("task.id", strconv.Itoa(h.id.Task))
	add("stage", string(f.Stage))
	add("class.name", f.Class)
	add("exception.class.name", exceptionClass(f.Stage))
	msg := f.Message
	if f.DLQNote != "" {
		msg += " (" + f.DLQNote + ")"
	}
	add("exception.message", msg)
	trace := f.Trace
	if trace == "" {
		trace = f.Message
	}
	add("exception.stacktrace", trace)
	return m
}

// exceptionClass names the kind of error. Go errors have no class, so the
// __connect.errors.exception.class.name header carries a category per
// stage instead of a Java exception class.
func exceptionClass(s sdk.Stage) string {
	switch s {
	case sdk.StageKeyConverter, sdk.StageValueConverter, sdk.StageHeaderConverter:
		return "connectd.ConversionError"
	case sdk.StageTransformation:
		return "connectd.TransformationError"
	case sdk.StageTaskPut:
		return "connectd.PutError"
	case sdk.StageTaskPoll:
		return "connectd.PollError"
	case sdk.StageKafkaProduce:
		return "connectd.ProduceError"
	case sdk.StageKafkaConsume:
		return "connectd.ConsumeError"
	}
	return "connectd.Error"
}

func printable(b []byte) string {
	const max = 1024
	if b == nil {
		return "null"
	}
	if len(b) > max {
		return strings.ToValidUTF8(string(b[:max]), "?") + "…"
	}
	return strings.ToValidUTF8(string(b), "?")
}

// ensureDLQTopic creates the dead-letter topic if it is missing, with one
// partition like Kafka Connect's.
func ensureDLQTopic(ctx context.Context, admin *kafka.AdminClient, topic string, rf int16) error {
	// The metadata request is also the reachability check that keeps
	// CreateTopics from spinning while no broker answers (package
	// kafkaadmin): with no answer there is nothing to create yet.
	md, err := admin.GetMetadata(&topic, false, 10000)
	if err != nil {
		return fmt.Errorf("dead-letter topic %s: %w", topic, err)
	}
	if tm, ok := md.Topics[topic]; ok && tm.Error.Code() == kafka.ErrNoError && len(tm.Partitions) > 0 {
		return nil
	}
	r := int(rf)
	if r <= 0 {
		r = -1
	}
	res, err := admin.CreateTopics(ctx, []kafka.TopicSpecification{{Topic: topic, NumPartitions: 1, ReplicationFactor: r}})
	if err != nil {
		return fmt.Errorf("create dead-letter topic %s: %w", topic, err)
	}
	if c := res[0].Error.Code(); c != kafka.ErrNoError && c != kafka.ErrTopicAlreadyExists {
		if c == kafka.ErrInvalidReplicationFactor {
			return fmt.Errorf("create dead-letter topic %s: %w (set errors.deadletterqueue.topic.replication.factor to at most the broker count)", topic, res[0].Error)
		}
		return fmt.Errorf("create dead-letter topic %s: %w", topic, res[0].Error)
	}
	return nil
}
