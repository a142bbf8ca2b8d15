package plugins

import (
	"context"
	"fmt"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/connectd/connectd/framework/chain"
	"github.com/connectd/connectd/framework/sdk"
	"github.com/connectd/connectd/plugins/internal/wire"
	"github.com/connectd/connectd/plugins/pluginpb"
)

// sinkCredits is how many put batches the plugin accepts ahead of the one
// being written: enough for the host to pipeline, little enough to bound
// the plugin's memory to a few batches.
const sinkCredits = 2

// sinkStream is a sink task stream of the data channel.
type sinkStream = *wire.SinkServer

// sinkTask serves one sink task for the life of the stream.
func (s *server) sinkTask(stream sinkStream) error {
	start, err := recvStart(stream.Recv, "sink")
	if err != nil {
		return err
	}
	sc, err := connectorAs[sdk.SinkConnector](s, "sink")
	if err != nil {
		return err
	}
	r := &sinkRunner{srv: s, stream: stream, start: start}
	return r.run(sc)
}

type sinkRunner struct {
	srv    *server
	stream sinkStream
	start  *pluginpb.SinkStart
	task   sdk.SinkTask
	chain  *chain.Sink
	tctx   *sinkTaskContext

	sendMu sync.Mutex

	origIdx []int32 // reused per put: kept record -> index in the host's batch

	// borrow: the task promised not to keep records past Put
	// (sdk.RecordBorrower), so a put's memory is reused: its receive
	// buffers go back to the data channel (release), its decoded records and converted slab are kept for the next
	// put.
	borrow  bool
	release func([]byte)
	spare   chan []chain.Raw // decoded records of answered puts, for receive
	slab    []sdk.SinkRecord
	ptrs    []*sdk.SinkRecord

	batches, records, reported prometheus.Counter
	queued                     prometheus.Gauge
	heldMax, heldBytesMax      prometheus.Gauge

	heldMu    sync.Mutex
	held      int // put batches received and not yet answered
	heldBytes int
	maxHeld   int
	maxBytes  int

	// What the run loop takes requests from, and its reassembly state.
	in       sinkInbox
	ops      []sinkOp // complete requests in arrival order; handled up to opsHead
	opsHead  int
	inErr    error // the stream's end or a protocol error, after ops
	putID    uint64
	putRecs  []chain.Raw
	putBufs  [][]byte
	putBytes int
	putOpen  bool
	dec      wire.Decoder
}

// sinkInbox is what the run loop takes requests from without a goroutine
// in between (the data channel's stream, wire.SinkServer).
type sinkInbox interface {
	// TryRecv returns a queued request; ok is false when none is queued
	// and the stream has not ended (err is then nil).
	TryRecv() (m *pluginpb.SinkRequest, ok bool, err error)
	// Wait returns once a request or the end may have arrived since
	// TryRecv last found nothing, or when ctx is done. It reads the data
	// channel on the waiting goroutine while nobody else does, so the next
	// put wakes no other goroutine on its way.
	Wait(ctx context.Context)
}

// hold accounts for a received batch (n > 0) or an answered one (n < 0).
// The high-water marks show that the host never sends beyond the credits.
func (r *sinkRunner) hold(n, bytes int) {
	r.heldMu.Lock()
	defer r.heldMu.Unlock()
	r.held += n
	r.heldBytes += bytes
	if r.held > r.maxHeld {
		r.maxHeld = r.held
		r.heldMax.Set(float64(r.maxHeld))
	}
	if r.heldBytes > r.maxBytes {
		r.maxBytes = r.heldBytes
		r.heldBytesMax.Set(float64(r.maxBytes))
	}
}

func (r *sinkRunner) send(m *pluginpb.SinkResponse) error {
	r.sendMu.Lock()
	defer r.sendMu.Unlock()
	return r.stream.Send(m)
}

// sendAll sends messages in order, in one write when the channel is idle.
func (r *sinkRunner) sendAll(ms ...*pluginpb.SinkResponse) error {
	r.sendMu.Lock()
	defer r.sendMu.Unlock()
	return r.stream.SendAll(ms...)
}

func (r *sinkRunner) fail(err error) error {
	r.tctx.log.Error("sink task failed", "error", err)
	_ = r.send(&pluginpb.SinkResponse{Msg: &pluginpb.SinkResponse_Failed{Failed: wire.ErrorToPB(err)}})
	return nil
}

