package host

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/connectd/connectd/framework/chain"
	"github.com/connectd/connectd/framework/sdk"
	"github.com/connectd/connectd/plugins/internal/datachan"
	"github.com/connectd/connectd/plugins/internal/wire"
	"github.com/connectd/connectd/plugins/pluginpb"
)

// SinkTaskStart is what a sink task starts with.
type SinkTaskStart struct {
	Connector string
	Task      int
	Props     map[string]string
	Defaults  chain.Defaults
}

// PutResult lists the records of a Put batch that failed individually.
type PutResult struct{ Failures []SinkFailure }

// SinkFailure is one record of a Put batch that failed in the plugin: in a
// converter or transform, or reported by the task through ReportError.
type SinkFailure struct {
	Index                 int // into the Put batch
	Stage                 sdk.Stage
	Class, Message, Trace string
	Retriable             bool
}

// maxCredits bounds what a plugin may grant, so a broken plugin cannot make
// the host buffer without limit.
const maxCredits = 1024

// sinkStream is a sink task stream.
type sinkStream = taskStream[*pluginpb.SinkRequest, *pluginpb.SinkResponse]

// SinkTask is a sink task running in a plugin process.
type SinkTask struct {
	task   // notify: a result or credit arrived, or the task failed
	stream sinkStream

	credits chan struct{} // one token per put batch the plugin accepts

	sendMu sync.Mutex
	packed []byte // reused encoding buffer (guarded by sendMu)

	results replies[*pluginpb.SinkResult]

	stopping atomic.Bool // the stream ending after Stop is not a failure
}

// StartSinkTask starts a sink task and waits until the plugin has started
// it and granted its first credits.
func (p *Process) StartSinkTask(ctx context.Context, s SinkTaskStart) (*SinkTask, error) {
	t := &SinkTask{
		task:    task{kind: "sink task", name: fmt.Sprintf("%s-%d", s.Connector, s.Task)},
		credits: make(chan struct{}, maxCredits),
	}
	open := func(life context.Context) (sinkStream, error) { return wire.OpenSink(life, p.data) }
	start := &pluginpb.SinkStart{Connector: s.Connector, Task: int32(s.Task), Props: s.Props, Defaults: s.Defaults}
	stream, first, err := openTask(ctx, p, &t.task, open, &pluginpb.SinkRequest{Msg: &pluginpb.SinkRequest_Start{Start: start}})
	if err != nil {
		return nil, err
	}
	t.stream = stream
	switch m := first.Msg.(type) {
	case *pluginpb.SinkResponse_Started:
		n := int(m.Started.GetCredits())
		if n <= 0 || n > maxCredits {
			t.cancel()
			return nil, fmt.Errorf("plugin %s: start sink task %s: %w: %d initial credits", p.m.Name, t.name, ErrProtocol, n)
		}
		for range n {
			t.credits <- struct{}{}
		}
	case *pluginpb.SinkResponse_Failed:
		return nil, t.notStarted(m.Failed, nil)
	default:
		return nil, t.notStarted(nil, first.Msg)
	}
	stream.Handle(t.handle)
	return t, nil
}

// handle takes the plugin's messages and the stream's end, one at a time
// (taskStream.Handle). It never blocks: it runs on the goroutine reading
// the data channel, which is the one waiting in Put unless another call
// reads at the time (waitFor).
func (t *SinkTask) handle(m *pluginpb.SinkResponse, err error) {
	if t.ended {
		return
	}
	if err != nil {
		t.streamEnded(err, t.stopping.Load())
		return
	}
	switch x := m.Msg.(type) {
	case *pluginpb.SinkResponse_Credit:
		for range x.Credit.GetN() {
			select {
			case t.credits <- struct{}{}:
			default:
				t.end(t.protoErr("more than %d credits granted", maxCredits))
				return
			}
		}
		signal(t.notify)
	case *pluginpb.SinkResponse_Result:
		if !t.results.deliver(x.Result.GetId(), x.Result) {
			t.end(t.protoErr("result for unknown request %d", x.Result.GetId()))
			return
		}
		signal(t.notify)
	case *pluginpb.SinkResponse_Failed:
		t.failedInPlugin(x.Failed)
	default:
		t.end(t.protoErr("unexpected message %T", m.Msg))
	}
}

