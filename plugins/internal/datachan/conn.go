package datachan

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

var (
	// ErrPeerClosed: the other end closed the channel or its process died.
	ErrPeerClosed = errors.New("data channel closed by the peer")
	// ErrClosed: this end closed the channel or the stream.
	ErrClosed = errors.New("data channel closed")
	// ErrTimeout: the peer stopped reading (a write made no progress
	// within the write timeout).
	ErrTimeout = errors.New("data channel write timed out")
	// ErrReset: the host abandoned the stream (plugin side).
	ErrReset = errors.New("stream reset by the host")
)

// RemoteError is the error the plugin ended a stream with.
type RemoteError struct{ Message string }

func (e *RemoteError) Error() string { return e.Message }

// Role says which end of the channel a Conn is.
type Role int

const (
	// Host opens streams and expects the plugin's hello first.
	Host Role = iota + 1
	// Plugin sends hello and serves the streams the host opens.
	Plugin
)

// Options configure a Conn.
type Options struct {
	Role Role
	// MaxBody is the largest frame body (meta plus bulk) either side may
	// send; larger incoming frames fail the channel with ErrProtocol.
	MaxBody int
	// WriteTimeout fails the channel with ErrTimeout when a write makes no
	// progress for this long (0: never).
	WriteTimeout time.Duration
	// Decode turns a message frame of a stream of the given kind into the
	// value Recv returns. It runs on the goroutine reading the channel:
	// meta is only valid during the call, bulk may be kept. An error fails
	// that stream (not the channel) with ErrProtocol.
	Decode func(kind byte, meta, bulk []byte) (any, error)
	// Accept (plugin side) serves a stream the host opened, on its own
	// goroutine. It must end the stream with Stream.End.
	Accept func(kind byte, s *Stream)
	// OnFail, if set, is called once when the channel fails.
	OnFail func(error)
}

// Conn multiplexes the task streams of one plugin process over one
// connection (a socketpair in practice).
type Conn struct {
	nc   net.Conn
	opts Options
	w    *writer
	pool bufPool // bulk buffers released by receivers

	// openMu makes opening a stream, from taking its id to sending its
	// open frame, one step: the plugin refuses ids that do not increase,
	// so concurrent Opens must not send their frames out of order.
	openMu sync.Mutex

	// Reading. One goroutine at a time reads the socket: the holder of the
	// role token (role holds the token while nobody reads). A goroutine
	// waiting for a message takes the role when it is free and reads
	// itself (Await), so the message it waits for reaches it without
	// waking another goroutine; the channel's own goroutine reads only
	// while no waiter has read for a while (background).
	role    chan struct{}
	raw     *rawSock
	br      *bufio.Reader
	fr      *FrameReader
	hello   bool          // the plugin's hello was read (role holder only)
	inFrame bool          // reading inside a frame: deadlines wait (role holder only)
	leads   atomic.Uint64 // times a waiter took the role
	wanting atomic.Int32  // waiters that would take the role
	bgHolds atomic.Bool   // the channel's goroutine holds the role
	// released tells the channel's goroutine that a waiter gave the role
	// back (capacity one).
	released chan struct{}

	mu        sync.Mutex
	streams   map[uint32]*Stream
	lastID    uint32 // host: last stream opened; plugin: highest stream the host opened
	err       error  // why the channel failed
	failed    chan struct{}
	failOnce  sync.Once
	readerEnd chan struct{}
}

// New starts a channel on nc. The plugin side sends its hello at once.
func New(nc net.Conn, opts Options) (*Conn, error) {
	if opts.Role != Host && opts.Role != Plugin {
		return nil, errors.New("datachan: Options.Role must be Host or Plugin")
	}
	if opts.MaxBody <= 0 || opts.Decode == nil || (opts.Role == Plugin && opts.Accept == nil) {
		return nil, errors.New("datachan: Options need MaxBody, Decode and (plugin side) Accept")
	}
	c := &Conn{
		nc: nc, opts: opts, w: newWriter(nc, opts.WriteTimeout),
		streams: map[uint32]*Stream{}, failed: make(chan struct{}), readerEnd: make(chan struct{}),
		role: make(chan struct{}, 1), released: make(chan struct{}, 1),
		hello: opts.Role == Plugin, // the plugin expects none
	}
	c.raw = newRawSock(nc)
	c.w.raw = c.raw
	c.br = bufio.NewReaderSize(patientReader{c}, readBuffer)
	c.fr = NewFrameReader(c.br, opts.MaxBody)
	c.fr.Alloc = c.pool.get
	if opts.Role == Plugin {
		if err := c.send(TypeHello, 0, Hello, nil); err != nil {
			return nil, err
		}
	}
	c.role <- struct{}{}
	go c.background()
	return c, nil
}