// sinkOp is one request in the order the host sent it.
type sinkOp struct {
	req     *pluginpb.SinkRequest
	records []chain.Raw // put only, reassembled
	bufs    [][]byte    // put only, with borrow: the buffers records point into
	bytes   int
	id      uint64
}

func (r *sinkRunner) run(sc sdk.SinkConnector) error {
	st := r.start
	r.tctx = &sinkTaskContext{taskContext: newTaskContext(r.srv.log, st.GetConnector(), int(st.GetTask()))}
	r.srv.addTask(r.tctx.taskContext)
	defer r.srv.removeTask(r.tctx.taskContext)
	r.batches = prometheus.NewCounter(prometheus.CounterOpts{Name: "connectd_plugin_sink_put_batches_total", Help: "Put batches received from the host."})
	r.records = prometheus.NewCounter(prometheus.CounterOpts{Name: "connectd_plugin_sink_put_records_total", Help: "Records received from the host."})
	r.reported = prometheus.NewCounter(prometheus.CounterOpts{Name: "connectd_plugin_sink_record_failures_total", Help: "Records that failed in a converter, transform or through ReportError."})
	r.queued = prometheus.NewGauge(prometheus.GaugeOpts{Name: "connectd_plugin_sink_queued_batches", Help: "Put batches received and not yet answered."})
	r.heldMax = prometheus.NewGauge(prometheus.GaugeOpts{Name: "connectd_plugin_sink_held_batches_max", Help: "Most put batches held at once (received, not yet answered)."})
	r.heldBytesMax = prometheus.NewGauge(prometheus.GaugeOpts{Name: "connectd_plugin_sink_held_bytes_max", Help: "Most record bytes held at once in received, unanswered put batches."})
	r.tctx.wrapped.MustRegister(r.batches, r.records, r.reported, r.queued, r.heldMax, r.heldBytesMax)

	var err error
	r.chain, err = chain.NewSinkWith(r.srv.converters, st.GetProps(), chain.Defaults(st.GetDefaults()))
	if err != nil {
		return r.fail(fmt.Errorf("converters and transforms: %w", err))
	}
	r.task = sc.NewTask()
	if b, ok := r.task.(sdk.RecordBorrower); ok && b.BorrowsRecords() {
		r.borrow = true
		r.spare = make(chan []chain.Raw, sinkCredits+1)
		r.release = r.stream.Release
	}
	ctx, cancel := context.WithCancel(r.stream.Context())
	defer cancel()
	if err := r.task.Start(ctx, r.tctx, st.GetProps()); err != nil {
		return r.fail(fmt.Errorf("task start: %w", err))
	}
	if err := r.send(&pluginpb.SinkResponse{Msg: &pluginpb.SinkResponse_Started{Started: &pluginpb.SinkStarted{Credits: sinkCredits}}}); err != nil {
		r.stopTask()
		return err
	}

	// The loop takes requests straight from the stream: it reads the data
	// channel itself while it waits (Wait), so no other goroutine is woken
	// per request.
	r.in = r.stream
	for {
		op, ok, err := r.next()
		if err != nil {
			r.tctx.log.Info("sink task stream closed by the host", "error", err)
			r.stopTask()
			return err
		}
		if !ok {
			r.in.Wait(r.srv.stopCtx)
			if r.srv.stopCtx.Err() != nil {
				r.stopTask()
				return nil
			}
			continue
		}
		stop, err := r.handle(ctx, op)
		if err != nil {
			return err
		}
		if stop {
			return nil
		}
	}
}

// next returns the next complete request; ok is false when none has
// arrived yet, err is the stream's end or a protocol error once every
// request before it was returned.
func (r *sinkRunner) next() (op sinkOp, ok bool, err error) {
	if r.opsHead == len(r.ops) {
		r.ops, r.opsHead = r.ops[:0], 0
		r.drain()
	}
	if r.opsHead < len(r.ops) {
		op = r.ops[r.opsHead]
		r.ops[r.opsHead] = sinkOp{}
		r.opsHead++
		return op, true, nil
	}
	return sinkOp{}, false, r.inErr
}

// drain takes every request that has arrived into r.ops, reassembling
// puts, until the stream's end or a protocol error (kept in r.inErr).
func (r *sinkRunner) drain() {
	for r.inErr == nil {
		m, ok, err := r.in.TryRecv()
		if err != nil {
			r.inErr = err
			return
		}
		if !ok {
			return
		}
		op, complete, err := r.feed(m)
		if err != nil {
			r.inErr = err
			return
		}
		if complete {
			r.ops = append(r.ops, op)
		}
	}
}

