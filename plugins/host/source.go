package host

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/connectd/connectd/framework/chain"
	"github.com/connectd/connectd/framework/sdk"
	"github.com/connectd/connectd/plugins/internal/wire"
	"github.com/connectd/connectd/plugins/pluginpb"
)

// Offset is one source partition's committed position: JSON object bytes
// exactly as stored in the offsets topic (the key's second element and the
// value).
type Offset struct{ Partition, Offset []byte }

// SourceTaskStart is what a source task starts with.
type SourceTaskStart struct {
	Connector string
	Task      int
	Props     map[string]string
	Defaults  chain.Defaults
	Offsets   []Offset // all committed offsets of the connector
	Credits   int      // poll batches the plugin may run ahead (default 2)
}

// Boundary is a transaction boundary a source task defined
// (transaction.boundary=connector).
type Boundary int

const (
	BoundaryNone Boundary = iota
	BoundaryCommitAfter
	BoundaryAbortAfter
)

// SourceRecord is one converted and transformed record ready to produce.
type SourceRecord struct {
	chain.Raw                            // Topic, Partition (may be sdk.AnyPartition), Key, Value, Headers, Timestamp
	SourcePartition, SourceOffset []byte // JSON objects
	Boundary                      Boundary
}

// SourceFailure is a record that failed in the plugin (converter,
// transform, or too large), with best-effort bytes for the dead-letter queue.
type SourceFailure struct {
	Stage                         sdk.Stage
	Class, Message, Trace         string
	SourcePartition, SourceOffset []byte
	Topic                         string
	Key, Value                    []byte
}

// SourceBatch is one Poll result, reassembled if it was split.
type SourceBatch struct {
	Records  []SourceRecord
	Failures []SourceFailure
	Polled   int // records Poll returned, before transforms
	// Offsets holds, per source partition, the last offset of every record
	// Poll returned (kept, filtered or failed), in first-seen order: what
	// to commit once the whole batch is handled.
	Offsets []Offset
	// Boundary, when set on a batch without records, applies after the
	// last record of the previous batches (the task called Commit or Abort
	// during a Poll that returned nothing).
	Boundary Boundary

	bulks [][]byte // the data channel buffers the records point into
}

// sourceStream is a source task stream.
type sourceStream = taskStream[*pluginpb.SourceRequest, *pluginpb.SourceResponse]

// SourceTask is a source task running in a plugin process.
type SourceTask struct {
	task   // notify: a batch arrived or the task failed
	stream sourceStream

	sendMu sync.Mutex

	batches chan *SourceBatch
	held    atomic.Int32 // credits the plugin holds (granted minus batches received)

	commits replies[error]

	spareMu sync.Mutex
	spare   []SourceRecord // a released batch's records slice, for the next batch

	stopped chan struct{}

	// handle's own state: a batch being reassembled, the last batch's
	// sequence number, the packed record decoder.
	asm     *SourceBatch
	asmSeq  uint64
	lastSeq uint64
	dec     wire.Decoder
}

// StartSourceTask starts a source task and waits until the plugin has
// started it.
func (p *Process) StartSourceTask(ctx context.Context, s SourceTaskStart) (*SourceTask, error) {
	if s.Credits <= 0 {
		s.Credits = 2
	}
	t := &SourceTask{
		task:    task{kind: "source task", name: fmt.Sprintf("%s-%d", s.Connector, s.Task)},
		batches: make(chan *SourceBatch, s.Credits),
		stopped: make(chan struct{}),
	}
	open := func(life context.Context) (sourceStream, error) { return wire.OpenSource(life, p.data) }
	start := &pluginpb.SourceStart{
		Connector: s.Connector, Task: int32(s.Task), Props: s.Props, Defaults: s.Defaults,
		Credits: int32(s.Credits), BatchBytes: int64(p.opts.BatchBytes),
		PollTimeoutMillis: p.opts.CallTimeout.Milliseconds(),
	}
	for _, o := range s.Offsets {
		start.Offsets = append(start.Offsets, &pluginpb.SourceOffset{Partition: o.Partition, Offset: o.Offset})
	}
	stream, first, err := openTask(ctx, p, &t.task, open, &pluginpb.SourceRequest{Msg: &pluginpb.SourceRequest_Start{Start: start}})
	if err != nil {
		return nil, err
	}
	t.stream = stream
	switch m := first.Msg.(type) {
	case *pluginpb.SourceResponse_Started:
	case *pluginpb.SourceResponse_Failed:
		return nil, t.notStarted(m.Failed, nil)
	default:
		return nil, t.notStarted(nil, first.Msg)
	}
	t.held.Store(int32(s.Credits))
	stream.Handle(t.handle)
	return t, nil
}

