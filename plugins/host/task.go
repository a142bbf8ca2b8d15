package host

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/connectd/connectd/plugins/internal/wire"
	"github.com/connectd/connectd/plugins/pluginpb"
)

// taskStream is a task stream as the host sees it: a stream of the data
// channel (wire.SourceClient, wire.SinkClient).
type taskStream[Req, Resp any] interface {
	Send(Req) error
	Recv() (Resp, error)
	// Handle hands later messages and the end to h on the goroutine
	// reading the data channel (h must not block).
	Handle(h func(Resp, error))
	awaiter
}

// task is what sink and source tasks share: who they are, how their stream
// is torn down, and their failure, recorded once.
type task struct {
	p      *Process
	kind   string // "sink task" or "source task", for messages
	name   string // connector-task
	cancel context.CancelFunc

	// aw is the stream's wait that reads the data channel itself, notify
	// its wake-up: a value whenever something a caller waits for arrived
	// or the task failed.
	aw     awaiter
	notify chan struct{}

	failOnce sync.Once
	failed   chan struct{}
	failErr  error

	ended bool // handle saw the stream's end or failed the task (handle's own)
}

// openTask opens a task stream (open), sends its start message and
// receives the plugin's first reply within the call timeout. It fills in
// t's process, stream life (cancel), wait and failure channels; t.kind and
// t.name must be set. On error the stream is already cancelled.
func openTask[Req, Resp any](ctx context.Context, p *Process, t *task, open func(context.Context) (taskStream[Req, Resp], error), start Req) (taskStream[Req, Resp], Resp, error) {
	var zero Resp
	if p.exited() {
		return nil, zero, fmt.Errorf("plugin %s: start %s: %w", p.m.Name, t.kind, p.gone())
	}
	life, cancel := context.WithCancel(context.Background())
	stream, err := open(life)
	if err != nil {
		cancel()
		return nil, zero, p.failure("start "+t.kind, err, false)
	}
	t.p, t.cancel = p, cancel
	t.failed, t.notify = make(chan struct{}), make(chan struct{}, 1)
	t.aw = stream
	if err := stream.Send(start); err != nil {
		cancel()
		return nil, zero, p.failure("start "+t.kind, err, false)
	}
	first, err := recvWithin(ctx, p.opts.CallTimeout, stream.Recv)
	if err != nil {
		cancel()
		return nil, zero, p.failure("start "+t.kind+" "+t.name, err, errors.Is(err, errRecvTimeout))
	}
	return stream, first, nil
}

// notStarted cancels a task whose first reply is not "started" and returns
// why: the plugin's failure (failed), or else a protocol error naming the
// reply.
func (t *task) notStarted(failed *pluginpb.Error, reply any) error {
	t.cancel()
	if failed != nil {
		return fmt.Errorf("%s %s: %w", t.kind, t.name, wire.ErrorFromPB(failed))
	}
	return fmt.Errorf("plugin %s: start %s %s: %w: expected started, got %T", t.p.m.Name, t.kind, t.name, ErrProtocol, reply)
}

// streamEnded is handle's part when the stream ends with err: the task
// fails unless it was stopped.
func (t *task) streamEnded(err error, stopped bool) {
	t.ended = true
	if stopped {
		return
	}
	// failure may wait for the process to exit: not here.
	go func() { t.fail(t.p.failure(t.kind+" "+t.name, err, false)) }()
}

// end fails the task from handle and ignores what the plugin sends after.
func (t *task) end(err error) {
	t.ended = true
	t.fail(err)
}

// failedInPlugin ends the task with the failure the plugin reported.
func (t *task) failedInPlugin(e *pluginpb.Error) {
	t.end(fmt.Errorf("%s %s failed in the plugin: %w", t.kind, t.name, wire.ErrorFromPB(e)))
}

// fail records the task's failure once and tears the stream down.
func (t *task) fail(err error) {
	t.failOnce.Do(func() {
		t.failErr = err
		close(t.failed)
		signal(t.notify)
		t.p.data.Interrupt() // a call reading the channel returns
		t.cancel()
		if !t.p.isClosing() {
			t.p.log.Error(t.kind+" failed", "task", t.name, "error", err)
		}
	})
}

// Err returns the task's failure, or nil while it runs.
func (t *task) Err() error {
	select {
	case <-t.failed:
		return t.failErr
	default:
		return nil
	}
}

func (t *task) protoErr(format string, args ...any) error {
	return fmt.Errorf("plugin %s: %s %s: %w: %s", t.p.m.Name, t.kind, t.name, ErrProtocol, fmt.Sprintf(format, args...))
}

// timeoutErr fails the task with an ErrTimeout error for op and returns it.
func (t *task) timeoutErr(op, hint string) error {
	err := fmt.Errorf("plugin %s: %s %s: %s: %w within %s%s", t.p.m.Name, t.kind, t.name, op, ErrTimeout, t.p.opts.CallTimeout, hint)
	t.fail(err)
	return err
}

// replies correlates requests with their replies by id: each request
// registers a channel of capacity one, which handle fills once.
type replies[T any] struct {
	mu   sync.Mutex
	last uint64
	m    map[uint64]chan T
}

// register returns a new request's id and the channel its reply comes on.
func (r *replies[T]) register() (uint64, chan T) {
	ch := make(chan T, 1)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.m == nil {
		r.m = map[uint64]chan T{}
	}
	r.last++
	r.m[r.last] = ch
	return r.last, ch
}

// deliver hands the reply to request id; false when no such request waits.
func (r *replies[T]) deliver(id uint64, v T) bool {
	r.mu.Lock()
	ch, ok := r.m[id]
	delete(r.m, id)
	r.mu.Unlock()
	if ok {
		ch <- v // capacity one, one reply per request
	}
	return ok
}

var errRecvTimeout = errors.New("no reply")

// recvWithin receives one message, bounded by d and ctx. On timeout the
// caller must cancel the stream (the receive goroutine ends then).
func recvWithin[T any](ctx context.Context, d time.Duration, recv func() (T, error)) (T, error) {
	type res struct {
		m   T
		err error
	}
	ch := make(chan res, 1)
	go func() {
		m, err := recv()
		ch <- res{m, err}
	}()
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case r := <-ch:
		return r.m, r.err
	case <-timer.C:
		var zero T
		return zero, errRecvTimeout
	case <-ctx.Done():
		var zero T
		return zero, ctx.Err()
	}
}

// awaiter is the wait of a data channel stream (datachan.Conn.Await).
type awaiter interface {
	Await(ctx context.Context, deadline time.Time, done func() bool, wake <-chan struct{}) error
}

// signal leaves a wake-up in a notification channel of capacity one.
func signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}