// feed takes one request: a part of a put (complete once its final part
// is in), or a control request.
func (r *sinkRunner) feed(m *pluginpb.SinkRequest) (op sinkOp, complete bool, err error) {
	op = sinkOp{req: m}
	switch x := m.Msg.(type) {
	case *pluginpb.SinkRequest_Put:
		p := x.Put
		if r.putOpen && p.GetId() != r.putID {
			return op, false, fmt.Errorf("protocol error: put %d started before put %d was complete", p.GetId(), r.putID)
		}
		if p.GetCount() < 0 || int(p.GetCount()) > len(p.GetRecords()) {
			return op, false, fmt.Errorf("protocol error: put %d claims %d records in %d bytes", p.GetId(), p.GetCount(), len(p.GetRecords()))
		}
		if !r.putOpen {
			r.putOpen, r.putID, r.putRecs, r.putBufs, r.putBytes = true, p.GetId(), r.recordsFor(int(p.GetCount())), nil, 0
		}
		if r.release != nil {
			r.putBufs = append(r.putBufs, p.GetRecords())
		}
		// Records alias the received message's buffer: no copy.
		r.dec.Reset(p.GetRecords())
		for range p.GetCount() {
			r.putRecs = append(r.putRecs, chain.Raw{})
			if err := r.dec.Record(&r.putRecs[len(r.putRecs)-1]); err != nil {
				return op, false, fmt.Errorf("protocol error: put %d: %w", r.putID, err)
			}
		}
		if r.dec.Len() != 0 {
			return op, false, fmt.Errorf("protocol error: put %d: %d bytes after %d records", r.putID, r.dec.Len(), p.GetCount())
		}
		r.putBytes += len(p.GetRecords())
		if !p.GetFinal() {
			return op, false, nil
		}
		r.putOpen = false
		op.id, op.records, op.bufs, op.bytes = r.putID, r.putRecs, r.putBufs, r.putBytes
		r.putRecs, r.putBufs = nil, nil
		r.hold(1, op.bytes)
	case *pluginpb.SinkRequest_Open:
		op.id = x.Open.GetId()
	case *pluginpb.SinkRequest_Close:
		op.id = x.Close.GetId()
	case *pluginpb.SinkRequest_Flush:
		op.id = x.Flush.GetId()
	case *pluginpb.SinkRequest_Stop:
		op.id = x.Stop.GetId()
	default:
		return op, false, fmt.Errorf("protocol error: unexpected message %T on a running sink task stream", m.Msg)
	}
	return op, true, nil
}

// recordsFor returns a slice for a put of n records: an answered put's
// when the task borrows records, else a new one.
func (r *sinkRunner) recordsFor(n int) []chain.Raw {
	if r.borrow {
		select {
		case recs := <-r.spare:
			if cap(recs) >= n {
				return recs[:0]
			}
		default:
		}
	}
	return make([]chain.Raw, 0, n)
}

// recycle hands an answered put's memory back (borrowing tasks only): the
// task no longer refers to it and the result holds copies.
func (r *sinkRunner) recycle(op sinkOp) {
	for _, b := range op.bufs {
		r.release(b)
	}
	select {
	case r.spare <- op.records:
	default:
	}
}

func (r *sinkRunner) result(res *pluginpb.SinkResult) error {
	return r.send(&pluginpb.SinkResponse{Msg: &pluginpb.SinkResponse_Result{Result: res}})
}

