package plugins

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/connectd/connectd/framework/chain"
	"github.com/connectd/connectd/framework/sdk"
	"github.com/connectd/connectd/plugins/internal/wire"
	"github.com/connectd/connectd/plugins/pluginpb"
)

// sourceStream is a source task stream of the data channel.
type sourceStream = *wire.SourceServer

// sourceTask serves one source task for the life of the stream.
func (s *server) sourceTask(stream sourceStream) error {
	start, err := recvStart(stream.Recv, "source")
	if err != nil {
		return err
	}
	sc, err := connectorAs[sdk.SourceConnector](s, "source")
	if err != nil {
		return err
	}
	r := &sourceRunner{
		srv: s, stream: stream, start: start,
		credit: make(chan struct{}, 1),
	}
	return r.run(sc)
}

type sourceRunner struct {
	srv    *server
	stream sourceStream
	start  *pluginpb.SourceStart
	task   sdk.SourceTask
	chain  *chain.Source
	tctx   *sourceTaskContext

	sendMu sync.Mutex

	creditMu sync.Mutex
	credits  int
	credit   chan struct{} // wakes the poller when credits arrive

	budget    int // byte budget per message
	maxRecord int // largest record that fits a message
	// pollTimeout bounds one Poll call; pollWatch fires when one runs
	// longer (the host no longer hears anything from an idle task, so the
	// plugin is where a hanging Poll is noticed).
	pollTimeout time.Duration
	pollWatch   *time.Timer
	pollStart   atomic.Int64 // unix nanos when the running poll began; 0 between polls

	// packed is the reused encoding buffer: Send is done with a chunk
	// when it returns, so the next chunk can reuse it.
	packed []byte
	json   []byte // reused: one record's source partition and offset
	part   []byte // reused: the last source partition's JSON
	// Encoders of source partitions and offsets: each remembers the last
	// object's keys.
	partEnc, offEnc wire.ObjectEncoder

	polls, polled, failures prometheus.Counter
	pollSeconds             prometheus.Histogram
}

func (r *sourceRunner) send(m *pluginpb.SourceResponse) error {
	r.sendMu.Lock()
	defer r.sendMu.Unlock()
	return r.stream.Send(m)
}

func (r *sourceRunner) fail(err error) error {
	r.tctx.log.Error("source task failed", "error", err)
	_ = r.send(&pluginpb.SourceResponse{Msg: &pluginpb.SourceResponse_Failed{Failed: wire.ErrorToPB(err)}})
	return nil
}

