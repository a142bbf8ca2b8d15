package worker

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"github.com/connectd/connectd/internal/kafkalog"
	"github.com/connectd/connectd/offsets"
	"github.com/connectd/connectd/plugins/host"
)

// errAbortable means the open transaction was aborted (a produce or commit
// error that librdkafka says requires an abort): the task resumes from its
// committed offsets with a fresh plugin task.
type errAbortable struct{ err error }

func (e *errAbortable) Error() string { return "transaction aborted: " + e.err.Error() }
func (e *errAbortable) Unwrap() error { return e.err }

// eosTxn is the open transaction's bookkeeping.
type eosTxn struct {
	open       bool
	records    int
	bytes      int
	offsets    *offsetSet
	lastCommit time.Time
}

// eosTask is one exactly-once incarnation's state.
type eosTask struct {
	r      *sourceRunner
	topics topicReporter
	hard   context.Context
	p      *kafka.Producer
	txID   string
	topic  string // offsets topic
	txn    eosTxn
	// committed holds every committed offset of the connector (read at
	// start, advanced by each commit): what a restarted plugin task
	// resumes from.
	committed *offsetSet
	sess      *session

	asyncMu  sync.Mutex
	asyncErr error // first delivery error of the open transaction

	msg  kafka.Message  // reused for every record
	hdrs []kafka.Header // reused header scratch

	committedSinceAbort bool
}

// runEOS runs the task exactly-once: one transactional producer
// (transactional.id ${group.id}-${connector}-${task}) whose
// InitTransactions fences the predecessor; per transaction the records,
// their dead-letter copies and the offset records go through that
// producer, then CommitTransaction, then the plugin's Commit.
func (r *sourceRunner) runEOS(ctx context.Context, ctl *taskControl) error {
	hard := ctl.hard
	begun := time.Now()
	store, err := r.prepare(ctx)
	if err != nil {
		return err
	}
	txID := transactionalID(r.w.cfg.GroupID, r.id.Connector, r.id.Task)
	cm, err := r.producerConfig(map[string]any{
		"transactional.id": txID,
		// No per-record delivery reports: CommitTransaction waits for
		// every record and fails if any delivery failed.
		"go.delivery.reports": false,
	})
	if err != nil {
		return err
	}
	p, err := kafkalog.NewProducer(r.t.log, cm)
	if err != nil {
		return fmt.Errorf("producer: %w", err)
	}
	r.w.metrics.taskProducers.Inc()
	defer func() {
		p.Close()
		r.w.metrics.taskProducers.Dec()
	}()
	e := &eosTask{r: r, hard: hard, p: p, txID: txID, topic: r.offsetsTopic, topics: newTopicReporter(r.w.status, r.id)}
	e.txn.offsets = newOffsetSet()
	go drainEvents(p, e.onDelivery, func(ke kafka.Error) {
		if ke.IsFatal() {
			e.setAsyncErr(ke)
		}
	})

	// Each step of the start is timed: after a failover the task is down
	// until it is done, and the log says where that time went.
	t0 := time.Now()
	initCtx, cancel := context.WithTimeout(hard, 2*time.Minute)
	err = p.InitTransactions(initCtx)
	cancel()
	if err != nil {
		return e.classify(fmt.Errorf("init transactions (transactional.id %s): %w", txID, err))
	}
	t1 := time.Now()
	// Offsets are read after InitTransactions: the predecessor's open
	// transaction is aborted by now, and its committed ones are visible.
	if e.committed, err = r.committedOffsets(ctx, store); err != nil {
		return err
	}
	t2 := time.Now()
	if e.sess, err = r.startSession(ctx, e.committed); err != nil {
		return err
	}
	r.t.log.Info("exactly-once task started", "transactional_id", txID,
		"open_stores", t0.Sub(begun).Round(time.Millisecond), "init_transactions", t1.Sub(t0).Round(time.Millisecond), "read_offsets", t2.Sub(t1).Round(time.Millisecond),
		"start_plugin_task", time.Since(t2).Round(time.Millisecond))
	defer func() {
		if e.sess != nil {
			_ = e.sess.close(hard)
		}
	}()
	return e.loop(ctx, ctl)
}

func (e *eosTask) onDelivery(m *kafka.Message) {
	if m.TopicPartition.Error != nil {
		topic := ""
		if m.TopicPartition.Topic != nil {
			topic = *m.TopicPartition.Topic
		}
		e.setAsyncErr(fmt.Errorf("delivery to %s[%d] failed: %w", topic, m.TopicPartition.Partition, m.TopicPartition.Error))
	}
}

