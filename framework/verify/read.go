package verify

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"
)

// ErrTopicNotFound is returned when a topic to read does not exist.
var ErrTopicNotFound = errors.New("topic not found")

// ReadOptions configure how topics are read.
type ReadOptions struct {
	// Bootstrap is the Kafka bootstrap address list.
	Bootstrap string
	// ClientProps are extra librdkafka consumer properties (security,
	// timeouts); group.id, isolation.level and offset settings are the
	// reader's own and cannot be overridden.
	ClientProps map[string]string
	// ReadUncommitted reads aborted and open transactions too; by default
	// the reader is read_committed, as an exactly-once consumer is.
	ReadUncommitted bool
	// Timeout bounds reading one topic to its end (default 5 minutes).
	Timeout time.Duration
}

// Header is a record header.
type Header struct {
	Key   string
	Value []byte
}

// Record is one record as consumed.
type Record struct {
	Partition int32
	Offset    int64
	Key       []byte // nil = null key
	Value     []byte // nil = null value (tombstone)
	Headers   []Header
	Timestamp time.Time
}

// Header returns the value of the first header named key and whether it
// exists.
func (r *Record) Header(key string) ([]byte, bool) {
	for _, h := range r.Headers {
		if h.Key == key {
			return h.Value, true
		}
	}
	return nil, false
}

// ReadTopic reads every partition of topic from its beginning to its end
// (the last stable offset for read_committed) as of the moment each
// partition's end is reached, calling fn for each record in offset order
// per partition (partitions interleave). It returns the partition count.
func ReadTopic(ctx context.Context, opts ReadOptions, topic string, fn func(*Record)) (int, error) {
	timeout := opts.Timeout
	if timeout <= 0 {
		timeout = 5 * time.Minute
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cm := kafka.ConfigMap{}
	for k, v := range opts.ClientProps {
		cm[k] = v
	}
	iso := "read_committed"
	if opts.ReadUncommitted {
		iso = "read_uncommitted"
	}
	for k, v := range map[string]kafka.ConfigValue{
		"bootstrap.servers":    opts.Bootstrap,
		"group.id":             "connectd-verify", // librdkafka needs one; never joined or committed
		"enable.auto.commit":   false,
		"enable.partition.eof": true,
		"isolation.level":      iso,
		"auto.offset.reset":    "earliest",
	} {
		cm[k] = v
	}
	c, err := kafka.NewConsumer(&cm)
	if err != nil {
		return 0, fmt.Errorf("verify: consumer: %w", err)
	}
	defer c.Close()
	md, err := c.GetMetadata(&topic, false, int(min(timeout, 30*time.Second).Milliseconds()))
	if err != nil {
		return 0, fmt.Errorf("verify: metadata of %s: %w", topic, err)
	}
	tm, ok := md.Topics[topic]
	if !ok || tm.Error.Code() == kafka.ErrUnknownTopicOrPart || tm.Error.Code() == kafka.ErrUnknownTopic || len(tm.Partitions) == 0 {
		return 0, fmt.Errorf("verify: %s: %w", topic, ErrTopicNotFound)
	}
	if tm.Error.Code() != kafka.ErrNoError {
		return 0, fmt.Errorf("verify: metadata of %s: %w", topic, tm.Error)
	}
	ids := make([]int32, 0, len(tm.Partitions))
	for _, p := range tm.Partitions {
		ids = append(ids, p.ID)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	var tps []kafka.TopicPartition
	pending := map[int32]bool{}
	for _, id := range ids {
		lo, hi, err := c.QueryWatermarkOffsets(topic, id, int(min(timeout, 30*time.Second).Milliseconds()))
		if err != nil {
			return 0, fmt.Errorf("verify: offsets of %s-%d: %w", topic, id, err)
		}
		if hi <= lo {
			continue // empty: nothing to wait for
		}
		tps = append(tps, kafka.TopicPartition{Topic: &topic, Partition: id, Offset: kafka.OffsetBeginning})
		pending[id] = true
	}
	if len(tps) == 0 {
		return len(ids), nil
	}
	if err := c.Assign(tps); err != nil {
		return 0, fmt.Errorf("verify: assign %s: %w", topic, err)
	}
	for len(pending) > 0 {
		if err := ctx.Err(); err != nil {
			return 0, fmt.Errorf("verify: reading %s: %d partitions not at their end: %w", topic, len(pending), err)
		}
		switch e := c.Poll(100).(type) {
		case *kafka.Message:
			p := e.TopicPartition.Partition
			if !pending[p] {
				continue // read past a partition's end: not part of the snapshot
			}
			r := Record{Partition: p, Offset: int64(e.TopicPartition.Offset), Key: e.Key, Value: e.Value, Timestamp: e.Timestamp}
			if len(e.Headers) > 0 {
				r.Headers = make([]Header, len(e.Headers))
				for i, h := range e.Headers {
					r.Headers[i] = Header{Key: h.Key, Value: h.Value}
				}
			}
			fn(&r)
		case kafka.PartitionEOF:
			if pending[e.Partition] {
				delete(pending, e.Partition)
				// Stop fetching it, so that later writes do not slow the
				// rest of the read down.
				_ = c.Pause([]kafka.TopicPartition{{Topic: &topic, Partition: e.Partition}})
			}
		case kafka.Error:
			if e.IsFatal() || e.Code() == kafka.ErrUnknownTopicOrPart || e.Code() == kafka.ErrTopicAuthorizationFailed {
				return 0, fmt.Errorf("verify: reading %s: %w", topic, e)
			}
		}
	}
	return len(ids), nil
}
