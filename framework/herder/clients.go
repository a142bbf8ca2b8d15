package herder

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"github.com/connectd/connectd/framework/herder/clusterstate"
	"github.com/connectd/connectd/framework/herder/internal/notify"
	"github.com/connectd/connectd/internal/kafkalog"
)

// clientConfig builds a librdkafka config for an internal client:
// bootstrap servers, the worker's unprefixed client settings (security.*,
// ssl.*, sasl.*), then the client's own settings, which win.
func (h *Herder) clientConfig(clientID string, own kafka.ConfigMap) *kafka.ConfigMap {
	m := kafka.ConfigMap{
		"bootstrap.servers":       h.cfg.BootstrapServers,
		"client.id":               clientID,
		"go.logs.channel.enable":  true,
		"log.connection.close":    false,
		"socket.keepalive.enable": true,
	}
	for k, v := range h.cfg.ClientProps {
		m[k] = v
	}
	for k, v := range own {
		m[k] = v
	}
	return &m
}

// drainLogs forwards librdkafka's log lines to slog (internal/kafkalog)
// until the channel closes (when the client is closed).
func drainLogs(log *slog.Logger, ch chan kafka.LogEvent, wg *sync.WaitGroup) {
	wg.Add(1)
	go func() {
		defer wg.Done()
		kafkalog.Drain(log, ch)
	}()
}

// errFenced: another worker became the leader and fenced this worker's
// config-topic producer.
var errFenced = errors.New("this worker's config-topic producer was fenced by a newer leader")

// isFenced reports whether err means the transactional producer was fenced
// (or is otherwise unusable and must be replaced).
func isFenced(err error) bool {
	if errors.Is(err, errFenced) {
		return true
	}
	var ke kafka.Error
	if errors.As(err, &ke) {
		return ke.IsFatal() || ke.Code() == kafka.ErrFenced || ke.Code() == kafka.ErrProducerFenced ||
			ke.Code() == kafka.ErrInvalidProducerEpoch
	}
	return false
}

// produceAll sends msgs and waits for every delivery report, returning the
// highest offset written.
func produceAll(ctx context.Context, p *kafka.Producer, msgs []*kafka.Message) (int64, error) {
	if len(msgs) == 0 {
		return -1, nil
	}
	done := make(chan kafka.Event, len(msgs))
	for _, m := range msgs {
		if err := p.Produce(m, done); err != nil {
			// Already-queued messages still report to done (buffered).
			return -1, fmt.Errorf("produce %s: %w", m.Key, err)
		}
	}
	var last int64 = -1
	for range msgs {
		select {
		case ev := <-done:
			m, ok := ev.(*kafka.Message)
			if !ok {
				return -1, fmt.Errorf("unexpected delivery event %v", ev)
			}
			if m.TopicPartition.Error != nil {
				return -1, fmt.Errorf("write %s: %w", m.Key, m.TopicPartition.Error)
			}
			last = max(last, int64(m.TopicPartition.Offset))
		case <-ctx.Done():
			return -1, ctx.Err()
		}
	}
	return last, nil
}

// broadcast is the stores' and the leader's change signal.
type broadcast = notify.Broadcast

func newBroadcast() *broadcast { return notify.New() }

// producerChannels sizes confluent-kafka-go's Go-side channels of a
// producer. Its defaults (a million entries each for Events() and
// ProduceChannel()) put 24 MiB per producer on the Go heap at creation:
// the pages are never touched, but the garbage collector counts them as
// live, so each producer lets the worker hold up to 24 MiB more garbage
// before a collection. The herder's producers report deliveries on
// per-call channels and never use ProduceChannel, so small ones do.
var producerChannels = kafka.ConfigMap{
	"go.events.channel.size":  1000,
	"go.produce.channel.size": 0,
}

// producerConfig is clientConfig for a producer: own, plus small Go
// channels unless own sizes them.
func (h *Herder) producerConfig(clientID string, own kafka.ConfigMap) *kafka.ConfigMap {
	m := kafka.ConfigMap{}
	for k, v := range producerChannels {
		m[k] = v
	}
	for k, v := range own {
		m[k] = v
	}
	return h.clientConfig(clientID, m)
}

// record is a config-topic record as a message; the writer sets its
// topic and partition.
func record(r clusterstate.Record) *kafka.Message {
	return &kafka.Message{Key: []byte(r.Key), Value: r.Value}
}
