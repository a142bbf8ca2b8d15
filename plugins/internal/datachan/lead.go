package datachan

import (
	"context"
	"errors"
	"os"
	"time"
)

// ErrAwaitTimeout: Await's deadline passed before its condition held.
var ErrAwaitTimeout = errors.New("datachan: await deadline passed")

// quietTick is how long waiters must have left the socket alone before
// the channel's own goroutine reads it again: between a waiter's calls (a
// sink's puts, a source's batches) what arrives unasked for, such as a
// stream's end, waits about a tick in the socket at most. While a waiter
// holds the role (it reads everything that arrives meanwhile) the
// channel's goroutine sleeps until the role is given back, so a long wait,
// such as an idle source's, costs it no wake-ups.
const quietTick = 2 * time.Millisecond

// aLongTimeAgo is a read deadline that has passed: setting it wakes the
// role holder from its read.
var aLongTimeAgo = time.Unix(1, 0)

// Await waits until done reports true, ctx is done, deadline (if not zero)
// passes, or the channel fails. While no other goroutine reads the
// channel, the calling goroutine reads it and dispatches what arrives (for
// every stream, not only the caller's): the message it waits for then
// reaches it without a hand-off between goroutines, each of which costs a
// thread wake-up, the larger part of a round trip between two processes.
//
// done is called with no lock held, on the calling goroutine; it must be
// cheap and must not block. wake must receive a value whenever done may
// have become true by a delivery on another goroutine (a channel of
// capacity one that the deliveries signal); Await drains it.
//
// It returns nil once done is true, ctx.Err(), ErrAwaitTimeout, or the
// channel's error.
func (c *Conn) Await(ctx context.Context, deadline time.Time, done func() bool, wake <-chan struct{}) error {
	if done() {
		return nil
	}
	c.wanting.Add(1)
	defer func() {
		c.wanting.Add(-1)
		// A waiter that leaves without having read (its condition came
		// true otherwise) still lets the channel's goroutine look again.
		c.signalReleased()
	}()
	var timeout <-chan time.Time
	for !done() {
		select {
		case <-c.role:
			if err := c.lead(ctx, deadline, done); err != nil {
				return err
			}
			continue
		default:
		}
		if c.bgHolds.Load() {
			c.kick() // the channel's goroutine gives the role up between frames
		}
		if timeout == nil && !deadline.IsZero() {
			t := time.NewTimer(time.Until(deadline))
			defer t.Stop()
			timeout = t.C
		}
		select {
		case <-wake:
		case <-c.role:
			if err := c.lead(ctx, deadline, done); err != nil {
				return err
			}
		case <-ctx.Done():
			return ctx.Err()
		case <-c.failed:
			if done() {
				return nil
			}
			return c.Err()
		case <-timeout:
			return ErrAwaitTimeout
		}
	}
	return nil
}

// kick wakes the role holder from its read (between frames).
func (c *Conn) kick() { _ = c.nc.SetReadDeadline(aLongTimeAgo) }

// Interrupt makes the goroutine reading the channel, if any, check its
// condition again: a goroutine that makes an Await's done true other than
// by a delivery of this channel (a watchdog failing a task) calls it after
// the change.
func (c *Conn) Interrupt() { c.kick() }

// lead reads for a waiter that took the role, until done, and gives the
// role back.
func (c *Conn) lead(ctx context.Context, deadline time.Time, done func() bool) error {
	c.leads.Add(1)
	defer func() {
		_ = c.nc.SetReadDeadline(time.Time{})
		c.role <- struct{}{}
		c.signalReleased()
	}()
	if !deadline.IsZero() {
		_ = c.nc.SetReadDeadline(deadline)
	}
	if ctx.Done() != nil {
		stop := context.AfterFunc(ctx, c.kick)
		defer stop()
	}
	for !done() {
		if err := ctx.Err(); err != nil {
			return err
		}
		err := c.readOne()
		if err == nil {
			continue
		}
		if !errors.Is(err, os.ErrDeadlineExceeded) {
			if done() {
				return nil
			}
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if !deadline.IsZero() && !time.Now().Before(deadline) {
			return ErrAwaitTimeout
		}
		// Another waiter's kick, meant for the channel's goroutine, or
		// a cancelled waiter's that has gone: read on.
		_ = c.nc.SetReadDeadline(deadline)
	}
	return nil
}

// background is the channel's own goroutine: it reads while no waiter
// does, so that what arrives unasked for (a stream's end, an opened
// stream, the peer's failure) is dispatched without delay, and gives the
// role up as soon as a waiter wants it.
func (c *Conn) background() {
	defer close(c.readerEnd)
	<-c.role // the token starts here
	for {
		c.bgHolds.Store(true)
		err := c.readIdle()
		c.bgHolds.Store(false)
		_ = c.nc.SetReadDeadline(time.Time{})
		c.role <- struct{}{}
		if err != nil || !c.awaitQuiet() {
			return
		}
	}
}

// readIdle reads until a waiter wants the role or the channel fails.
func (c *Conn) readIdle() error {
	for c.wanting.Load() == 0 {
		err := c.readOne()
		if err == nil {
			continue
		}
		if !errors.Is(err, os.ErrDeadlineExceeded) {
			return err
		}
		if c.wanting.Load() == 0 {
			// A kick whose waiter was served meanwhile.
			_ = c.nc.SetReadDeadline(time.Time{})
		}
	}
	return nil
}

// signalReleased tells the channel's goroutine that the role may be free:
// it takes it once it stays free for a tick.
func (c *Conn) signalReleased() {
	select {
	case c.released <- struct{}{}:
	default:
	}
}

// awaitQuiet returns true holding the role once a waiter gave it back and
// none took it again for a tick, false when the channel failed. It sleeps
// until a waiter gives the role back (released): no ticks while a waiter
// reads.
func (c *Conn) awaitQuiet() bool {
	t := time.NewTimer(quietTick)
	defer t.Stop()
	for {
		select {
		case <-c.failed:
			return false
		case <-c.released:
		}
		t.Reset(quietTick) // no stale tick is received after Reset (Go ≥ 1.23)
		select {
		case <-c.failed:
			return false
		case <-t.C:
		}
		if c.wanting.Load() != 0 {
			continue // a waiter wants it: it gives the role back later
		}
		select {
		case <-c.role:
			return true
		default: // a waiter holds the role: it gives it back later
		}
	}
}
