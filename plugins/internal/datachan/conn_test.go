package datachan

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// socketpair returns the two ends of a real Unix socketpair, as the host
// and the plugin have them.
func socketpair(t testing.TB) (a, b net.Conn) {
	t.Helper()
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	conn := func(fd int) net.Conn {
		f := os.NewFile(uintptr(fd), "pair")
		c, err := net.FileConn(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	return conn(fds[0]), conn(fds[1])
}

// msg is what the test decoder produces: meta copied, bulk as received.
type msg struct {
	kind       byte
	meta, bulk []byte
}

func decode(kind byte, meta, bulk []byte) (any, error) {
	if bytes.HasPrefix(meta, []byte("bad")) {
		return nil, errors.New("undecodable test message")
	}
	return msg{kind, bytes.Clone(meta), bulk}, nil
}

const testMax = 4 << 20

func hostConn(t *testing.T, nc net.Conn, timeout time.Duration) *Conn {
	t.Helper()
	c, err := New(nc, Options{Role: Host, MaxBody: testMax, WriteTimeout: timeout, Decode: decode})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func pluginConn(t *testing.T, nc net.Conn, accept func(kind byte, s *Stream)) *Conn {
	t.Helper()
	c, err := New(nc, Options{Role: Plugin, MaxBody: testMax, WriteTimeout: 10 * time.Second, Decode: decode, Accept: accept})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// echo serves a stream by sending every message back with its kind
// prepended to the meta, and ends the stream when told ("end", "fail").
func echo(kind byte, s *Stream) {
	for {
		v, err := s.Recv()
		if err != nil {
			s.End(nil)
			return
		}
		m := v.(msg)
		switch string(m.meta) {
		case "end":
			s.End(nil)
			return
		case "fail":
			s.End(errors.New("task failed: deliberate"))
			return
		}
		if err := s.Send(append([]byte{kind}, m.meta...), m.bulk); err != nil {
			s.End(err)
			return
		}
	}
}

// echoPair returns a host channel with a stream of kind 1 opened to a
// plugin channel that serves it with echo.
func echoPair(t *testing.T) (*Conn, *Stream) {
	t.Helper()
	a, b := socketpair(t)
	host := hostConn(t, a, 10*time.Second)
	pluginConn(t, b, echo)
	s, err := host.Open(context.Background(), 1)
	if err != nil {
		t.Fatal(err)
	}
	return host, s
}

// echoed sends meta and bulk on a stream that echo serves and checks the
// reply: the stream's kind, then meta and bulk unchanged.
func echoed(s *Stream, kind byte, meta, bulk []byte) error {
	if err := s.Send(meta, bulk); err != nil {
		return err
	}
	v, err := s.Recv()
	if err != nil {
		return err
	}
	m := v.(msg)
	if m.meta[0] != kind || !bytes.Equal(m.meta[1:], meta) || !bytes.Equal(m.bulk, bulk) {
		return fmt.Errorf("reply differs (%d meta, %d bulk bytes)", len(m.meta), len(m.bulk))
	}
	return nil
}

func recvWithin(t *testing.T, s *Stream, d time.Duration) (any, error) {
	t.Helper()
	type res struct {
		v   any
		err error
	}
	ch := make(chan res, 1)
	go func() { v, err := s.Recv(); ch <- res{v, err} }()
	select {
	case r := <-ch:
		return r.v, r.err
	case <-time.After(d):
		t.Fatalf("no message or end within %s", d)
		return nil, nil
	}
}

// TestStreamsMultiplexed: several streams of one channel, each sending
// messages of every size (copied and written in place, up to 1 MiB bulks)
// from concurrent goroutines, get their own replies, intact and in order.
func TestStreamsMultiplexed(t *testing.T) {
	a, b := socketpair(t)
	host := hostConn(t, a, 10*time.Second)
	pluginConn(t, b, echo)
	sizes := []int{0, 1, 100, copyMax, copyMax + 1, 200 << 10, 1 << 20}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for n := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			kind := byte(n%2 + 1)
			s, err := host.Open(context.Background(), kind)
			if err != nil {
				errs <- err
				return
			}
			for i := range 60 {
				size := sizes[(i+n)%len(sizes)]
				meta := []byte(fmt.Sprintf("stream %d message %d", n, i))
				if i%5 == 0 {
					meta = bytes.Repeat(meta, 3000) // a meta written in place too
				}
				bulk := bytes.Repeat([]byte{byte(n), byte(i)}, size/2)
				if err := echoed(s, kind, meta, bulk); err != nil {
					errs <- fmt.Errorf("stream %d message %d: %w", n, i, err)
					return
				}
			}
			if err := s.Send([]byte("end"), nil); err != nil {
				errs <- err
				return
			}
			if _, err := s.Recv(); err != io.EOF {
				errs <- fmt.Errorf("stream %d after end: %v", n, err)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if err := host.Err(); err != nil {
		t.Fatalf("channel failed: %v", err)
	}
}

// TestPipelined: many messages in flight at once (not ping-pong) arrive in
// order; small frames sent during a write go out together.
func TestPipelined(t *testing.T) {
	_, s := echoPair(t)
	const n = 5000
	go func() {
		for i := range n {
			bulk := []byte(nil)
			if i%100 == 0 {
				bulk = make([]byte, 300<<10)
			}
			if err := s.Send([]byte(fmt.Sprint(i)), bulk); err != nil {
				return
			}
		}
	}()
	for i := range n {
		v, err := recvWithin(t, s, 20*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if got := string(v.(msg).meta[1:]); got != fmt.Sprint(i) {
			t.Fatalf("message %d arrived as %s", i, got)
		}
	}
}

// TestSendMetas: messages sent together arrive in order, as separate
// messages.
func TestSendMetas(t *testing.T) {
	a, b := socketpair(t)
	host := hostConn(t, a, 10*time.Second)
	pluginConn(t, b, func(kind byte, s *Stream) {
		if _, err := s.Recv(); err != nil {
			return
		}
		s.SendMetas([]byte("result"), []byte("credit"), bytes.Repeat([]byte("x"), copyMax+1))
		s.End(nil)
	})
	s, err := host.Open(context.Background(), 1)
	if err != nil {
		t.Fatal(err)
	}
	s.Send([]byte("go"), nil)
	for _, want := range []string{"result", "credit", strings.Repeat("x", copyMax+1)} {
		v, err := recvWithin(t, s, 10*time.Second)
		if err != nil || string(v.(msg).meta) != want {
			t.Fatalf("got %v %v, want %.10s", v, err, want)
		}
	}
	if _, err := recvWithin(t, s, 10*time.Second); err != io.EOF {
		t.Fatalf("end: %v", err)
	}
}

func TestEndResetAndLateFrames(t *testing.T) {
	a, b := socketpair(t)
	host := hostConn(t, a, 10*time.Second)
	resets := make(chan error, 1)
	pluginConn(t, b, func(kind byte, s *Stream) {
		if kind == 3 { // keeps sending after the host resets it
			for s.Context().Err() == nil {
				_ = s.Send([]byte("tick"), nil)
				time.Sleep(time.Millisecond)
			}
			_, err := s.Recv()
			resets <- err
			for range 10 { // late frames: dropped by the host
				_ = s.Send([]byte("late"), nil)
			}
			s.End(nil)
			return
		}
		echo(kind, s)
	})
	ctx := context.Background()

	// A failing end reaches the host after the messages before it.
	s, err := host.Open(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	s.Send([]byte("one"), nil)
	s.Send([]byte("fail"), nil)
	if v, err := recvWithin(t, s, 10*time.Second); err != nil || string(v.(msg).meta[1:]) != "one" {
		t.Fatalf("first reply %v %v", v, err)
	}
	var remote *RemoteError
	if _, err := recvWithin(t, s, 10*time.Second); !errors.As(err, &remote) || remote.Message != "task failed: deliberate" {
		t.Fatalf("end: %v", err)
	}
	if err := s.Send([]byte("after end"), nil); err == nil {
		t.Fatal("send on an ended stream succeeded")
	}

	// Cancelling the host's context resets the stream on both sides.
	cctx, cancel := context.WithCancel(ctx)
	s, err = host.Open(cctx, 3)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := recvWithin(t, s, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	cancel()
	select {
	case err := <-resets:
		if !errors.Is(err, ErrReset) {
			t.Fatalf("plugin side after reset: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the plugin did not see the reset")
	}
	for {
		if _, err := recvWithin(t, s, 10*time.Second); err != nil {
			if !errors.Is(err, ErrClosed) {
				t.Fatalf("host side after reset: %v", err)
			}
			break
		}
	}
	// The channel survives the late frames.
	s, err = host.Open(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	s.Send([]byte("still there"), nil)
	if v, err := recvWithin(t, s, 10*time.Second); err != nil || string(v.(msg).meta[1:]) != "still there" {
		t.Fatalf("after a reset: %v %v", v, err)
	}
	if err := host.Err(); err != nil {
		t.Fatal(err)
	}
}

// TestDecodeErrorFailsOnlyItsStream: a message that does not decode fails
// its stream with ErrProtocol (and tells the peer); the others go on.
func TestDecodeErrorFailsOnlyItsStream(t *testing.T) {
	a, b := socketpair(t)
	host := hostConn(t, a, 10*time.Second)
	pluginConn(t, b, echo)
	ctx := context.Background()
	good, _ := host.Open(ctx, 1)
	// The host cannot decode what this plugin sends.
	pl, hn := socketpair(t)
	host2 := hostConn(t, hn, 10*time.Second)
	pluginConn(t, pl, func(kind byte, s *Stream) {
		s.Send([]byte("bad message"), nil)
		s.Send([]byte("more"), nil)
		<-s.Context().Done()
		s.End(nil)
	})
	s1, _ := host2.Open(ctx, 1)
	s2, _ := host2.Open(ctx, 2)
	for _, s := range []*Stream{s1, s2} {
		if _, err := recvWithin(t, s, 10*time.Second); !errors.Is(err, ErrProtocol) {
			t.Fatalf("stream %d: %v", s.id, err)
		}
	}
	good.Send([]byte("ok"), nil)
	if _, err := recvWithin(t, good, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	if host.Err() != nil || host2.Err() != nil {
		t.Fatalf("a stream's bad message failed the channel: %v %v", host.Err(), host2.Err())
	}
}

// TestGarbageFailsChannel: bytes that are not frames, an oversized frame,
// or a frame for a stream never opened fail every stream of the channel
// promptly with ErrProtocol.
func TestGarbageFailsChannel(t *testing.T) {
	hello := encFrame(TypeHello, 0, Hello, nil)
	cases := map[string][]byte{
		"no hello":       []byte("hello from a connector that prints to stdout\n"),
		"wrong hello":    encFrame(TypeHello, 0, []byte("other-protocol/1"), nil),
		"oversized":      append(hello, AppendHeader(nil, TypeMsg, 1, 0, testMax+1)...),
		"unknown type":   append(hello, encFrame(9, 1, nil, nil)...),
		"unopened":       append(hello, encFrame(TypeMsg, 77, []byte("x"), nil)...),
		"plugin opens":   append(hello, encFrame(TypeOpen, 5, []byte{1}, nil)...),
		"second hello":   append(hello, hello...),
		"plugin resets":  append(hello, encFrame(TypeReset, 1, nil, nil)...),
		"truncated size": append(hello, 0xff),
	}
	for name, garbage := range cases {
		t.Run(name, func(t *testing.T) {
			a, raw := socketpair(t)
			host := hostConn(t, a, 10*time.Second)
			s, err := host.Open(context.Background(), 1)
			if err != nil {
				t.Fatal(err)
			}
			go io.Copy(io.Discard, raw)
			raw.Write(garbage)
			if name == "truncated size" {
				raw.Close() // a peer that dies mid-frame
			}
			_, err = recvWithin(t, s, 10*time.Second)
			want := ErrProtocol
			if name == "truncated size" {
				want = ErrPeerClosed
			}
			if !errors.Is(err, want) {
				t.Fatalf("Recv: %v, want %v", err, want)
			}
			if _, err := host.Open(context.Background(), 1); !errors.Is(err, want) {
				t.Fatalf("Open after the failure: %v", err)
			}
			t.Log(err)
		})
	}
}

// TestPeerDeathFailsStreamsPromptly: when the plugin's end goes away
// (process killed: the kernel closes its descriptors), every waiting Recv
// and every later Send fails at once.
func TestPeerDeathFailsStreamsPromptly(t *testing.T) {
	a, b := socketpair(t)
	host := hostConn(t, a, 10*time.Second)
	pl := pluginConn(t, b, func(kind byte, s *Stream) { <-s.Context().Done() })
	var streams []*Stream
	for range 4 {
		s, err := host.Open(context.Background(), 1)
		if err != nil {
			t.Fatal(err)
		}
		streams = append(streams, s)
	}
	errs := make(chan error, len(streams))
	for _, s := range streams {
		go func() { _, err := s.Recv(); errs <- err }()
	}
	time.Sleep(50 * time.Millisecond) // let them block
	start := time.Now()
	b.Close()
	_ = pl
	for range streams {
		select {
		case err := <-errs:
			if !errors.Is(err, ErrPeerClosed) {
				t.Fatalf("Recv: %v", err)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("Recv still blocked 5s after the peer died")
		}
	}
	t.Logf("all streams failed %v after the peer closed", time.Since(start))
	if err := streams[0].Send([]byte("x"), make([]byte, 1<<20)); !errors.Is(err, ErrPeerClosed) {
		t.Fatalf("Send after the peer died: %v", err)
	}
}

// TestWriteTimeout: a peer that stops reading cannot block a sender
// forever: the write fails with ErrTimeout and so does the channel.
func TestWriteTimeout(t *testing.T) {
	a, raw := socketpair(t)
	host := hostConn(t, a, 500*time.Millisecond)
	raw.Write(encFrame(TypeHello, 0, Hello, nil)) // then never reads
	s, err := host.Open(context.Background(), 1)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	big := make([]byte, 1<<20)
	for i := 0; ; i++ {
		err = s.Send(nil, big)
		if err != nil {
			break
		}
		if time.Since(start) > 20*time.Second {
			t.Fatalf("%d MiB sent to a peer that reads nothing", i)
		}
	}
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("Send: %v", err)
	}
	if _, err := s.Recv(); !errors.Is(err, ErrTimeout) {
		t.Fatalf("Recv after the timeout: %v", err)
	}
}

func TestSendLimits(t *testing.T) {
	host, s := echoPair(t)
	if err := s.Send([]byte("m"), make([]byte, testMax)); err == nil {
		t.Fatal("a message above MaxBody was sent")
	}
	s.Send([]byte("fits"), make([]byte, testMax-4))
	if v, err := recvWithin(t, s, 20*time.Second); err == nil {
		t.Fatalf("the echo of a full-size message is above the limit too; got %d bytes", len(v.(msg).bulk))
	}
	// The plugin's reply did not fit (its meta grew by one byte), so its
	// send failed and it ended the stream; the channel is fine.
	if err := host.Err(); err != nil {
		t.Fatal(err)
	}
}

// TestHandle: a stream switched to a handler mid-flight delivers every
// message once, in order (those queued before Handle first), then its end
// once, after the last message; a channel failure ends a handled stream
// too.
func TestHandle(t *testing.T) {
	for _, end := range []string{"end", "fail", "channel"} {
		t.Run(end, func(t *testing.T) {
			a, b := socketpair(t)
			host := hostConn(t, a, 10*time.Second)
			plugin := pluginConn(t, b, echo)
			s, err := host.Open(context.Background(), 1)
			if err != nil {
				t.Fatal(err)
			}
			const n = 2000
			type got struct {
				v   any
				err error
			}
			var (
				mu   sync.Mutex
				seen []got
				done = make(chan struct{})
			)
			go func() {
				for i := range n {
					bulk := []byte(nil)
					if i%200 == 0 {
						bulk = make([]byte, copyMax+1) // written in place
					}
					if err := s.Send([]byte(fmt.Sprint(i)), bulk); err != nil {
						return
					}
				}
				if end == "channel" {
					return
				}
				_ = s.Send([]byte(end), nil)
			}()
			// Some replies queue for Recv before the handler takes over.
			for range 10 {
				if _, err := recvWithin(t, s, 10*time.Second); err != nil {
					t.Fatal(err)
				}
			}
			s.Handle(func(v any, err error) {
				mu.Lock()
				defer mu.Unlock()
				seen = append(seen, got{v, err})
				if err != nil {
					close(done)
				}
				if len(seen) == n-10 && end == "channel" {
					go plugin.Close()
				}
			})
			select {
			case <-done:
			case <-time.After(20 * time.Second):
				t.Fatal("no end delivered")
			}
			time.Sleep(50 * time.Millisecond) // anything after the end would show
			mu.Lock()
			defer mu.Unlock()
			if len(seen) != n-10+1 {
				t.Fatalf("%d deliveries, want %d messages and the end", len(seen), n-10)
			}
			for i, g := range seen[:n-10] {
				if g.err != nil || string(g.v.(msg).meta[1:]) != fmt.Sprint(i+10) {
					t.Fatalf("delivery %d: %v %v, want message %d", i, g.v, g.err, i+10)
				}
			}
			last := seen[n-10]
			var remote *RemoteError
			switch {
			case last.v != nil:
				t.Fatalf("end delivered with a value %v", last.v)
			case end == "end" && last.err != io.EOF,
				end == "fail" && !(errors.As(last.err, &remote) && strings.Contains(remote.Message, "deliberate")),
				end == "channel" && !errors.Is(last.err, ErrPeerClosed):
				t.Fatalf("end %q delivered as %v", end, last.err)
			}
		})
	}
}