func (e *eosTask) setAsyncErr(err error) {
	e.asyncMu.Lock()
	if e.asyncErr == nil {
		e.asyncErr = err
	}
	e.asyncMu.Unlock()
}

func (e *eosTask) takeAsyncErr() error {
	e.asyncMu.Lock()
	defer e.asyncMu.Unlock()
	err := e.asyncErr
	e.asyncErr = nil
	return err
}

func (e *eosTask) loop(ctx context.Context, ctl *taskControl) error {
	r := e.r
	target := ctl.initial
	reportTarget := func() {
		if target == TargetPaused {
			ctl.report(StatePaused)
		} else {
			ctl.report(StateRunning)
		}
	}
	reportTarget()
	e.txn.lastCommit = time.Now()
	restarts := 0
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		// interval boundary: an open transaction commits when its interval
		// is over even if no batch arrives.
		var tick <-chan time.Time
		if r.boundary == boundaryInterval && e.txnHasWork() {
			d := time.Until(e.txn.lastCommit.Add(r.interval))
			if timer == nil {
				timer = time.NewTimer(max(d, 0))
			} else {
				timer.Reset(max(d, 0))
			}
			tick = timer.C
		}
		var batches <-chan fetched
		if target != TargetPaused {
			batches = e.sess.batches
		}
		var err error
		select {
		case <-ctx.Done():
			return e.shutdown()
		case target = <-ctl.targets:
			switch {
			case target != TargetPaused:
			case r.boundary != boundaryConnector:
				err = e.commit()
			case e.txn.open:
				// The task decides where its transactions end, so a paused
				// one must not stay open past transaction.timeout.ms (the
				// coordinator would fence the producer): abort it and
				// resume from the committed offsets later.
				reportTarget()
				e.committedSinceAbort = true // not a failure: do not count it
				err = &errAbortable{errors.New("paused in the middle of a connector-defined transaction")}
			}
			if err == nil {
				reportTarget()
			}
		case f := <-batches:
			if f.err != nil {
				e.abort()
				return e.classify(f.err)
			}
			if err = e.process(f); err == nil {
				e.sess.task.Release(f.b) // nothing refers to its records any more
			}
		case <-tick:
			err = e.commit()
		}
		if timer != nil && tick == nil {
			timer.Stop()
		}
		if err == nil {
			continue
		}
		var ab *errAbortable
		if !errors.As(err, &ab) {
			e.abort()
			return err
		}
		// Abort and resume from the committed offsets with a fresh plugin
		// task (the old one may have advanced past what is committed).
		// Only aborts without a commit in between count towards the limit.
		if e.committedSinceAbort {
			restarts = 0
		}
		e.committedSinceAbort = false
		restarts++
		if restarts > maxAbortRestarts {
			return fmt.Errorf("%d transactions aborted in a row; last: %w", restarts, ab.err)
		}
		ctl.log.Warn("transaction aborted; resuming from committed offsets", "error", ab.err, "attempt", restarts)
		if err := e.restartFromCommitted(ctx, restarts); err != nil {
			return err
		}
	}
}

func (e *eosTask) txnHasWork() bool { return e.txn.open || e.txn.offsets.len() > 0 }

func (e *eosTask) begin() error {
	if e.txn.open {
		return nil
	}
	if err := e.p.BeginTransaction(); err != nil {
		return e.classify(fmt.Errorf("begin transaction: %w", err))
	}
	e.txn.open = true
	return nil
}