// Done is closed when the channel has failed or was closed.
func (c *Conn) Done() <-chan struct{} { return c.failed }

// Err returns why the channel failed, or nil while it works.
func (c *Conn) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// Close closes the channel; every stream ends with ErrClosed.
func (c *Conn) Close() error {
	c.fail(ErrClosed)
	<-c.readerEnd
	return nil
}

// fail ends the channel and every stream on it with err.
func (c *Conn) fail(err error) {
	c.failOnce.Do(func() {
		c.mu.Lock()
		c.err = err
		streams := c.streams
		c.streams = map[uint32]*Stream{}
		c.mu.Unlock()
		c.w.fail(err)
		_ = c.nc.Close()
		for _, s := range streams {
			s.finish(err, false)
		}
		close(c.failed)
		if c.opts.OnFail != nil {
			c.opts.OnFail(err)
		}
	})
}

func (c *Conn) send(typ byte, stream uint32, meta, bulk []byte) error {
	return c.sendFrames(frame{typ: typ, stream: stream, meta: meta, bulk: bulk})
}

func (c *Conn) sendFrames(frames ...frame) error {
	for i := range frames {
		if n := len(frames[i].meta) + len(frames[i].bulk); n > c.opts.MaxBody {
			return fmt.Errorf("datachan: message of %d bytes exceeds the limit of %d bytes", n, c.opts.MaxBody)
		}
	}
	err, fatal := c.w.send(frames...)
	if fatal {
		c.fail(err)
	}
	if err != nil {
		// A write that fails because the channel failed meanwhile (its
		// socket closed under it) reports why the channel failed.
		if cerr := c.Err(); cerr != nil {
			return cerr
		}
	}
	return err
}

// Open opens a stream of the given kind (host side). Cancelling ctx resets
// the stream.
func (c *Conn) Open(ctx context.Context, kind byte) (*Stream, error) {
	if c.opts.Role != Host {
		return nil, errors.New("datachan: only the host opens streams")
	}
	c.openMu.Lock()
	c.mu.Lock()
	if c.err != nil {
		err := c.err
		c.mu.Unlock()
		c.openMu.Unlock()
		return nil, err
	}
	c.lastID++
	s := newStream(c, c.lastID, kind)
	c.streams[s.id] = s
	c.mu.Unlock()
	err := c.send(TypeOpen, s.id, []byte{kind}, nil)
	c.openMu.Unlock()
	if err != nil {
		s.finish(err, false)
		return nil, err
	}
	stop := context.AfterFunc(ctx, s.Reset)
	s.mu.Lock()
	s.stopAfter = stop
	s.mu.Unlock()
	return s, nil
}

// readBuffer is the size of the channel's read buffer. It holds
// headers, metas and runs of small frames; a frame's bulk goes past it,
// straight from the socket into the bulk's own buffer once what is already
// buffered was copied. A large buffer would pull most of a batch through
// itself and copy it a second time (with 64 KiB: 60 KiB of every 100 KiB
// batch, a tenth of the receiving process's CPU at batch 100).
const readBuffer = 4 << 10

// patientReader reads the socket for the role holder. Inside a frame it
// waits out deadlines (set to wake the holder between frames: a frame
// half read cannot be resumed by another goroutine).
type patientReader struct{ c *Conn }

func (p patientReader) Read(b []byte) (int, error) {
	for {
		var n int
		var err error
		if p.c.raw != nil {
			n, err = p.c.raw.Read(b)
		} else {
			n, err = p.c.nc.Read(b)
		}
		if n == 0 && err != nil && p.c.inFrame && errors.Is(err, os.ErrDeadlineExceeded) {
			_ = p.c.nc.SetReadDeadline(time.Time{})
			continue
		}
		return n, err
	}
}

