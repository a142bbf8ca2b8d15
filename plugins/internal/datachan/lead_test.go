package datachan

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestWaiterReads: in a ping-pong, the goroutine waiting in Recv reads the
// channel itself (it takes the reading role), and the channel's own
// goroutine stays out of the way.
func TestWaiterReads(t *testing.T) {
	host, s := echoPair(t)
	const n = 200
	before := host.leads.Load()
	for i := range n {
		if err := echoed(s, 1, []byte(fmt.Sprint(i)), nil); err != nil {
			t.Fatalf("message %d: %v", i, err)
		}
	}
	// Every Recv finds its reply not yet there and reads for it; the
	// channel's goroutine could take a reply only after waiters left the
	// socket alone for two ticks, which a round trip on one machine does
	// not take (half the rounds leave ample room for a loaded machine).
	if leads := host.leads.Load() - before; leads < n/2 {
		t.Fatalf("the waiting goroutine read for %d of %d replies", leads, n)
	}
}

// TestAwaitSharedCondition: goroutines that wait for the same thing (as a
// sink task's Puts wait for credits), woken by one notification channel
// of capacity one, all get through: a waiter whose wake-up another took
// is served when the reading role comes free.
func TestAwaitSharedCondition(t *testing.T) {
	host, s := echoPair(t)
	tokens := make(chan struct{}, 64)
	notify := make(chan struct{}, 1)
	s.Handle(func(v any, err error) {
		if err == nil {
			tokens <- struct{}{}
		}
		select {
		case notify <- struct{}{}:
		default:
		}
	})
	const inFlight, workers, rounds = 2, 8, 40
	for range inFlight {
		if err := s.Send([]byte("token"), nil); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for taken := 0; taken < rounds; {
				select {
				case <-tokens:
					taken++
					if err := s.Send([]byte("token"), nil); err != nil {
						errs <- err
						return
					}
					continue
				default:
				}
				if err := host.Await(ctx, time.Time{}, func() bool { return len(tokens) > 0 }, notify); err != nil {
					errs <- fmt.Errorf("after %d tokens: %w", taken, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// TestAwaitEnds: Await returns for ctx, for its deadline and for
// Interrupt while it reads and nothing arrives, and the channel works on
// afterwards.
func TestAwaitEnds(t *testing.T) {
	host, s := echoPair(t)
	never := func() bool { return false }
	var flag atomic.Bool
	cases := []struct {
		name string
		run  func() error
		want error
	}{
		{"cancel", func() error {
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(50*time.Millisecond, cancel)
			return host.Await(ctx, time.Time{}, never, nil)
		}, context.Canceled},
		{"deadline", func() error {
			return host.Await(context.Background(), time.Now().Add(50*time.Millisecond), never, nil)
		}, ErrAwaitTimeout},
		{"interrupt", func() error {
			time.AfterFunc(50*time.Millisecond, func() { flag.Store(true); host.Interrupt() })
			return host.Await(context.Background(), time.Time{}, flag.Load, nil)
		}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			start := time.Now()
			err := c.run()
			if !errors.Is(err, c.want) || (c.want == nil && err != nil) {
				t.Fatalf("Await returned %v, want %v", err, c.want)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Fatalf("Await took %s", d)
			}
			// The kick or deadline must not stay behind for the next reader.
			if err := echoed(s, 1, []byte("ping"), nil); err != nil {
				t.Fatalf("round trip after Await: %v", err)
			}
		})
	}
	if err := host.Err(); err != nil {
		t.Fatalf("channel failed: %v", err)
	}
}

// TestKicksKeepFraming: wake-ups of the reader (Interrupt, as a failing
// task or a cancelled call causes) that land inside a frame do not cut
// it: large frames arrive intact while another goroutine keeps kicking.
func TestKicksKeepFraming(t *testing.T) {
	host, s := echoPair(t)
	stop := make(chan struct{})
	kicked := make(chan struct{})
	go func() {
		defer close(kicked)
		for {
			select {
			case <-stop:
				return
			default:
				host.Interrupt()
				time.Sleep(20 * time.Microsecond)
			}
		}
	}()
	defer func() { close(stop); <-kicked }()
	for i := range 40 {
		bulk := bytes.Repeat([]byte{byte(i), byte(i >> 8), 7}, 300<<10)
		if err := echoed(s, 1, []byte(fmt.Sprint(i)), bulk); err != nil {
			t.Fatalf("frame %d: %v", i, err)
		}
	}
	if err := host.Err(); err != nil {
		t.Fatalf("channel failed: %v", err)
	}
}

// TestUnaskedFramesAfterWaiters: once waiters stop, what arrives unasked
// for (here a stream's end that the plugin sends on its own) is still
// read and delivered, by the channel's own goroutine.
func TestUnaskedFramesAfterWaiters(t *testing.T) {
	a, b := socketpair(t)
	host := hostConn(t, a, 10*time.Second)
	release := make(chan struct{})
	pluginConn(t, b, func(kind byte, s *Stream) {
		v, err := s.Recv()
		if err != nil {
			return
		}
		_ = s.Send(v.(msg).meta, nil)
		<-release // then end on its own, with nobody waiting on the host
		s.End(errors.New("ended by the plugin"))
	})
	s, err := host.Open(context.Background(), 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Send([]byte("hello"), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := recvWithin(t, s, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	ended := make(chan error, 1)
	s.Handle(func(v any, err error) {
		if err != nil {
			ended <- err
		}
	})
	close(release)
	select {
	case err := <-ended:
		var remote *RemoteError
		if !errors.As(err, &remote) || remote.Message != "ended by the plugin" {
			t.Fatalf("end delivered as %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the plugin's end was not read without a waiter")
	}
}