// handle runs one operation; stop reports that the task was stopped.
func (r *sinkRunner) handle(ctx context.Context, op sinkOp) (stop bool, err error) {
	switch x := op.req.Msg.(type) {
	case *pluginpb.SinkRequest_Put:
		r.queued.Inc()
		res := r.put(ctx, op.id, op.records)
		r.queued.Dec()
		// Take what arrived during the put before answering it: those
		// batches were held together with this one.
		r.drain()
		r.hold(-1, -op.bytes)
		if r.borrow {
			r.recycle(op)
		}
		// The result, and a credit: the batch is done, the plugin can take
		// one more.
		return false, r.sendAll(&pluginpb.SinkResponse{Msg: &pluginpb.SinkResponse_Result{Result: res}},
			&pluginpb.SinkResponse{Msg: &pluginpb.SinkResponse_Credit{Credit: &pluginpb.Credit{N: 1}}})
	case *pluginpb.SinkRequest_Open:
		err := r.task.Open(ctx, wire.TopicPartitionsFromPB(x.Open.GetPartitions()))
		return false, r.result(&pluginpb.SinkResult{Id: op.id, Error: wire.ErrorToPB(err)})
	case *pluginpb.SinkRequest_Close:
		err := r.task.Close(ctx, wire.TopicPartitionsFromPB(x.Close.GetPartitions()))
		return false, r.result(&pluginpb.SinkResult{Id: op.id, Error: wire.ErrorToPB(err)})
	case *pluginpb.SinkRequest_Flush:
		offs, err := r.task.Flush(ctx, wire.OffsetsFromPB(x.Flush.GetOffsets()))
		res := &pluginpb.SinkResult{Id: op.id, Error: wire.ErrorToPB(err)}
		if err == nil {
			res.Offsets = wire.OffsetsToPB(offs)
		}
		return false, r.result(res)
	case *pluginpb.SinkRequest_Stop:
		err := r.stopTask()
		return true, r.result(&pluginpb.SinkResult{Id: op.id, Error: wire.ErrorToPB(err)})
	}
	return false, nil
}

// put converts a batch with the chain and hands it to the task, collecting
// per-record failures (chain failures and ReportError calls) by their index
// in the host's batch.
func (r *sinkRunner) put(ctx context.Context, id uint64, in []chain.Raw) *pluginpb.SinkResult {
	r.batches.Inc()
	r.records.Add(float64(len(in)))
	res := &pluginpb.SinkResult{Id: id}
	// One allocation of records per batch rather than per record. Fresh
	// each time unless the task borrows records: a task may keep them
	// after Put returns.
	var (
		slab []sdk.SinkRecord
		ptrs []*sdk.SinkRecord
	)
	if r.borrow && cap(r.slab) >= len(in) {
		slab, ptrs = r.slab[:len(in)], r.ptrs[:0]
	} else {
		slab, ptrs = make([]sdk.SinkRecord, len(in)), make([]*sdk.SinkRecord, 0, len(in))
		if r.borrow {
			r.slab, r.ptrs = slab, ptrs
		}
	}
	if cap(r.origIdx) < len(in) {
		r.origIdx = make([]int32, 0, len(in))
	}
	orig := r.origIdx[:0]
	for i := range in {
		rec := &slab[len(ptrs)]
		keep, fail := r.chain.ApplyTo(in[i], rec)
		if fail != nil {
			r.reported.Inc()
			res.Failures = append(res.Failures, &pluginpb.SinkFailure{
				Index: int32(i), Stage: string(fail.Stage), Class: fail.Class,
				Message: fail.Err.Error(), Trace: fail.Error(),
				// A converter that could not reach its schema registry may
				// succeed later: the worker retries within errors.retry.timeout.
				Retriable: sdk.IsRetriable(fail.Err),
			})
			continue
		}
		if !keep {
			continue
		}
		ptrs = append(ptrs, rec)
		orig = append(orig, int32(i))
	}
	r.origIdx = orig

	var (
		mu    sync.Mutex
		index map[*sdk.SinkRecord]int // built on the first ReportError only
	)
	r.tctx.mu.Lock()
	r.tctx.report = func(rec *sdk.SinkRecord, err error) {
		mu.Lock()
		defer mu.Unlock()
		if index == nil {
			index = make(map[*sdk.SinkRecord]int, len(ptrs))
			for i, p := range ptrs {
				index[p] = i
			}
		}
		idx, ok := index[rec]
		if !ok {
			r.tctx.log.Error("ReportError called with a record that is not part of the current Put; ignored", "error", err)
			return
		}
		r.reported.Inc()
		res.Failures = append(res.Failures, &pluginpb.SinkFailure{
			Index: orig[idx], Stage: string(sdk.StageTaskPut), Class: r.srv.spec.Class,
			Message: err.Error(), Trace: fmt.Sprintf("%+v", err), Retriable: sdk.IsRetriable(err),
		})
	}
	r.tctx.mu.Unlock()
	var err error
	if len(ptrs) > 0 {
		err = r.task.Put(ctx, ptrs)
	}
	r.tctx.mu.Lock()
	r.tctx.report = nil
	r.tctx.mu.Unlock()
	mu.Lock()
	defer mu.Unlock()
	res.Error = wire.ErrorToPB(err)
	return res
}

func (r *sinkRunner) stopTask() error { return stopTask(r.task) }