// readOne reads one frame and dispatches it; the caller holds the role.
// A deadline that passes before the frame starts returns
// os.ErrDeadlineExceeded and leaves the channel working; any other error
// fails the channel and is returned.
func (c *Conn) readOne() error {
	if _, err := c.br.Peek(1); err != nil {
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return err
		}
		return c.readFailed(err)
	}
	c.inFrame = true
	f, err := c.fr.Next()
	c.inFrame = false
	if err != nil {
		return c.readFailed(err)
	}
	if !c.hello {
		if f.Type != TypeHello || !bytes.Equal(f.Meta, Hello) {
			err := fmt.Errorf("%w: the channel does not start with the connectd hello (frame type %d, %d meta bytes)", ErrProtocol, f.Type, len(f.Meta))
			c.fail(err)
			return err
		}
		c.hello = true
		return nil
	}
	if err := c.dispatch(f); err != nil {
		c.fail(err)
		return err
	}
	return nil
}

func (c *Conn) readFailed(err error) error {
	if !c.hello && errors.Is(err, ErrProtocol) {
		err = fmt.Errorf("the channel does not start with the connectd hello: %w", err)
	}
	c.fail(readError(err))
	return c.Err()
}

func readError(err error) error {
	switch {
	case errors.Is(err, ErrProtocol):
		return err
	case errors.Is(err, net.ErrClosed):
		return ErrClosed
	case err == io.EOF:
		return ErrPeerClosed
	case err == io.ErrUnexpectedEOF:
		return fmt.Errorf("%w in the middle of a frame", ErrPeerClosed)
	}
	return fmt.Errorf("%w: %v", ErrPeerClosed, err)
}

// dispatch handles one frame for the role holder. An error fails the
// whole channel.
func (c *Conn) dispatch(f Frame) error {
	switch {
	case f.Type == TypeHello:
		return fmt.Errorf("%w: a second hello", ErrProtocol)
	case f.Type == TypeOpen:
		if c.opts.Role != Plugin {
			return fmt.Errorf("%w: the plugin opened stream %d", ErrProtocol, f.Stream)
		}
		if len(f.Meta) != 1 {
			return fmt.Errorf("%w: open frame with %d meta bytes", ErrProtocol, len(f.Meta))
		}
		c.mu.Lock()
		if f.Stream <= c.lastID {
			c.mu.Unlock()
			return fmt.Errorf("%w: stream %d opened after stream %d", ErrProtocol, f.Stream, c.lastID)
		}
		c.lastID = f.Stream
		s := newStream(c, f.Stream, f.Meta[0])
		c.streams[s.id] = s
		c.mu.Unlock()
		go c.opts.Accept(s.kind, s)
		return nil
	case f.Type == TypeReset && c.opts.Role != Plugin:
		return fmt.Errorf("%w: the plugin reset stream %d", ErrProtocol, f.Stream)
	case f.Type == TypeEnd && c.opts.Role != Host:
		return fmt.Errorf("%w: the host ended stream %d", ErrProtocol, f.Stream)
	}
	c.mu.Lock()
	s := c.streams[f.Stream]
	known := f.Stream <= c.lastID
	c.mu.Unlock()
	if s == nil {
		if !known {
			return fmt.Errorf("%w: frame type %d for stream %d, which was never opened", ErrProtocol, f.Type, f.Stream)
		}
		return nil // a stream this end already closed: late frames are dropped
	}
	switch f.Type {
	case TypeMsg:
		v, err := c.opts.Decode(s.kind, f.Meta, f.Bulk)
		if err != nil {
			s.abort(fmt.Errorf("%w: stream %d: %v", ErrProtocol, f.Stream, err))
			return nil
		}
		s.push(v)
	case TypeEnd:
		var err error = io.EOF
		if len(f.Meta) > 0 {
			err = &RemoteError{Message: string(f.Meta)}
		}
		s.finish(err, true)
	case TypeReset:
		s.finish(ErrReset, true)
	}
	return nil
}