// handle takes the plugin's messages and the stream's end, one at a time
// (taskStream.Handle). It never blocks: it runs on the goroutine reading
// the data channel, which is the one waiting in Next
// unless another call reads at the time (awaitBatch).
func (t *SourceTask) handle(m *pluginpb.SourceResponse, err error) {
	if t.ended {
		return
	}
	if err != nil {
		t.streamEnded(err, t.isStopped())
		return
	}
	switch x := m.Msg.(type) {
	case *pluginpb.SourceResponse_Batch:
		b := x.Batch
		if t.asm == nil {
			if b.GetSeq() <= t.lastSeq {
				t.end(t.protoErr("batch seq %d after %d", b.GetSeq(), t.lastSeq))
				return
			}
			t.asm, t.asmSeq = &SourceBatch{}, b.GetSeq()
		} else if b.GetSeq() != t.asmSeq {
			t.end(t.protoErr("batch seq %d while batch %d is incomplete", b.GetSeq(), t.asmSeq))
			return
		}
		asm := t.asm
		if asm.Records == nil {
			asm.Records = t.takeSpare(int(b.GetCount()))
		}
		if len(b.GetRecords()) > 0 {
			asm.bulks = append(asm.bulks, b.GetRecords())
		}
		if err := appendBatch(asm, b, &t.dec); err != nil {
			t.end(t.protoErr("%v", err))
			return
		}
		if !b.GetFinal() {
			return
		}
		asm.Polled = int(b.GetPolled())
		asm.Boundary = Boundary(b.GetBoundary())
		for _, o := range b.GetOffsets() {
			asm.Offsets = append(asm.Offsets, Offset{Partition: o.GetPartition(), Offset: o.GetOffset()})
		}
		t.lastSeq = t.asmSeq
		if t.held.Add(-1) < 0 {
			t.end(t.protoErr("poll batch sent without a credit"))
			return
		}
		select {
		case t.batches <- asm:
			signal(t.notify)
		default:
			t.end(t.protoErr("poll batch sent without a credit"))
			return
		}
		t.asm = nil
	case *pluginpb.SourceResponse_CommitResult:
		if !t.commits.deliver(x.CommitResult.GetId(), wire.ErrorFromPB(x.CommitResult.GetError())) {
			t.end(t.protoErr("commit result for unknown commit %d", x.CommitResult.GetId()))
			return
		}
	case *pluginpb.SourceResponse_PollHungMillis:
		t.fail(fmt.Errorf("plugin %s: source task %s: %w: a poll (Poll, then the records' converters and transforms) has run for %s (Poll hangs?)",
			t.p.m.Name, t.name, ErrTimeout, (time.Duration(x.PollHungMillis) * time.Millisecond).Round(time.Millisecond)))
	case *pluginpb.SourceResponse_Failed:
		t.failedInPlugin(x.Failed)
	case *pluginpb.SourceResponse_Stopped:
		t.ended = true
		close(t.stopped)
	default:
		t.end(t.protoErr("unexpected message %T", m.Msg))
	}
}

// isStopped reports whether the plugin confirmed the task stopped.
func (t *SourceTask) isStopped() bool {
	select {
	case <-t.stopped:
		return true
	default:
		return false
	}
}

func appendBatch(dst *SourceBatch, b *pluginpb.SourceBatch, dec *wire.Decoder) error {
	if b.GetCount() < 0 || int(b.GetCount()) > len(b.GetRecords()) {
		return fmt.Errorf("batch claims %d records in %d bytes", b.GetCount(), len(b.GetRecords()))
	}
	if dst.Records == nil {
		dst.Records = make([]SourceRecord, 0, b.GetCount())
	}
	dec.Reset(b.GetRecords())
	for range b.GetCount() {
		dst.Records = append(dst.Records, SourceRecord{})
		r := &dst.Records[len(dst.Records)-1]
		if err := dec.Record(&r.Raw); err != nil {
			return err
		}
		part, off, boundary, err := dec.SourceExtras()
		if err != nil {
			return err
		}
		if !isJSONObject(part) || !isJSONObject(off) {
			return fmt.Errorf("record for topic %q: source partition and offset must be JSON objects", r.Topic)
		}
		if r.Partition < sdk.AnyPartition || r.Topic == "" {
			return fmt.Errorf("record with topic %q and partition %d", r.Topic, r.Partition)
		}
		r.SourcePartition, r.SourceOffset, r.Boundary = part, off, Boundary(boundary)
	}
	if dec.Len() != 0 {
		return fmt.Errorf("%d bytes after %d records", dec.Len(), b.GetCount())
	}
	for _, f := range b.GetFailures() {
		dst.Failures = append(dst.Failures, SourceFailure{
			Stage: sdk.Stage(f.GetStage()), Class: f.GetClass(), Message: f.GetMessage(), Trace: f.GetTrace(),
			SourcePartition: f.GetSourcePartition(), SourceOffset: f.GetSourceOffset(),
			Topic: f.GetTopic(), Key: f.GetKey(), Value: f.GetValue(),
		})
	}
	return nil
}

// isJSONObject is a cheap shape check; the offsets topic stores what the
// plugin's encoder produced.
func isJSONObject(b []byte) bool {
	return len(b) >= 2 && b[0] == '{' && b[len(b)-1] == '}'
}

