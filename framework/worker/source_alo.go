package worker

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/connectd/connectd/internal/kafkalog"
	"github.com/connectd/connectd/offsets"
	"github.com/connectd/connectd/plugins/host"
)

// ackBatch tracks the deliveries of one poll batch (its records and their
// dead-letter copies). Its offsets may be written once every delivery of
// it, and of every batch before it, is acknowledged.
type ackBatch struct {
	pending      atomic.Int64
	records      int
	bytes        int
	offsets      []host.Offset
	written      prometheus.Counter
	writtenBytes prometheus.Counter
}

// release drops one pending delivery; the last one counts the batch's
// records as written.
func (b *ackBatch) release() {
	if b.pending.Add(-1) == 0 {
		b.written.Add(float64(b.records))
		b.writtenBytes.Add(float64(b.bytes))
	}
}

// aloTask is one at-least-once incarnation's state.
type aloTask struct {
	r         *sourceRunner
	topics    topicReporter
	hard      context.Context
	p         *kafka.Producer
	topic     string
	committed *offsetSet
	sess      *session
	fifo      []*ackBatch
	unflushed *offsetSet // acknowledged, not yet written

	msg  kafka.Message  // reused for every record
	hdrs []kafka.Header // reused header scratch

	errMu sync.Mutex
	err   error // first failed delivery
	errCh chan struct{}
}

// runALO runs the task at-least-once: an idempotent producer, and every
// offset.flush.interval.ms the offsets of batches whose records are all
// acknowledged are written to the offsets topic, then reported to the
// plugin. A crash replays at most what was written since the last flush.
func (r *sourceRunner) runALO(ctx context.Context, ctl *taskControl) error {
	hard := ctl.hard
	store, err := r.prepare(ctx)
	if err != nil {
		return err
	}
	cm, err := r.producerConfig(map[string]any{"go.delivery.report.fields": "none"})
	if err != nil {
		return err
	}
	p, err := kafkalog.NewProducer(r.t.log, cm)
	if err != nil {
		return fmt.Errorf("producer: %w", err)
	}
	defer p.Close()
	a := &aloTask{r: r, hard: hard, p: p, topic: r.offsetsTopic, unflushed: newOffsetSet(), errCh: make(chan struct{}),
		topics: newTopicReporter(r.w.status, r.id)}
	go drainEvents(p, a.onDelivery, func(ke kafka.Error) {
		if ke.IsFatal() {
			a.fail(fmt.Errorf("fatal producer error: %w", ke))
		}
	})
	if a.committed, err = r.committedOffsets(ctx, store); err != nil {
		return err
	}
	if a.sess, err = r.startSession(ctx, a.committed); err != nil {
		return err
	}
	defer func() { _ = a.sess.close(hard) }()
	return a.loop(ctx, ctl)
}

func (a *aloTask) onDelivery(m *kafka.Message) {
	b, _ := m.Opaque.(*ackBatch)
	if m.TopicPartition.Error != nil {
		topic := ""
		if m.TopicPartition.Topic != nil {
			topic = *m.TopicPartition.Topic
		}
		a.fail(fmt.Errorf("delivery to %s[%d] failed: %w", topic, m.TopicPartition.Partition, m.TopicPartition.Error))
	}
	if b != nil {
		b.release()
	}
}

func (a *aloTask) fail(err error) {
	a.errMu.Lock()
	defer a.errMu.Unlock()
	if a.err == nil {
		a.err = err
		close(a.errCh)
	}
}

func (a *aloTask) failure() error {
	a.errMu.Lock()
	defer a.errMu.Unlock()
	return a.err
}

func (a *aloTask) loop(ctx context.Context, ctl *taskControl) error {
	target := ctl.initial
	report := func() {
		if target == TargetPaused {
			ctl.report(StatePaused)
		} else {
			ctl.report(StateRunning)
		}
	}
	report()
	flush := time.NewTicker(a.r.w.cfg.OffsetFlushInterval)
	defer flush.Stop()
	for {
		var batches <-chan fetched
		if target != TargetPaused {
			batches = a.sess.batches
		}
		select {
		case <-ctx.Done():
			return a.shutdown()
		case target = <-ctl.targets:
			report()
		case f := <-batches:
			if f.err != nil {
				return f.err
			}
			if err := a.process(f); err != nil {
				return err
			}
			a.sess.task.Release(f.b) // produced (copied) and its offsets are copies
		case <-flush.C:
			if err := a.flushOffsets(); err != nil {
				return err
			}
		case <-a.errCh:
			return a.failure()
		}
	}
}

