package herder

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"github.com/connectd/connectd/framework/herder/clusterstate"
	"github.com/connectd/connectd/internal/compacted"
)

// configLog reads the config topic (one partition, read_committed, from the
// beginning) into Snapshots, and writes the records any worker may write
// (target states). The leader's transactional writes go through leaderLog.
type configLog struct {
	log      *slog.Logger
	topic    string
	reader   *compacted.Reader
	producer *kafka.Producer

	snap    atomic.Pointer[clusterstate.Snapshot]
	changed *broadcast
	// endQueries counts end-offset queries: each is a broker round trip,
	// and REST reads must not make one per connector they list.
	endQueries atomic.Int64

	wg sync.WaitGroup
}

func (h *Herder) newConfigLog() (*configLog, error) {
	l := &configLog{
		log:     h.log.With("component", "config-log"),
		topic:   h.cfg.ConfigTopic,
		changed: newBroadcast(),
	}
	l.snap.Store(clusterstate.New())
	var err error
	l.producer, l.reader, err = h.openTopic(l.log, "config topic", l.topic, h.cfg.GroupID+"-configs",
		kafka.ConfigMap{"enable.idempotence": true, "acks": "all", "linger.ms": 0},
		compacted.Opts{
			GroupID: h.cfg.GroupID + "-config-reader",
			// What is committed so far: a leader transaction open at the
			// call is not waited for (a read to the end as of the call
			// must not take as long as the leader's transaction).
			End:        compacted.LastStable,
			StallAfter: configReaderStallAfter,
			OnEndQuery: func() { l.endQueries.Add(1) },
		}, &l.wg, func(kafka.Event) {
			// Delivery reports go to per-call channels; nothing else is
			// expected here.
		})
	if err != nil {
		return nil, err
	}
	return l, nil
}

// Snapshot returns the latest published snapshot.
func (l *configLog) Snapshot() *clusterstate.Snapshot { return l.snap.Load() }

// run reads the topic until ctx ends.
func (l *configLog) run(ctx context.Context) error {
	if err := l.reader.Start(ctx, l.apply); err != nil {
		return fmt.Errorf("config topic %s: %w", l.topic, err)
	}
	return nil
}

// apply publishes a new Snapshot with a batch of records applied; one
// that only moves the position (past transaction markers) moves the
// snapshot's offset.
func (l *configLog) apply(b compacted.Batch) {
	cur := l.snap.Load()
	pos, moved := b.Positions[0]
	if len(b.Records) == 0 && (!moved || pos <= cur.Offset) {
		return
	}
	work := cur.Clone()
	for _, r := range b.Records {
		work.Apply(l.log, string(r.Key), r.Value, r.Offset)
	}
	if moved && pos > work.Offset {
		work.Offset = pos
	}
	l.snap.Store(work)
	l.changed.Notify()
}

// readToEnd waits until everything committed to the topic so far is in the
// snapshot.
func (l *configLog) readToEnd(ctx context.Context) (*clusterstate.Snapshot, error) {
	if err := l.reader.ReadToEnd(ctx); err != nil {
		return nil, fmt.Errorf("reading the config topic %s to its end: %w", l.topic, err)
	}
	return l.snap.Load(), nil
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

// close stops the reader and closes the clients.
func (l *configLog) close() { closeTopic(l.reader, l.producer, &l.wg) }