func (r *sourceRunner) run(sc sdk.SourceConnector) error {
	st := r.start
	r.tctx = &sourceTaskContext{taskContext: newTaskContext(r.srv.log, st.GetConnector(), int(st.GetTask()))}
	r.srv.addTask(r.tctx.taskContext)
	defer r.srv.removeTask(r.tctx.taskContext)

	r.budget = int(st.GetBatchBytes())
	if r.budget <= 0 {
		r.budget = wire.DefaultBatchBytes
	}
	r.maxRecord = r.srv.maxMsg - wire.MessageOverhead
	r.budget = min(r.budget, r.maxRecord)
	r.pollTimeout = time.Duration(st.GetPollTimeoutMillis()) * time.Millisecond
	if r.pollTimeout <= 0 {
		r.pollTimeout = 30 * time.Second
	}
	r.credits = int(st.GetCredits())
	r.polls = prometheus.NewCounter(prometheus.CounterOpts{Name: "connectd_plugin_source_polls_total", Help: "Poll calls that returned records."})
	r.polled = prometheus.NewCounter(prometheus.CounterOpts{Name: "connectd_plugin_source_polled_records_total", Help: "Records returned by Poll, before transforms."})
	r.failures = prometheus.NewCounter(prometheus.CounterOpts{Name: "connectd_plugin_source_chain_failures_total", Help: "Records that failed in a converter or transform."})
	r.pollSeconds = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "connectd_plugin_source_poll_duration_seconds",
		Help: "Time of one Poll call of the source task, empty polls included (poll-batch-time).", Buckets: prometheus.ExponentialBuckets(0.0001, 2, 18)})
	r.tctx.wrapped.MustRegister(r.polls, r.polled, r.failures, r.pollSeconds)

	offsets, err := offsetSnapshot(st.GetOffsets())
	if err != nil {
		return r.fail(err)
	}
	r.tctx.offsets = offsets
	if st.GetProps()["transaction.boundary"] == "connector" {
		r.tctx.tx = newTransactions()
	}
	r.chain, err = chain.NewSourceWith(r.srv.converters, st.GetProps(), chain.Defaults(st.GetDefaults()).For(r.srv.spec))
	if err != nil {
		return r.fail(fmt.Errorf("converters and transforms: %w", err))
	}
	r.task = sc.NewTask()
	ctx, cancel := context.WithCancel(r.stream.Context())
	defer cancel()
	if err := r.task.Start(ctx, r.tctx, st.GetProps()); err != nil {
		return r.fail(fmt.Errorf("task start: %w", err))
	}
	if err := r.send(&pluginpb.SourceResponse{Msg: &pluginpb.SourceResponse_Started{Started: &pluginpb.Empty{}}}); err != nil {
		r.stopTask()
		return err
	}

	commits := make(chan *pluginpb.SourceCommit, 64)
	pollDone := make(chan error, 1)
	commitDone := make(chan struct{})
	r.pollWatch = time.AfterFunc(r.pollTimeout, r.pollOverdue)
	r.pollWatch.Stop() // armed by each Poll call
	go func() { pollDone <- r.pollLoop(ctx) }()
	go func() { defer close(commitDone); r.commitLoop(ctx, commits) }()

	recvErr := make(chan error, 1)
	stopReq := make(chan struct{})
	go func() {
		for {
			m, err := r.stream.Recv()
			if err != nil {
				recvErr <- err
				return
			}
			switch m := m.Msg.(type) {
			case *pluginpb.SourceRequest_Credit:
				r.addCredits(int(m.Credit.GetN()))
			case *pluginpb.SourceRequest_Commit:
				select {
				case commits <- m.Commit:
				case <-ctx.Done():
					return
				}
			case *pluginpb.SourceRequest_Stop:
				close(stopReq)
				return
			default:
				recvErr <- fmt.Errorf("unexpected message %T on a running source task stream", m)
				return
			}
		}
	}()

	var result error
	failed := false
	select {
	case <-stopReq:
	case err := <-recvErr:
		r.tctx.log.Info("source task stream closed by the host", "error", err)
		result = err
	case err := <-pollDone:
		pollDone <- err // read again below
		if err != nil {
			_ = r.fail(err)
			failed = true
		}
	case <-r.srv.stopping:
	}
	cancel()
	if err := <-pollDone; err != nil && !errors.Is(err, context.Canceled) && result == nil {
		r.tctx.log.Debug("poll loop ended", "error", err)
	}
	r.pollWatch.Stop()
	<-commitDone
	stopErr := r.stopTask()
	if result != nil {
		return result
	}
	if failed {
		return nil // the host has the failure; no stopped after failed
	}
	if stopErr != nil {
		return r.fail(fmt.Errorf("task stop: %w", stopErr))
	}
	return r.send(&pluginpb.SourceResponse{Msg: &pluginpb.SourceResponse_Stopped{Stopped: &pluginpb.Empty{}}})
}

func (r *sourceRunner) stopTask() error { return stopTask(r.task) }

func (r *sourceRunner) addCredits(n int) {
	r.creditMu.Lock()
	r.credits += n
	r.creditMu.Unlock()
	select {
	case r.credit <- struct{}{}:
	default:
	}
}