// await waits for the result of request id, bounded by CallTimeout.
func (t *SinkTask) await(ctx context.Context, op string, ch chan *pluginpb.SinkResult) (*pluginpb.SinkResult, error) {
	err := t.waitFor(ctx, op, func() bool { return len(ch) > 0 })
	select {
	case r := <-ch:
		return r, nil
	default:
	}
	return nil, err
}

// call sends one request built with its id and waits for the result.
func (t *SinkTask) call(ctx context.Context, op string, build func(id uint64) *pluginpb.SinkRequest) (*pluginpb.SinkResult, error) {
	if err := t.Err(); err != nil {
		return nil, err
	}
	id, ch := t.results.register()
	t.sendMu.Lock()
	err := t.stream.Send(build(id))
	t.sendMu.Unlock()
	if err != nil {
		err = t.p.failure("sink task "+t.name+": "+op, err, false)
		t.fail(err)
		return nil, err
	}
	r, err := t.await(ctx, op, ch)
	if err != nil {
		return nil, err
	}
	if e := r.GetError(); e != nil {
		return r, fmt.Errorf("sink task %s: %s: %w", t.name, op, wire.ErrorFromPB(e))
	}
	return r, nil
}

// Open tells the task it now owns these partitions.
func (t *SinkTask) Open(ctx context.Context, tps []sdk.TopicPartition) error {
	_, err := t.call(ctx, "open", func(id uint64) *pluginpb.SinkRequest {
		return &pluginpb.SinkRequest{Msg: &pluginpb.SinkRequest_Open{Open: &pluginpb.SinkPartitions{Id: id, Partitions: wire.TopicPartitionsToPB(tps)}}}
	})
	return err
}

// Close tells the task it no longer owns these partitions.
func (t *SinkTask) Close(ctx context.Context, tps []sdk.TopicPartition) error {
	_, err := t.call(ctx, "close", func(id uint64) *pluginpb.SinkRequest {
		return &pluginpb.SinkRequest{Msg: &pluginpb.SinkRequest_Close{Close: &pluginpb.SinkPartitions{Id: id, Partitions: wire.TopicPartitionsToPB(tps)}}}
	})
	return err
}

// Flush asks the task to make its writes durable; it returns the offsets
// that are safe to commit.
func (t *SinkTask) Flush(ctx context.Context, offsets map[sdk.TopicPartition]int64) (map[sdk.TopicPartition]int64, error) {
	r, err := t.call(ctx, "flush", func(id uint64) *pluginpb.SinkRequest {
		return &pluginpb.SinkRequest{Msg: &pluginpb.SinkRequest_Flush{Flush: &pluginpb.SinkFlush{Id: id, Offsets: wire.OffsetsToPB(offsets)}}}
	})
	if err != nil {
		return nil, err
	}
	return wire.OffsetsFromPB(r.GetOffsets()), nil
}

// Put sends one batch, split by the byte budget on the wire, and waits for
// its result. It blocks while the plugin grants no credit (back-pressure).
// A batch error is returned as error (sdk.IsRetriable tells whether the
// same batch may be retried); per-record failures are in the result. Put
// is safe for concurrent use: batches are applied in the order their
// sends begin, and no more are in flight than the plugin has credits for.
func (t *SinkTask) Put(ctx context.Context, records []chain.Raw) (PutResult, error) {
	if err := t.Err(); err != nil {
		return PutResult{}, err
	}
	limit := t.p.opts.MaxMessageBytes - wire.MessageOverhead
	for i := range records {
		if n := wire.RecordSize(&records[i]); n > limit {
			return PutResult{}, fmt.Errorf("sink task %s: record %d (topic %s, offset %d) is %d bytes, above the plugin message limit of %d bytes (raise MaxMessageBytes)",
				t.name, i, records[i].Topic, records[i].Offset, n, t.p.opts.MaxMessageBytes)
		}
	}
	// A credit first: the plugin accepts only so many batches ahead.
	for {
		select {
		case <-t.credits:
			return t.putWithCredit(ctx, records)
		default:
		}
		if err := t.waitFor(ctx, "put: no credit granted", func() bool { return len(t.credits) > 0 }); err != nil {
			return PutResult{}, err
		}
	}
}

