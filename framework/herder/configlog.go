package herder

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"github.com/connectd/connectd/framework/herder/clusterstate"
)

// configLog reads the config topic (one partition, read_committed, from the
// beginning) into Snapshots, and writes the records any worker may write
// (target states). The leader's transactional writes go through leaderLog.
type configLog struct {
	log      *slog.Logger
	topic    string
	reader   *tailReader
	producer *kafka.Producer

	snap    atomic.Pointer[clusterstate.Snapshot]
	changed *broadcast
	// readErr is the last consumer error, for health reporting.
	readErr atomic.Pointer[error]
	// endQueries counts end-offset queries: each is a broker round trip,
	// and REST reads must not make one per connector they list.
	endQueries atomic.Int64

	wg sync.WaitGroup
}

// configReaderStallAfter: how long the config-topic reader may sit behind
// the end of the partition without moving before its consumer is
// replaced (see tailReader). The end is the high watermark, which an open
// leader transaction keeps ahead of a read_committed reader; those last
// milliseconds, or until the transaction times out (15 s) if the leader
// died mid-way, when a needless replacement costs nothing.
const configReaderStallAfter = 10 * time.Second

func (h *Herder) newConfigLog() (*configLog, error) {
	base := h.cfg.GroupID + "-configs"
	prod, err := kafka.NewProducer(h.producerConfig(base, kafka.ConfigMap{
		"enable.idempotence": true,
		"acks":               "all",
		"linger.ms":          0,
	}))
	if err != nil {
		return nil, fmt.Errorf("config topic writer: %w", err)
	}
	l := &configLog{
		log:      h.log.With("component", "config-log"),
		topic:    h.cfg.ConfigTopic,
		producer: prod,
		changed:  newBroadcast(),
	}
	l.snap.Store(clusterstate.New())
	newConsumer := func() (*kafka.Consumer, error) {
		cons, err := kafka.NewConsumer(h.clientConfig(base+"-reader", kafka.ConfigMap{
			// A group id is required by librdkafka even for manual
			// assignment; nothing is ever committed under it.
			"group.id":                 h.cfg.GroupID + "-config-reader",
			"isolation.level":          "read_committed",
			"enable.auto.commit":       false,
			"enable.auto.offset.store": false,
			"enable.partition.eof":     true,
			"auto.offset.reset":        "earliest",
			"fetch.wait.max.ms":        50,
		}))
		if err != nil {
			return nil, fmt.Errorf("config topic reader: %w", err)
		}
		drainLogs(l.log, cons.Logs(), &l.wg)
		return cons, nil
	}
	endOffset := func(p int32) (int64, error) {
		_, hi, err := prod.QueryWatermarkOffsets(l.topic, p, 2000)
		return hi, err
	}
	if l.reader, err = newTailReader(l.log, l.topic, newConsumer, endOffset, configReaderStallAfter); err != nil {
		prod.Close()
		return nil, err
	}
	drainLogs(l.log, prod.Logs(), &l.wg)
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		for range prod.Events() {
			// Delivery reports go to per-call channels; nothing else is
			// expected here.
		}
	}()
	return l, nil
}

// Snapshot returns the latest published snapshot.
func (l *configLog) Snapshot() *clusterstate.Snapshot { return l.snap.Load() }

// run reads the topic until ctx ends.
func (l *configLog) run(ctx context.Context) error {
	var work *clusterstate.Snapshot // a private copy collecting one batch
	batch := 0
	handle := func(ev kafka.Event) {
		switch e := ev.(type) {
		case *kafka.Message:
			if work == nil {
				work = l.snap.Load().Clone()
			}
			work.Apply(l.log, string(e.Key), e.Value, int64(e.TopicPartition.Offset))
			// Publish in batches: keep applying while more records
			// are immediately available (the end of the partition
			// or a quiet poll publishes).
			if batch++; batch < 500 {
				return
			}
		case kafka.PartitionEOF:
			if work == nil && int64(e.Offset) > l.snap.Load().Offset {
				// Control records (transaction markers) moved the
				// end without delivering a record.
				work = l.snap.Load().Clone()
			}
			if work != nil && int64(e.Offset) > work.Offset {
				work.Offset = int64(e.Offset)
			}
		case kafka.Error:
			err := error(e)
			l.readErr.Store(&err)
			l.log.Warn("config topic reader error", "err", e)
		}
		if work != nil {
			l.snap.Store(work)
			work, batch = nil, 0
			l.changed.Notify()
		}
	}
	if err := l.reader.start(ctx, []int32{0}, handle); err != nil {
		return fmt.Errorf("config topic %s: assign: %w", l.topic, err)
	}
	return nil
}

// endOffset is the last stable offset of the config topic: what a
// read_committed reader can reach now.
func (l *configLog) endOffset(ctx context.Context) (int64, error) {
	for {
		// The reader's own client, read_committed, answers with the
		// last stable offset.
		var hi int64
		l.endQueries.Add(1)
		err := l.reader.withConsumer(func(c *kafka.Consumer) error {
			var err error
			_, hi, err = c.QueryWatermarkOffsets(l.topic, 0, queryTimeoutMs(ctx, 5000))
			return err
		})
		if err == nil {
			return hi, nil
		}
		if ctx.Err() != nil {
			return 0, fmt.Errorf("config topic %s end offset: %w", l.topic, err)
		}
		select {
		case <-ctx.Done():
			return 0, fmt.Errorf("config topic %s end offset: %w", l.topic, err)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// readToEnd waits until everything committed to the topic so far is in the
// snapshot.
func (l *configLog) readToEnd(ctx context.Context) (*clusterstate.Snapshot, error) {
	end, err := l.endOffset(ctx)
	if err != nil {
		return nil, err
	}
	return l.waitFor(ctx, end)
}

// waitFor waits until the snapshot has read up to offset (exclusive).
func (l *configLog) waitFor(ctx context.Context, offset int64) (*clusterstate.Snapshot, error) {
	for {
		ch := l.changed.C()
		if s := l.snap.Load(); s.Offset >= offset {
			return s, nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, fmt.Errorf("reading the config topic up to offset %d (at %d): %w", offset, l.snap.Load().Offset, ctx.Err())
		}
	}
}

// write sends non-privileged records and waits until they are read back.
func (l *configLog) write(ctx context.Context, msgs ...*kafka.Message) (*clusterstate.Snapshot, error) {
	for _, m := range msgs {
		m.TopicPartition = kafka.TopicPartition{Topic: &l.topic, Partition: 0}
	}
	last, err := produceAll(ctx, l.producer, msgs)
	if err != nil {
		return nil, fmt.Errorf("config topic %s: %w", l.topic, err)
	}
	return l.waitFor(ctx, last+1)
}

// close stops the reader (run's ctx must be done) and closes the clients.
func (l *configLog) close() {
	l.reader.close()
	l.producer.Flush(5000)
	l.producer.Close()
	l.wg.Wait()
}