func (t *SourceTask) send(m *pluginpb.SourceRequest) error {
	t.sendMu.Lock()
	defer t.sendMu.Unlock()
	return t.stream.Send(m)
}

// Next returns the next poll batch. Receiving a batch returns one credit
// to the plugin. It blocks until a batch arrives, ctx is done, or the task
// fails.
func (t *SourceTask) Next(ctx context.Context) (*SourceBatch, error) {
	select {
	case b := <-t.batches:
		return t.took(b)
	default:
	}
	return t.awaitBatch(ctx)
}

// awaitBatch is Next's wait: the caller reads the data channel itself while nobody else does (datachan.Conn.Await),
// so a batch reaches it without a hand-off between goroutines.
func (t *SourceTask) awaitBatch(ctx context.Context) (*SourceBatch, error) {
	done := func() bool { return len(t.batches) > 0 || t.Err() != nil }
	for {
		err := t.aw.Await(ctx, time.Time{}, done, t.notify)
		select {
		case b := <-t.batches:
			return t.took(b)
		default:
		}
		if err != nil || t.Err() != nil {
			break
		}
		// done held, but a concurrent Next took the batch.
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	// The task failed, or the channel did: then the task's failure
	// follows once the process's exit is known (handle), with its trace.
	select {
	case <-t.failed:
		return nil, t.failErr
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (t *SourceTask) took(b *SourceBatch) (*SourceBatch, error) {
	t.held.Add(1)
	if err := t.send(&pluginpb.SourceRequest{Msg: &pluginpb.SourceRequest_Credit{Credit: &pluginpb.Credit{N: 1}}}); err != nil {
		t.fail(t.p.failure("source task "+t.name+": credit", err, false))
	}
	return b, nil
}

// Release hands a batch back once the caller is done with it, so that
// its memory carries later batches: the buffers its records were received
// into and its Records slice. Afterwards nothing of b.Records (keys,
// values, headers, SourcePartition, SourceOffset) may be used; b.Offsets and
// b.Failures are copies and stay valid. Calling Release is optional: a
// batch that is not released is left to the garbage collector.
func (t *SourceTask) Release(b *SourceBatch) {
	if b == nil {
		return
	}
	for _, buf := range b.bulks {
		t.p.data.Release(buf)
	}
	b.bulks = nil
	recs := b.Records[:0]
	b.Records = nil
	t.spareMu.Lock()
	if cap(recs) > cap(t.spare) {
		t.spare = recs
	}
	t.spareMu.Unlock()
}

// takeSpare returns the released records slice if it holds n records.
func (t *SourceTask) takeSpare(n int) []SourceRecord {
	t.spareMu.Lock()
	defer t.spareMu.Unlock()
	if cap(t.spare) < n {
		return nil
	}
	recs := t.spare
	t.spare = nil
	return recs
}

// Commit tells the plugin these offsets are durable; the task's
// SourceTask.Commit runs plugin-side and its error is returned.
func (t *SourceTask) Commit(ctx context.Context, offsets []Offset) error {
	if err := t.Err(); err != nil {
		return err
	}
	id, ch := t.commits.register()
	req := &pluginpb.SourceCommit{Id: id}
	for _, o := range offsets {
		req.Offsets = append(req.Offsets, &pluginpb.SourceOffset{Partition: o.Partition, Offset: o.Offset})
	}
	if err := t.send(&pluginpb.SourceRequest{Msg: &pluginpb.SourceRequest_Commit{Commit: req}}); err != nil {
		err = t.p.failure("source task "+t.name+": commit", err, false)
		t.fail(err)
		return err
	}
	timer := time.NewTimer(t.p.opts.CallTimeout)
	defer timer.Stop()
	select {
	case err := <-ch:
		if err != nil {
			return fmt.Errorf("source task %s: commit: %w", t.name, err)
		}
		return nil
	case <-t.failed:
		return t.failErr
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C:
		return t.timeoutErr("commit", "")
	}
}

// Stop stops the task: the plugin stops polling, calls the task's Stop and
// ends the stream. Batches not yet taken with Next are dropped.
func (t *SourceTask) Stop(ctx context.Context) error {
	defer t.cancel()
	if err := t.Err(); err != nil {
		return err
	}
	if err := t.send(&pluginpb.SourceRequest{Msg: &pluginpb.SourceRequest_Stop{Stop: &pluginpb.Empty{}}}); err != nil {
		return t.p.failure("source task "+t.name+": stop", err, false)
	}
	// The plugin may be blocked sending a batch; drain so it can see stop.
	timer := time.NewTimer(t.p.opts.CallTimeout)
	defer timer.Stop()
	for {
		select {
		case <-t.stopped:
			return nil
		case <-t.batches:
		case <-t.failed:
			return t.failErr
		case <-ctx.Done():
			return ctx.Err()
		case <-timer.C:
			return t.timeoutErr("stop", "")
		}
	}
}