// putWithCredit sends a batch for which a credit was taken and waits for
// its result.
func (t *SinkTask) putWithCredit(ctx context.Context, records []chain.Raw) (PutResult, error) {
	id, ch := t.results.register()
	if err := t.sendPut(id, records); err != nil {
		err = t.p.failure("sink task "+t.name+": put", err, false)
		t.fail(err)
		return PutResult{}, err
	}
	r, err := t.await(ctx, "put", ch)
	if err != nil {
		return PutResult{}, err
	}
	res := PutResult{}
	for _, f := range r.GetFailures() {
		if f.GetIndex() < 0 || int(f.GetIndex()) >= len(records) {
			err := t.protoErr("put failure index %d outside the batch of %d", f.GetIndex(), len(records))
			t.fail(err)
			return PutResult{}, err
		}
		res.Failures = append(res.Failures, SinkFailure{
			Index: int(f.GetIndex()), Stage: sdk.Stage(f.GetStage()), Class: f.GetClass(),
			Message: f.GetMessage(), Trace: f.GetTrace(), Retriable: f.GetRetriable(),
		})
	}
	if e := r.GetError(); e != nil {
		return res, fmt.Errorf("sink task %s: put: %w", t.name, wire.ErrorFromPB(e))
	}
	return res, nil
}

// sendPut sends one batch as parts of at most BatchBytes (a larger record
// travels alone), reusing wire messages across batches.
func (t *SinkTask) sendPut(id uint64, records []chain.Raw) error {
	t.sendMu.Lock()
	defer t.sendMu.Unlock()
	budget := t.p.opts.BatchBytes
	put := &pluginpb.SinkPut{Id: id}
	req := &pluginpb.SinkRequest{Msg: &pluginpb.SinkRequest_Put{Put: put}}
	buf, count := t.packed[:0], 0
	flush := func(final bool) error {
		put.Records, put.Count, put.Final = buf, int32(count), final
		err := t.stream.Send(req) // marshals before returning: buf is free again
		t.packed = buf[:0]
		buf, count = buf[:0], 0
		return err
	}
	for i := range records {
		if count > 0 && len(buf)+wire.RecordSize(&records[i]) > budget {
			if err := flush(false); err != nil {
				return err
			}
		}
		buf = wire.AppendRecord(buf, &records[i])
		count++
	}
	err := flush(true)
	if cap(t.packed) > 4*budget {
		t.packed = nil // do not keep a 16 MiB record's buffer forever
	}
	return err
}

// Stop stops the task (its Stop runs in the plugin) and ends the stream.
func (t *SinkTask) Stop(ctx context.Context) error {
	defer t.cancel()
	t.stopping.Store(true)
	_, err := t.call(ctx, "stop", func(id uint64) *pluginpb.SinkRequest {
		return &pluginpb.SinkRequest{Msg: &pluginpb.SinkRequest_Stop{Stop: &pluginpb.SinkStop{Id: id}}}
	})
	return err
}

// waitFor waits, within the call timeout, until ready reports true or the
// task fails: the caller reads the data channel itself while nobody else does (datachan.Conn.Await), so the result or
// credit it waits for reaches it without a hand-off between goroutines.
// It returns nil once ready, the task's failure, ctx's error, or an
// ErrTimeout error (then the task has failed).
func (t *SinkTask) waitFor(ctx context.Context, op string, ready func() bool) error {
	done := func() bool { return ready() || t.Err() != nil }
	deadline := time.Now().Add(t.p.opts.CallTimeout)
	var err error
	for {
		err = t.aw.Await(ctx, deadline, done, t.notify)
		if ready() {
			return nil
		}
		if err != nil || t.Err() != nil {
			break
		}
		// done held, but a concurrent call took what made it true.
	}
	if ferr := t.Err(); ferr != nil {
		return ferr
	}
	if cerr := ctx.Err(); cerr != nil {
		return cerr
	}
	if !errors.Is(err, datachan.ErrAwaitTimeout) {
		// The channel failed: the task's failure follows once the
		// process's exit is known (handle), with its trace.
		timer := time.NewTimer(time.Until(deadline))
		defer timer.Stop()
		select {
		case <-t.failed:
			return t.failErr
		case <-ctx.Done():
			return ctx.Err()
		case <-timer.C:
		}
	}
	return t.timeoutErr(op, " (the task's call hangs?)")
}
