package compacted

import (
	"context"
	"maps"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"
)

// checkEvery is how often the stall watch compares the positions with the
// high watermarks.
const checkEvery = time.Second

// watch signals the poll loop when some partition has had unread records
// for StallAfter while the reader did not move.
//
// Why: after a broker restart a librdkafka consumer of manually assigned
// partitions can stay connected yet never fetch again. The 30-minute
// chaos soak caught one worker's status-topic reader frozen that way for
// 68 s (until the worker was killed): its REST API kept reporting tasks
// RUNNING on a worker that had died and been replaced, and a frozen
// reader on the leader would withhold revocations and fencing just as
// long. Reading from a stuck consumer is never correct, so it is
// replaced rather than waited on.
func (r *Reader) watch(ctx context.Context) {
	t := time.NewTicker(checkEvery)
	defer t.Stop()
	type lag struct {
		since time.Time
		at    int64
	}
	behind := map[int32]lag{}
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		qctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		ends, err := r.ends(qctx, kafka.IsolationLevelReadUncommitted, false)
		cancel()
		if err != nil {
			// The broker is away: nothing to judge by.
			clear(behind)
			continue
		}
		now := time.Now()
		r.mu.Lock()
		at := maps.Clone(r.positions)
		r.mu.Unlock()
		stalled := false
		for _, p := range r.parts {
			pos, end := at[p], ends[p]
			if pos >= end {
				delete(behind, p)
				continue
			}
			if l, ok := behind[p]; !ok || l.at != pos {
				behind[p] = lag{since: now, at: pos}
				continue
			}
			if d := now.Sub(behind[p].since); d >= r.o.StallAfter {
				r.log.Warn("topic reader made no progress; replacing its consumer",
					"topic", r.o.Topic, "partition", p, "read_to", pos, "end", end, "stalled_for", d.Round(time.Millisecond))
				stalled = true
			}
		}
		if stalled {
			clear(behind)
			select {
			case r.stall <- struct{}{}:
			default:
			}
		}
	}
}

// replace swaps in a new consumer at the positions reached (poll goroutine
// only). The old one is closed in the background: a consumer that stopped
// fetching may also be slow to close.
func (r *Reader) replace(reached map[int32]int64) {
	c, err := r.newConsumer()
	if err != nil {
		r.log.Error("could not create a replacement topic reader; keeping the old one", "topic", r.o.Topic, "err", err)
		return
	}
	if err := c.Assign(r.assignment(reached)); err != nil {
		r.log.Error("could not assign the replacement topic reader; keeping the old one", "topic", r.o.Topic, "err", err)
		c.Close()
		return
	}
	r.mu.Lock()
	old := r.consumer
	r.consumer = c
	r.mu.Unlock()
	r.replaced.Add(1)
	r.closers.Add(1)
	go func() {
		defer r.closers.Done()
		old.Close()
	}()
}
