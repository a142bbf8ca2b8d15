package worker

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/connectd/connectd/framework/connconfig"
	"github.com/connectd/connectd/offsets"
	"github.com/connectd/connectd/plugins/host"
)

// ackBatch tracks the deliveries of one poll batch (its records and their
// dead-letter copies). Its offsets may be written once every delivery of
// it, and of every batch before it, is acknowledged.
type ackBatch struct {
	task         *aloTask
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
	sp        *sharedProducer
	p         *kafka.Producer // sp's
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

	// inflight counts this task's records and dead-letter copies in the
	// producer (which other tasks may share) not yet reported; a report
	// that brings it to zero signals drained.
	inflight atomic.Int64
	drained  chan struct{}
}

// runALO runs the task at-least-once: an idempotent producer (shared
// with the worker's other at-least-once tasks of the same producer
// configuration, unless plugin.isolation=connector), and every
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
	isolation, err := r.w.isolation(r.t.connProps)
	if err != nil {
		return err
	}
	a := &aloTask{r: r, hard: hard, topic: r.offsetsTopic, unflushed: newOffsetSet(), errCh: make(chan struct{}),
		drained: make(chan struct{}, 1), topics: newTopicReporter(r.w.status, r.id)}
	shared := isolation == connconfig.IsolationPlugin
	if a.sp, err = r.w.producers.acquire(a, cm, shared, "connectd-"+r.w.cfg.GroupID+"-source-producer"); err != nil {
		return err
	}
	a.p = a.sp.p
	defer a.sp.release(a)
	if a.committed, err = r.committedOffsets(ctx, store); err != nil {
		return err
	}
	if a.sess, err = r.startSession(ctx, a.committed); err != nil {
		return err
	}
	defer func() { _ = a.sess.close(hard) }()
	return a.loop(ctx, ctl)
}

func (a *aloTask) onDelivery(m *kafka.Message, b *ackBatch) {
	if m.TopicPartition.Error != nil {
		topic := ""
		if m.TopicPartition.Topic != nil {
			topic = *m.TopicPartition.Topic
		}
		a.fail(fmt.Errorf("delivery to %s[%d] failed: %w", topic, m.TopicPartition.Partition, m.TopicPartition.Error))
	}
	b.release()
	if a.inflight.Add(-1) == 0 {
		select {
		case a.drained <- struct{}{}:
		default:
		}
	}
}

// produce hands m, part of batch b, to the producer.
func (a *aloTask) produce(m *kafka.Message, b *ackBatch) error {
	m.Opaque = b
	b.pending.Add(1)
	a.inflight.Add(1)
	if err := produce(a.hard, a.p, m); err != nil {
		b.pending.Add(-1)
		a.inflight.Add(-1)
		return err
	}
	return nil
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
	// The flush timer runs only while there is something to flush: an
	// idle task wakes for nothing.
	flush := time.NewTimer(a.r.w.cfg.OffsetFlushInterval)
	flush.Stop()
	armed := false
	arm := func() {
		if !armed && (len(a.fifo) > 0 || a.unflushed.len() > 0) {
			flush.Reset(a.r.w.cfg.OffsetFlushInterval)
			armed = true
		}
	}
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
			arm()
		case <-flush.C:
			armed = false
			if err := a.flushOffsets(); err != nil {
				return err
			}
			arm()
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
	b := &ackBatch{task: a, records: len(f.b.Records), offsets: f.b.Offsets, written: r.t.tm.sourceWritten, writtenBytes: r.t.tm.sourceBytes}
	b.pending.Add(1) // held until every produce below is issued
	m := &a.msg
	a.topics.batch()
	for i := range f.b.Records {
		a.topics.record(f.b.Records[i].Topic)
		a.hdrs = messageFor(m, &f.b.Records[i], a.hdrs)
		if err := a.produce(m, b); err != nil {
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
	if err := a.produce(dlq, b); err != nil {
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

// shutdown waits (until hard) for this task's outstanding deliveries,
// writes the final offsets, and stops the plugin task.
func (a *aloTask) shutdown() error {
	a.sess.cancel()
	<-a.sess.fetched
	for a.inflight.Load() > 0 {
		select {
		case <-a.drained:
		case <-a.hard.Done():
			return a.hard.Err()
		}
	}
	if err := a.failure(); err != nil {
		return err
	}
	return a.flushOffsets()
}