// Release hands back the bulk of a received message (what Decode was
// given) once nothing refers to it any more: a later frame may be read into
// it. Releasing is optional; a buffer that is still in use must never be
// released.
func (c *Conn) Release(bulk []byte) { c.pool.put(bulk) }

func (c *Conn) remove(id uint32) {
	c.mu.Lock()
	delete(c.streams, id)
	c.mu.Unlock()
}

// Stream is one task stream: messages in both directions, in order.
type Stream struct {
	c    *Conn
	id   uint32
	kind byte

	ctx    context.Context
	cancel context.CancelFunc
	// stopAfter unregisters the host's context hook.
	stopAfter func() bool

	mu      sync.Mutex
	q       []any
	head    int
	notify  chan struct{} // cap 1: a message or the end arrived
	end     error         // what Recv returns once the queue is empty
	closed  bool          // this end sent its last frame (end or reset)
	handler func(v any, err error)

	// hmu orders the deliveries to handler: queued messages first, then
	// those the reading goroutine hands over, then the end, once.
	hmu       sync.Mutex
	delivered bool // the end went to handler (guarded by hmu)
}

func newStream(c *Conn, id uint32, kind byte) *Stream {
	ctx, cancel := context.WithCancel(context.Background())
	return &Stream{c: c, id: id, kind: kind, ctx: ctx, cancel: cancel, notify: make(chan struct{}, 1)}
}

// Release hands back the bulk of a message received on this stream once
// nothing refers to it any more (Conn.Release).
func (s *Stream) Release(bulk []byte) { s.c.Release(bulk) }

// Kind is the stream's kind, as given to Open.
func (s *Stream) Kind() byte { return s.kind }

// Context is cancelled when the stream ends: reset by the host, ended,
// or the channel failed.
func (s *Stream) Context() context.Context { return s.ctx }

func (s *Stream) wake() {
	select {
	case s.notify <- struct{}{}:
	default:
	}
}

func (s *Stream) push(v any) {
	s.mu.Lock()
	if s.end != nil {
		s.mu.Unlock()
		return
	}
	if h := s.handler; h != nil {
		s.mu.Unlock()
		s.hmu.Lock()
		if !s.delivered {
			h(v, nil)
		}
		s.hmu.Unlock()
		return
	}
	s.q = append(s.q, v)
	s.mu.Unlock()
	s.wake()
}

// Handle makes the stream hand its messages to h as they arrive, on the
// goroutine reading the channel, instead of queueing them for Recv: a
// receiver that never waits saves the hand-off to a goroutine parked in
// Recv (a thread wake-up per message, the larger part of a round trip's
// fixed cost). Messages queued before the call go to h first, on the
// calling goroutine; after the last message h gets, once, a nil value and
// the error Recv would return. h must not block, since every stream of the
// channel waits for it, and must not call methods of the stream or its
// channel (they may deliver to h). Recv must not be used afterwards.
func (s *Stream) Handle(h func(v any, err error)) {
	s.hmu.Lock()
	defer s.hmu.Unlock()
	s.mu.Lock()
	queued := s.q[s.head:]
	s.q, s.head = nil, 0
	s.handler = h
	end := s.end
	s.mu.Unlock()
	for _, v := range queued {
		h(v, nil)
	}
	if end != nil && !s.delivered {
		s.delivered = true
		h(nil, end)
	}
}

// deliverEnd hands the end to the handler, if there is one.
func (s *Stream) deliverEnd() {
	s.mu.Lock()
	h, end := s.handler, s.end
	s.mu.Unlock()
	if h == nil || end == nil {
		return
	}
	s.hmu.Lock()
	defer s.hmu.Unlock()
	if !s.delivered {
		s.delivered = true
		h(nil, end)
	}
}

// finish records how the stream ended: Recv returns err once the queue is
// drained. remote says the peer ended it (nothing needs to be sent).
func (s *Stream) finish(err error, remote bool) {
	s.mu.Lock()
	if s.end == nil {
		s.end = err
	}
	if remote {
		s.closed = true
	}
	stop := s.stopAfter
	s.mu.Unlock()
	s.c.remove(s.id)
	s.cancel()
	if stop != nil {
		stop()
	}
	s.wake()
	s.deliverEnd()
	s.c.kick() // a reader waiting for this stream's messages is done
}