// takeCredit blocks until the host has granted a credit for one more poll
// batch, then consumes it.
func (r *sourceRunner) takeCredit(ctx context.Context) error {
	for {
		r.creditMu.Lock()
		if r.credits > 0 {
			r.credits--
			r.creditMu.Unlock()
			return nil
		}
		r.creditMu.Unlock()
		select {
		case <-r.credit:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func (r *sourceRunner) returnCredit() { r.addCredits(1) }

// pollLoop polls while the host grants credits. It returns nil when ctx is
// done and the task's error when Poll fails for good.
func (r *sourceRunner) pollLoop(ctx context.Context) error {
	backoff := 100 * time.Millisecond
	var seq uint64
	for {
		if err := r.takeCredit(ctx); err != nil {
			return nil
		}
		start := time.Now()
		r.watchPoll(start)
		recs, err := r.task.Poll(ctx)
		if ctx.Err() != nil {
			return nil
		}
		r.pollSeconds.Observe(time.Since(start).Seconds())
		if err != nil {
			if sdk.IsRetriable(err) {
				r.pollStart.Store(0) // the backoff is no hang
				r.tctx.log.Warn("poll failed, retrying", "error", err, "backoff", backoff)
				r.returnCredit()
				select {
				case <-time.After(backoff):
				case <-ctx.Done():
					return nil
				}
				backoff = min(2*backoff, 10*time.Second)
				continue
			}
			return fmt.Errorf("poll: %w", err)
		}
		backoff = 100 * time.Millisecond
		var pending pluginpb.Boundary
		if r.tctx.tx != nil {
			pending = r.tctx.tx.peekPending()
		}
		if len(recs) == 0 && pending == pluginpb.Boundary_BOUNDARY_NONE {
			// Nothing to tell the host: an idle task costs it nothing.
			r.pollStart.Store(0)
			r.returnCredit()
			continue
		}
		seq++
		err = r.sendBatch(seq, recs)
		r.pollStart.Store(0)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
	}
}

// watchPoll notes that a poll began at start and arms the watch that
// fails the task if it is still running pollTimeout later. A poll is the
// Poll call and, when it returned records, their converters and
// transforms and the sending of the batch: everything the host waits for
// once it has granted a credit. Arming a timer costs no wake-up: an idle
// task is woken only by its own Poll.
func (r *sourceRunner) watchPoll(start time.Time) {
	r.pollStart.Store(start.UnixNano())
	r.pollWatch.Reset(r.pollTimeout)
}

// pollOverdue runs when a poll may have run past pollTimeout: the task
// fails with how long it has run. A poll that ended in the meantime, or a
// later one still within its time, is left alone.
func (r *sourceRunner) pollOverdue() {
	began := r.pollStart.Load()
	if began == 0 {
		return
	}
	ran := time.Since(time.Unix(0, began))
	if ran < r.pollTimeout {
		r.pollWatch.Reset(r.pollTimeout - ran)
		return
	}
	r.tctx.log.Error("source task failed: a poll has not ended", "running_for", ran.Round(time.Millisecond), "poll_timeout", r.pollTimeout)
	_ = r.send(&pluginpb.SourceResponse{Msg: &pluginpb.SourceResponse_PollHungMillis{PollHungMillis: ran.Milliseconds()}})
}

// sendBatch applies the chain to one poll result and sends it, split by
// the byte budget.
func (r *sourceRunner) sendBatch(seq uint64, recs []*sdk.SourceRecord) error {
	r.polls.Inc()
	r.polled.Add(float64(len(recs)))
	batch := &pluginpb.SourceBatch{Seq: seq}
	buf := r.packed[:0]
	count := 0
	size := 0      // failures' share of the budget
	lastKept := -1 // start of the last kept record's boundary byte in buf
	offIndex := map[string]int{}
	var offsets []*pluginpb.SourceOffset
	// Records of one source partition usually share its map: it is
	// encoded once per run of records with the same map (the maps are the
	// task's, unchanged while its Poll result is sent).
	var (
		lastPart unsafe.Pointer
		partIdx  int
	)

	flush := func(final bool) error {
		batch.Records, batch.Count, batch.Final = buf, int32(count), final
		err := r.send(&pluginpb.SourceResponse{Msg: &pluginpb.SourceResponse_Batch{Batch: batch}})
		batch.Records, batch.Failures = nil, nil
		r.packed = buf[:0]
		buf, count, size, lastKept = buf[:0], 0, 0, -1
		return err
	}

	for _, rec := range recs {
		if rec == nil {
			continue
		}
		// part and off are slices of reused buffers: copied where kept.
		if pm := mapID(rec.SourcePartition); pm == nil || pm != lastPart {
			js, err := r.partEnc.Append(r.part[:0], rec.SourcePartition)
			if err != nil {
				return fmt.Errorf("source partition of a record for topic %q is not JSON-serializable: %w", rec.Topic, err)
			}
			r.part, lastPart = js, pm
			var ok bool
			if partIdx, ok = offIndex[string(js)]; !ok {
				partIdx = len(offsets)
				offIndex[string(js)] = partIdx
				offsets = append(offsets, &pluginpb.SourceOffset{Partition: bytes.Clone(js)})
			}
		}
		js, err := r.offEnc.Append(r.json[:0], rec.SourceOffset)
		if err != nil {
			return fmt.Errorf("source offset of a record for topic %q is not JSON-serializable: %w", rec.Topic, err)
		}
		r.json = js
		part, off := r.part[:len(r.part):len(r.part)], js
		offsets[partIdx].Offset = append(offsets[partIdx].Offset[:0], off...)
		boundary := pluginpb.Boundary_BOUNDARY_NONE
		if r.tctx.tx != nil {
			boundary = r.tctx.tx.take(rec)
		}

		raw, keep, fail := r.chain.Apply(rec)
		if fail == nil && keep && wire.RecordSize(&raw) > r.maxRecord {
			fail = &chain.Failure{Stage: sdk.StageKafkaProduce, Class: "plugins",
				Err: fmt.Errorf("record of %d bytes exceeds the plugin message limit of %d bytes (raise the host's MaxMessageBytes)", wire.RecordSize(&raw), r.srv.maxMsg)}
		}
		if fail != nil {
			r.failures.Inc()
			f := &pluginpb.SourceFailure{
				Stage: string(fail.Stage), Class: fail.Class, Message: fail.Err.Error(), Trace: fail.Error(),
				SourcePartition: bytes.Clone(part), SourceOffset: bytes.Clone(off), Topic: rec.Topic,
				Key: bestEffortBytes(rec.Key), Value: bestEffortBytes(rec.Value),
			}
			fsize := 64 + len(f.Key) + len(f.Value) + len(f.Message) + len(f.Trace) + len(part) + len(off) + len(f.Topic)
			if fsize > r.maxRecord {
				// Its bytes cannot cross the boundary (the record was
				// probably refused for its size): report it without them.
				fsize -= len(f.Key) + len(f.Value)
				f.Message += fmt.Sprintf(" (key and value, %d bytes, not carried: above the plugin message limit)", len(f.Key)+len(f.Value))
				f.Key, f.Value = nil, nil
			}
			if (count > 0 || len(batch.Failures) > 0) && len(buf)+size+fsize > r.budget {
				if err := flush(false); err != nil {
					return err
				}
			}
			size += fsize
			batch.Failures = append(batch.Failures, f)
			continue
		}
		if !keep {
			continue // filtered: its offset still counts (offsets above)
		}
		n := wire.RecordSize(&raw) + len(part) + len(off)
		if count > 0 && len(buf)+size+n > r.budget {
			if err := flush(false); err != nil {
				return err
			}
		}
		buf = wire.AppendRecord(buf, &raw)
		buf = wire.AppendSourceExtras(buf, part, off, byte(boundary))
		lastKept = len(buf) - 1
		count++
	}
	if r.tctx.tx != nil {
		if p := r.tctx.tx.takePending(); p != pluginpb.Boundary_BOUNDARY_NONE {
			if lastKept >= 0 {
				buf[lastKept] = byte(p) // the last record of this poll
			} else {
				batch.Boundary = p
			}
		}
	}
	batch.Polled = int32(len(recs))
	batch.Offsets = offsets
	err := flush(true)
	if cap(r.packed) > 4*r.budget {
		r.packed = nil // do not keep a 16 MiB record's buffer forever
	}
	return err
}

// mapID is m's identity (nil for a nil map).
func mapID(m map[string]any) unsafe.Pointer { return reflect.ValueOf(m).UnsafePointer() }

func bestEffortBytes(v any) []byte {
	switch x := v.(type) {
	case nil:
		return nil
	case []byte:
		return x
	case string:
		return []byte(x)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	return b
}

func (r *sourceRunner) commitLoop(ctx context.Context, commits <-chan *pluginpb.SourceCommit) {
	for {
		select {
		case <-ctx.Done():
			return
		case c := <-commits:
			err := r.commit(ctx, c)
			res := &pluginpb.CommitResult{Id: c.GetId(), Error: wire.ErrorToPB(err)}
			if err := r.send(&pluginpb.SourceResponse{Msg: &pluginpb.SourceResponse_CommitResult{CommitResult: res}}); err != nil {
				return
			}
		}
	}
}

func (r *sourceRunner) commit(ctx context.Context, c *pluginpb.SourceCommit) error {
	offs := make([]sdk.SourceOffset, 0, len(c.GetOffsets()))
	for _, o := range c.GetOffsets() {
		var so sdk.SourceOffset
		if err := json.Unmarshal(o.GetPartition(), &so.Partition); err != nil {
			return fmt.Errorf("commit: source partition %q: %w", o.GetPartition(), err)
		}
		if err := json.Unmarshal(o.GetOffset(), &so.Offset); err != nil {
			return fmt.Errorf("commit: source offset %q: %w", o.GetOffset(), err)
		}
		offs = append(offs, so)
	}
	return r.task.Commit(ctx, offs)
}
