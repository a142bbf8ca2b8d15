package herder

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"
)

// tailReader follows manually assigned partitions of one topic from the
// beginning for the life of the worker, handing every event of its
// consumer to handle on one goroutine. It also watches its own progress:
// when a partition's end offset, asked of another client, stays ahead of
// what has been read for stallAfter without the reader moving, the
// consumer is replaced by a new one that resumes where the old one was.
//
// Why: after a broker restart a librdkafka consumer of manually assigned
// partitions can stay connected yet never fetch again. The 30-minute
// chaos soak caught one worker's status-topic reader frozen that way for
// 68 s (until the worker was killed): its REST API kept reporting tasks
// RUNNING on a worker that had died and been replaced, and a frozen
// reader on the leader would withhold revocations and fencing just as
// long. Reading from a stuck consumer is never correct, so it is
// replaced rather than waited on.
type tailReader struct {
	log   *slog.Logger
	topic string
	// newConsumer creates a consumer configured for this topic (its logs
	// already drained).
	newConsumer func() (*kafka.Consumer, error)
	// endOffset is where a caught-up reader would be; it must not ask the
	// reader's own consumer, which may be the stuck part.
	endOffset func(partition int32) (int64, error)
	// handle receives every polled event, nil for a quiet poll, on the
	// poll goroutine only.
	handle     func(ev kafka.Event)
	checkEvery time.Duration
	stallAfter time.Duration

	mu       sync.Mutex
	consumer *kafka.Consumer
	// users counts the calls on consumer made from outside the poll loop
	// (withConsumer); a consumer is closed only once its calls are done,
	// so none is in flight on a client being destroyed. closed: close has
	// begun, no new call starts.
	users     *sync.WaitGroup
	closed    bool
	positions map[int32]int64 // next offset to read, per partition seen
	parts     []int32

	stall    chan struct{}
	replaced atomic.Int64
	running  bool
	pollDone chan struct{}
	watchEnd chan struct{}
	closers  sync.WaitGroup
}

func newTailReader(log *slog.Logger, topic string, newConsumer func() (*kafka.Consumer, error),
	endOffset func(int32) (int64, error), stallAfter time.Duration) (*tailReader, error) {
	c, err := newConsumer()
	if err != nil {
		return nil, err
	}
	return &tailReader{
		log:         log,
		topic:       topic,
		newConsumer: newConsumer,
		endOffset:   endOffset,
		checkEvery:  time.Second,
		stallAfter:  stallAfter,
		consumer:    c,
		users:       new(sync.WaitGroup),
		positions:   map[int32]int64{},
		stall:       make(chan struct{}, 1),
		pollDone:    make(chan struct{}),
		watchEnd:    make(chan struct{}),
	}, nil
}

// current is the consumer in use now.
func (r *tailReader) current() *kafka.Consumer {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.consumer
}

// withConsumer runs fn on the current consumer, which is not closed
// before fn returns.
func (r *tailReader) withConsumer(fn func(c *kafka.Consumer) error) error {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return fmt.Errorf("topic %s: the reader is closed", r.topic)
	}
	c, users := r.consumer, r.users
	users.Add(1)
	r.mu.Unlock()
	defer users.Done()
	return fn(c)
}

// start assigns parts from their beginning and reads until ctx ends.
func (r *tailReader) start(ctx context.Context, parts []int32, handle func(kafka.Event)) error {
	r.parts, r.handle = parts, handle
	if err := r.consumer.Assign(r.assignment()); err != nil {
		return err
	}
	r.running = true
	go r.watch(ctx)
	go func() {
		defer close(r.pollDone)
		for ctx.Err() == nil {
			select {
			case <-r.stall:
				r.replace()
			default:
			}
			ev := r.current().Poll(100)
			r.track(ev)
			r.handle(ev)
		}
	}()
	return nil
}

// assignment lists the partitions at the positions reached (the beginning
// for those not read yet).
func (r *tailReader) assignment() []kafka.TopicPartition {
	r.mu.Lock()
	defer r.mu.Unlock()
	tps := make([]kafka.TopicPartition, len(r.parts))
	for i, p := range r.parts {
		off := kafka.OffsetBeginning
		if pos, ok := r.positions[p]; ok {
			off = kafka.Offset(pos)
		}
		tps[i] = kafka.TopicPartition{Topic: &r.topic, Partition: p, Offset: off}
	}
	return tps
}

func (r *tailReader) track(ev kafka.Event) {
	var p int32
	var next int64
	switch e := ev.(type) {
	case *kafka.Message:
		p, next = e.TopicPartition.Partition, int64(e.TopicPartition.Offset)+1
	case kafka.PartitionEOF:
		p, next = e.Partition, int64(e.Offset)
	default:
		return
	}
	r.mu.Lock()
	if cur, ok := r.positions[p]; !ok || next > cur {
		r.positions[p] = next
	}
	r.mu.Unlock()
}

func (r *tailReader) position(p int32) (int64, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	pos, ok := r.positions[p]
	return pos, ok
}

// watch signals the poll loop when some partition has had unread records
// for stallAfter while the reader did not move.
func (r *tailReader) watch(ctx context.Context) {
	defer close(r.watchEnd)
	t := time.NewTicker(r.checkEvery)
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
		now := time.Now()
		stalled := false
		for _, p := range r.parts {
			end, err := r.endOffset(p)
			if err != nil {
				// The broker is away: nothing to judge by.
				delete(behind, p)
				continue
			}
			pos, _ := r.position(p)
			if pos >= end {
				delete(behind, p)
				continue
			}
			if l, ok := behind[p]; !ok || l.at != pos {
				behind[p] = lag{since: now, at: pos}
				continue
			}
			if now.Sub(behind[p].since) >= r.stallAfter {
				r.log.Warn("topic reader made no progress; replacing its consumer",
					"topic", r.topic, "partition", p, "read_to", pos, "end", end, "stalled_for", now.Sub(behind[p].since).Round(time.Millisecond))
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

// replace swaps in a new consumer at the positions reached (poll
// goroutine only). The old one is closed in the background: a consumer
// that stopped fetching may also be slow to close.
func (r *tailReader) replace() {
	c, err := r.newConsumer()
	if err != nil {
		r.log.Error("could not create a replacement topic reader; keeping the old one", "topic", r.topic, "err", err)
		return
	}
	if err := c.Assign(r.assignment()); err != nil {
		r.log.Error("could not assign the replacement topic reader; keeping the old one", "topic", r.topic, "err", err)
		c.Close()
		return
	}
	r.mu.Lock()
	old, oldUsers := r.consumer, r.users
	r.consumer, r.users = c, new(sync.WaitGroup)
	r.mu.Unlock()
	r.replaced.Add(1)
	r.closers.Add(1)
	go func() {
		defer r.closers.Done()
		oldUsers.Wait()
		old.Close()
	}()
}

// close stops reading (start's ctx must be done) and closes the consumers,
// waiting at most 10 s for replaced ones.
func (r *tailReader) close() {
	if r.running {
		<-r.pollDone
		<-r.watchEnd
	}
	r.mu.Lock()
	r.closed = true
	users := r.users
	r.mu.Unlock()
	users.Wait()
	r.current().Close()
	done := make(chan struct{})
	go func() {
		r.closers.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		r.log.Warn("a replaced topic reader did not close in time", "topic", r.topic)
	}
}