// abort fails the stream locally with err and tells the peer: the host
// resets it, the plugin ends it with the error. It runs on the reading
// goroutine, which must never wait for a write: the frame is sent from
// another goroutine.
func (s *Stream) abort(err error) {
	s.mu.Lock()
	if s.end == nil {
		s.end = err
	}
	s.mu.Unlock()
	if s.c.opts.Role == Host {
		go s.Reset()
	} else {
		go s.End(err)
	}
}

// Recv returns the next message, or once the stream has ended and every
// message was taken: io.EOF (clean end), *RemoteError, ErrReset, or the
// channel's error.
func (s *Stream) Recv() (any, error) {
	for {
		if v, ok, err := s.TryRecv(); ok || err != nil {
			return v, err
		}
		if err := s.c.Await(context.Background(), time.Time{}, s.pending, s.notify); err != nil {
			if v, ok, serr := s.TryRecv(); ok || serr != nil {
				return v, serr
			}
			return nil, err
		}
	}
}

// pending reports whether TryRecv has something to return.
func (s *Stream) pending() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.head < len(s.q) || s.end != nil
}

// AwaitMessage waits until TryRecv has something to return (a message or
// the end), ctx is done, or the channel fails, reading the channel itself
// while nobody else does (Conn.Await).
func (s *Stream) AwaitMessage(ctx context.Context) error {
	return s.c.Await(ctx, time.Time{}, s.pending, s.notify)
}

// Await is Conn.Await of the stream's channel.
func (s *Stream) Await(ctx context.Context, deadline time.Time, done func() bool, wake <-chan struct{}) error {
	return s.c.Await(ctx, deadline, done, wake)
}

// TryRecv is Recv without waiting: ok is false when no message is queued
// and the stream has not ended (then AwaitMessage waits for more).
func (s *Stream) TryRecv() (v any, ok bool, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.head < len(s.q) {
		v := s.q[s.head]
		s.q[s.head] = nil
		s.head++
		if s.head == len(s.q) {
			s.q, s.head = s.q[:0], 0
		}
		return v, true, nil
	}
	return nil, false, s.end
}

// Send sends one message: meta (small, structured) and bulk (records). It
// returns once both are queued, or written if they are large; the caller
// may reuse them afterwards.
func (s *Stream) Send(meta, bulk []byte) error {
	if err := s.sendable(); err != nil {
		return err
	}
	return s.c.send(TypeMsg, s.id, meta, bulk)
}

// SendMetas sends several messages without bulk together: one write where
// one would do, where separate sends could cost the peer a wake-up each.
func (s *Stream) SendMetas(metas ...[]byte) error {
	if err := s.sendable(); err != nil {
		return err
	}
	frames := make([]frame, len(metas))
	for i, m := range metas {
		frames[i] = frame{typ: TypeMsg, stream: s.id, meta: m}
	}
	return s.c.sendFrames(frames...)
}

func (s *Stream) sendable() error {
	s.mu.Lock()
	closed, end := s.closed, s.end
	s.mu.Unlock()
	if closed {
		if end == nil || end == io.EOF {
			end = ErrClosed
		}
		return end
	}
	if end != nil && s.c.opts.Role == Host {
		return end // the plugin ended it or the channel failed
	}
	return nil
}

// Reset abandons the stream (host side): the plugin's side is cancelled,
// anything still arriving is dropped, Recv returns ErrClosed.
func (s *Stream) Reset() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		s.finish(ErrClosed, false)
		return
	}
	s.closed = true
	s.mu.Unlock()
	s.finish(ErrClosed, false)
	_ = s.c.send(TypeReset, s.id, nil, nil)
}

// End ends the stream (plugin side) with err, nil for a clean end.
func (s *Stream) End(err error) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		s.finish(ErrClosed, false)
		return
	}
	s.closed = true
	s.mu.Unlock()
	var msg []byte
	if err != nil {
		msg = []byte(err.Error())
		if len(msg) == 0 {
			msg = []byte("error")
		}
		if len(msg) > 64<<10 {
			msg = msg[:64<<10]
		}
	}
	s.finish(ErrClosed, false)
	_ = s.c.send(TypeEnd, s.id, msg, nil)
}