// process produces one poll batch into the open transaction and commits
// at the configured boundary.
func (e *eosTask) process(f fetched) error {
	r := e.r
	b := f.b
	r.t.tm.polled(b.Polled)
	// Before the batch's records join the transaction: a missing topic
	// fails the task here rather than aborting transactions until
	// librdkafka gives up on it.
	if err := r.creator.ensure(e.hard, b.Records); err != nil {
		return err
	}
	e.topics.batch()
	for i := range b.Records {
		rec := &b.Records[i]
		if err := e.begin(); err != nil {
			return err
		}
		e.topics.record(rec.Topic)
		e.hdrs = messageFor(&e.msg, rec, e.hdrs)
		if err := produce(e.hard, e.p, &e.msg); err != nil {
			if !isTooLarge(err) {
				return e.classify(fmt.Errorf("produce to %s: %w", rec.Topic, err))
			}
			if err := e.tolerate(r.tooLargeFailure(rec, err)); err != nil {
				return err
			}
		} else {
			e.txn.records++
			e.txn.bytes += len(rec.Key) + len(rec.Value)
		}
		switch rec.Boundary {
		case host.BoundaryCommitAfter:
			if err := e.txn.offsets.set(rec.SourcePartition, rec.SourceOffset); err != nil {
				return err
			}
			if err := e.commit(); err != nil {
				return err
			}
		case host.BoundaryAbortAfter:
			if err := e.txn.offsets.set(rec.SourcePartition, rec.SourceOffset); err != nil {
				return err
			}
			if err := e.abortRequested(); err != nil {
				return err
			}
		}
	}
	for i := range b.Failures {
		if err := e.tolerate(pluginFailure(&b.Failures[i])); err != nil {
			return err
		}
	}
	if err := e.txn.offsets.merge(b.Offsets); err != nil {
		return err
	}
	// The offsets are written inside the commit, not with the
	// transaction's first batch. Writing them early saves the commit one
	// AddPartitionsToTxn round trip, but keeps the task's offsets-topic
	// partitions inside an open transaction for the transaction's whole
	// length, and every reader of the offsets topic (read_committed, to
	// the high watermark) then waits for it: in a 30-minute chaos soak a
	// task starting after a failover spent 1.3 s (median; up to 9 s)
	// reading its offsets behind the live tasks' open transactions.
	switch {
	case b.Boundary == host.BoundaryCommitAfter:
		return e.commit()
	case b.Boundary == host.BoundaryAbortAfter:
		return e.abortRequested()
	case r.boundary == boundaryPoll:
		return e.commit()
	case r.boundary == boundaryInterval && time.Since(e.txn.lastCommit) >= r.interval:
		return e.commit()
	}
	return nil
}

// tolerate applies the error policy to a failed record; a dead-letter
// copy joins the open transaction.
func (e *eosTask) tolerate(f *recordFailure) error {
	dlq, err := e.r.eh.handle(f)
	if err != nil {
		return err
	}
	if dlq == nil {
		return nil
	}
	if err := e.begin(); err != nil {
		return err
	}
	if err := produce(e.hard, e.p, dlq); err != nil {
		e.r.t.tm.dlqFailed.Inc()
		return e.classify(fmt.Errorf("produce to dead-letter topic %s: %w", e.r.policy.DLQTopic, err))
	}
	e.r.t.tm.dlqOK.Inc()
	return nil
}

// commit writes the transaction's offsets with the same producer and
// commits; then the plugin hears about it (asynchronously).
func (e *eosTask) commit() error {
	if !e.txnHasWork() {
		e.txn.lastCommit = time.Now()
		return nil
	}
	if err := e.takeAsyncErr(); err != nil {
		return e.classify(err)
	}
	if err := e.begin(); err != nil {
		return err
	}
	if err := e.writeOffsets(); err != nil {
		return err
	}
	start := time.Now()
	for {
		err := e.p.CommitTransaction(e.hard)
		if err == nil {
			break
		}
		var ke kafka.Error
		if errors.As(err, &ke) && ke.IsRetriable() && !ke.TxnRequiresAbort() && !ke.IsFatal() && e.hard.Err() == nil {
			e.r.t.log.Warn("commit transaction: retrying", "error", err)
			continue
		}
		e.r.t.tm.commitFailed.Inc()
		if aerr := e.takeAsyncErr(); aerr != nil {
			err = fmt.Errorf("%w (first delivery error: %v)", err, aerr)
		}
		return e.classify(fmt.Errorf("commit transaction: %w", err))
	}
	tm := e.r.t.tm
	tm.commitDuration.Observe(time.Since(start).Seconds())
	tm.commitOK.Inc()
	tm.txnRecords.Observe(float64(e.txn.records))
	tm.sourceWritten.Add(float64(e.txn.records))
	tm.sourceBytes.Add(float64(e.txn.bytes))
	done := e.txn.offsets.snapshot()
	if err := e.committed.merge(done); err != nil {
		return err
	}
	e.sess.ack.add(done)
	e.txn.open, e.txn.records, e.txn.bytes = false, 0, 0
	e.txn.offsets.reset()
	e.txn.lastCommit = time.Now()
	e.committedSinceAbort = true
	return nil
}

// writeOffsets produces an offset record for every source partition whose
// offset changed since the last write, into the open transaction.
func (e *eosTask) writeOffsets() error {
	return e.txn.offsets.takeDirty(func(o host.Offset) error {
		m, err := offsets.Message(e.topic, e.r.id.Connector, offsets.Offset{Partition: o.Partition, Offset: o.Offset})
		if err != nil {
			return err
		}
		if err := produce(e.hard, e.p, m); err != nil {
			return e.classify(fmt.Errorf("produce offsets to %s: %w", e.topic, err))
		}
		return nil
	})
}