func (a *aloTask) process(f fetched) error {
	r := a.r
	r.t.tm.polled(f.b.Polled)
	if err := r.creator.ensure(a.hard, f.b.Records); err != nil {
		return err
	}
	b := &ackBatch{records: len(f.b.Records), offsets: f.b.Offsets, written: r.t.tm.sourceWritten, writtenBytes: r.t.tm.sourceBytes}
	b.pending.Add(1) // held until every produce below is issued
	m := &a.msg
	a.topics.batch()
	for i := range f.b.Records {
		a.topics.record(f.b.Records[i].Topic)
		a.hdrs = messageFor(m, &f.b.Records[i], a.hdrs)
		m.Opaque = b
		b.pending.Add(1)
		if err := produce(a.hard, a.p, m); err != nil {
			b.pending.Add(-1)
			b.records--
			if !isTooLarge(err) {
				return fmt.Errorf("produce to %s: %w", f.b.Records[i].Topic, err)
			}
			if err := a.tolerate(b, r.tooLargeFailure(&f.b.Records[i], err)); err != nil {
				return err
			}
			continue
		}
		b.bytes += len(m.Key) + len(m.Value)
	}
	for i := range f.b.Failures {
		if err := a.tolerate(b, pluginFailure(&f.b.Failures[i])); err != nil {
			return err
		}
	}
	b.release()
	a.fifo = append(a.fifo, b)
	return nil
}

func (a *aloTask) tolerate(b *ackBatch, f *recordFailure) error {
	dlq, err := a.r.eh.handle(f)
	if err != nil || dlq == nil {
		return err
	}
	dlq.Opaque = b
	b.pending.Add(1)
	if err := produce(a.hard, a.p, dlq); err != nil {
		b.pending.Add(-1)
		a.r.t.tm.dlqFailed.Inc()
		return fmt.Errorf("produce to dead-letter topic %s: %w", a.r.policy.DLQTopic, err)
	}
	a.r.t.tm.dlqOK.Inc()
	return nil
}

// flushOffsets writes the offsets of the acknowledged prefix of batches
// and, once the offset records are acknowledged, reports them to the
// plugin.
func (a *aloTask) flushOffsets() error {
	n := 0
	for ; n < len(a.fifo) && a.fifo[n].pending.Load() == 0; n++ {
		if err := a.unflushed.merge(a.fifo[n].offsets); err != nil {
			return err
		}
	}
	clear(a.fifo[:n])
	a.fifo = a.fifo[n:]
	if a.unflushed.len() == 0 {
		return nil
	}
	start := time.Now()
	done := make(chan kafka.Event, a.unflushed.len())
	for _, o := range a.unflushed.list {
		m, err := offsets.Message(a.topic, a.r.id.Connector, offsets.Offset{Partition: o.Partition, Offset: o.Offset})
		if err != nil {
			return err
		}
		if err := a.p.Produce(m, done); err != nil {
			a.r.t.tm.commitFailed.Inc()
			a.r.t.log.Warn("writing source offsets failed; retrying at the next flush", "error", err)
			return nil
		}
	}
	timeout := time.NewTimer(max(a.r.w.cfg.OffsetFlushInterval, 30*time.Second))
	defer timeout.Stop()
	for range a.unflushed.len() {
		select {
		case ev := <-done:
			if m, ok := ev.(*kafka.Message); ok && m.TopicPartition.Error != nil {
				a.r.t.tm.commitFailed.Inc()
				a.r.t.log.Warn("writing source offsets failed; retrying at the next flush", "error", m.TopicPartition.Error)
				return nil
			}
		case <-timeout.C:
			a.r.t.tm.commitFailed.Inc()
			a.r.t.log.Warn("writing source offsets timed out; retrying at the next flush")
			return nil
		case <-a.hard.Done():
			return a.hard.Err()
		}
	}
	a.r.t.tm.commitDuration.Observe(time.Since(start).Seconds())
	a.r.t.tm.commitOK.Inc()
	list := a.unflushed.snapshot()
	if err := a.committed.merge(list); err != nil {
		return err
	}
	a.sess.ack.add(list)
	a.unflushed.reset()
	return nil
}

// shutdown waits (until hard) for outstanding deliveries, writes the final
// offsets, and stops the plugin task.
func (a *aloTask) shutdown() error {
	a.sess.cancel()
	<-a.sess.fetched
	for a.p.Len() > 0 && a.hard.Err() == nil {
		a.p.Flush(100)
	}
	if err := a.failure(); err != nil {
		return err
	}
	return a.flushOffsets()
}
