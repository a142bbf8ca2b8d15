//go:build linux

package datachan

import (
	"context"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"time"
)

// delayedEcho serves a stream like echo, answering each message after
// the delay (nanoseconds) that the test sets before sending it.
func delayedEcho(delay *atomic.Int64) func(kind byte, s *Stream) {
	return func(kind byte, s *Stream) {
		for {
			v, err := s.Recv()
			if err != nil {
				s.End(nil)
				return
			}
			time.Sleep(time.Duration(delay.Load()))
			if err := s.Send(append([]byte{kind}, v.(msg).meta...), nil); err != nil {
				s.End(err)
				return
			}
		}
	}
}

// TestSpinWait: a waiter whose answer comes within SpinWait gets it by
// polling; answers that keep coming later than SpinWait make the waits
// stop polling after a few misses, rather than miss once per wait; and
// once answers are quick again, polling comes back.
func TestSpinWait(t *testing.T) {
	a, b := socketpair(t)
	host := hostConnSpin(t, a, 10*time.Second, 20*time.Millisecond)
	if runtime.NumCPU() < 2 {
		if host.spinWait != 0 {
			t.Fatalf("on a single CPU the channel polls for %s", host.spinWait)
		}
		t.Log("single CPU: the channel does not poll, as intended; the polling itself is tested on two or more")
		return
	}
	var delay atomic.Int64
	pluginConn(t, b, delayedEcho(&delay))
	s, err := host.Open(context.Background(), 1)
	if err != nil {
		t.Fatal(err)
	}
	roundTrips := func(n int, d time.Duration) (hits, misses uint64) {
		t.Helper()
		h0, m0 := host.spinHits.Load(), host.spinMisses.Load()
		for i := range n {
			delay.Store(int64(d))
			if err := s.Send([]byte(fmt.Sprint(i)), nil); err != nil {
				t.Fatal(err)
			}
			if _, err := recvWithin(t, s, 10*time.Second); err != nil {
				t.Fatal(err)
			}
		}
		return host.spinHits.Load() - h0, host.spinMisses.Load() - m0
	}

	// Answers after 1 ms, not there yet when the waiter starts reading:
	// its 20 ms poll catches them (half of them leave ample room for a
	// loaded machine).
	if hits, misses := roundTrips(50, time.Millisecond); hits < 25 {
		t.Fatalf("quick answers: %d polls caught the answer, %d missed; want at least 25 of 50 caught", hits, misses)
	}
	// Answers after 60 ms: waits poll again after misses have skipped 1,
	// 2 and 4 waits, so 12 waits see 4 misses (2 to 5, should a miss of
	// the quick phase have started the skipping), not 12.
	if hits, misses := roundTrips(12, 60*time.Millisecond); hits != 0 || misses < 2 || misses > 5 {
		t.Fatalf("slow answers: %d polls caught the answer, %d missed; want none caught and 2 to 5 misses in 12 waits", hits, misses)
	}
	// Quick again: after at most 16 skipped waits a poll catches an
	// answer, and from then on every wait polls again.
	if hits, misses := roundTrips(50, time.Millisecond); hits < 25 {
		t.Fatalf("quick answers after slow ones: %d polls caught the answer, %d missed; want at least 25 of 50 caught", hits, misses)
	}
	if err := host.Err(); err != nil {
		t.Fatalf("channel failed: %v", err)
	}
}

// TestNoSpinWait: with SpinWait 0 nobody polls.
func TestNoSpinWait(t *testing.T) {
	a, b := socketpair(t)
	host := hostConnSpin(t, a, 10*time.Second, 0)
	pluginConn(t, b, echo)
	s, err := host.Open(context.Background(), 1)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 50 {
		if err := echoed(s, 1, []byte(fmt.Sprint(i)), nil); err != nil {
			t.Fatal(err)
		}
	}
	if hits, misses := host.spinHits.Load(), host.spinMisses.Load(); hits+misses != 0 {
		t.Fatalf("with SpinWait 0: %d polls caught an answer, %d missed", hits, misses)
	}
}