// abortRequested aborts the open transaction because the task asked for it
// (transaction.boundary=connector). Its records are discarded; the offsets
// stay pending, so the next commit moves past them as Kafka Connect does.
func (e *eosTask) abortRequested() error {
	if !e.txn.open {
		return nil
	}
	if err := e.p.AbortTransaction(e.hard); err != nil {
		return e.classify(fmt.Errorf("abort transaction: %w", err))
	}
	e.txn.open, e.txn.records, e.txn.bytes = false, 0, 0
	e.txn.offsets.markDirty() // the offset records written so far are aborted too
	return nil
}

// abort aborts the open transaction before the task stops or restarts.
func (e *eosTask) abort() {
	if !e.txn.open {
		return
	}
	ctx, cancel := context.WithTimeout(e.hard, 30*time.Second)
	defer cancel()
	if err := e.p.AbortTransaction(ctx); err != nil {
		e.r.t.log.Warn("abort transaction failed", "error", err)
	}
	e.txn.open, e.txn.records, e.txn.bytes = false, 0, 0
	e.txn.offsets.reset()
}

func (e *eosTask) restartFromCommitted(ctx context.Context, attempt int) error {
	e.abort()
	_ = e.takeAsyncErr()
	e.r.creator.forget()
	if err := e.sess.close(e.hard); err != nil {
		e.r.t.log.Warn("stopping the plugin task before the restart", "error", err)
	}
	e.sess = nil
	select {
	case <-ctx.Done():
		return ctx.Err() // stopping: nothing is open, nothing to commit
	case <-time.After(backoff(100*time.Millisecond, 5*time.Second, attempt-1)):
	}
	sess, err := e.r.startSession(ctx, e.committed)
	if err != nil {
		return err
	}
	e.sess = sess
	return nil
}

// shutdown ends the incarnation gracefully: the open transaction commits
// (poll and interval boundaries) or aborts (connector boundary, whose task
// decides where transactions end), the plugin hears about the commit, and
// the plugin task stops.
func (e *eosTask) shutdown() error {
	e.sess.cancel()
	<-e.sess.fetched
	var err error
	if e.r.boundary != boundaryConnector {
		err = e.commit()
	}
	if err != nil {
		e.abort()
	} else if e.r.boundary == boundaryConnector {
		e.abort()
	}
	closeErr := e.sess.close(e.hard)
	e.sess = nil
	if err != nil {
		var ab *errAbortable
		if errors.As(err, &ab) {
			// Nothing is lost: the next owner resumes from the committed offsets.
			e.r.t.log.Warn("final transaction aborted at shutdown", "error", err)
			return nil
		}
		return err
	}
	if closeErr != nil && e.hard.Err() == nil {
		e.r.t.log.Warn("plugin task did not stop cleanly", "error", closeErr)
	}
	return nil
}

// classify sorts a producer error: fatal ones (fencing above all) end the
// task without automatic restart, abortable ones restart it from committed
// offsets, the rest fail it.
func (e *eosTask) classify(err error) error {
	var ke kafka.Error
	if !errors.As(err, &ke) {
		if fe := e.p.GetFatalError(); fe != nil {
			errors.As(fe, &ke)
			err = fmt.Errorf("%w (producer fatal error: %v)", err, fe)
		} else {
			return err
		}
	}
	switch {
	case isFenced(ke):
		return &noRestartError{err: fmt.Errorf("producer fenced: another instance of task %s initialised transactional.id %s (or the "+
			"transaction coordinator aborted a transaction that timed out), so this one stops; it restarts automatically only if "+
			"this worker still owns the task (the new owner carries on from the committed offsets): %w", e.r.id, e.txID, err), fenced: true}
	case ke.IsFatal():
		return &noRestartError{err: fmt.Errorf("fatal producer error on transactional.id %s; the task restarts automatically only if "+
			"this worker still owns it, because a new producer would fence a possible successor: %w", e.txID, err), fatal: true}
	case ke.TxnRequiresAbort():
		return &errAbortable{err}
	case e.txn.open && ke.Code() != kafka.ErrMsgSizeTooLarge:
		// Any other produce error inside a transaction: abort and replay.
		return &errAbortable{err}
	}
	return err
}

func isFenced(ke kafka.Error) bool {
	switch ke.Code() {
	case kafka.ErrFenced, kafka.ErrProducerFenced, kafka.ErrInvalidProducerEpoch:
		return true
	}
	return false
}
