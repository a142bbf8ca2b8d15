package datachan

import (
	"runtime"
	"time"
)

// Polling before sleeping. A goroutine that waits for a message and finds
// the socket empty would park in the network poller, and its thread would
// sleep until the peer writes. On the virtual machines this runs on, a
// sleeping thread takes tens of microseconds to wake (the peer's write
// pays part of that too), more than a plugin takes to answer a put of a
// hundred records. So a waiter first polls the socket for up to
// Options.SpinWait, yielding its processor between polls, and parks only
// if nothing came.
//
// Waits that are long anyway (a sink writing to a slow store, a source
// with nothing new) would waste the whole spin every time, so a poll that
// comes up empty makes the next waits skip polling: 1, 2, 4 and up to
// maxSpinSkip of them after consecutive misses; a poll that finds its
// message starts over. A worker whose calls take milliseconds thus polls
// in one wait of every 65, once the skips have grown.

// spinWaitFor is the polling a channel does with SpinWait asked for: none
// on a single CPU, where the peer cannot answer while the waiter polls.
func spinWaitFor(asked time.Duration) time.Duration {
	if runtime.NumCPU() < 2 {
		return 0
	}
	return max(asked, 0)
}

// maxSpinSkip bounds the waits that skip polling after polls that found
// nothing.
const maxSpinSkip = 64

// spinRead polls the socket into b for up to Options.SpinWait, for the
// role holder at the start of a frame. ok is false when it did not poll
// or nothing came; the caller then reads normally (and parks). A deadline
// set to wake the role holder (kick) ends the poll with
// os.ErrDeadlineExceeded, as it would end a read.
func (c *Conn) spinRead(b []byte) (n int, err error, ok bool) {
	if c.spinWait <= 0 || c.raw == nil || len(b) == 0 {
		return 0, nil, false
	}
	if c.spinSkip > 0 {
		c.spinSkip--
		return 0, nil, false
	}
	n, again, err := c.raw.tryRead(b)
	if !again {
		return n, err, true // there already: no wait to save
	}
	start := time.Now()
	for time.Since(start) < c.spinWait {
		runtime.Gosched()
		if n, again, err = c.raw.tryRead(b); !again {
			c.spinHits.Add(1)
			c.spinMissRun = 0
			return n, err, true
		}
	}
	c.spinMisses.Add(1)
	if c.spinMissRun < 7 {
		c.spinMissRun++
	}
	c.spinSkip = min(1<<(c.spinMissRun-1), maxSpinSkip)
	return 0, nil, false
}
