package compacted

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"github.com/connectd/connectd/internal/kafkalog"
)

// End says which offset ReadToEnd waits for.
type End int

const (
	// HighWatermark: every record written to the partition before the
	// call, including those of transactions still open then (ReadToEnd
	// waits for them to end). A committed record that follows another
	// producer's open transaction is never missed.
	HighWatermark End = iota
	// LastStable: what a read_committed reader can reach at the call; a
	// transaction open then is not waited for, nor records written after
	// it began.
	LastStable
)

// Record is one record of the topic. A nil Value is a tombstone.
type Record struct {
	Partition int32
	Offset    int64
	Key       []byte
	Value     []byte
}

// Batch is what a Handler receives: records in offset order per partition,
// and the positions reached after them (the next offset to read, for each
// partition whose position moved). Positions can move without records,
// over transaction markers and aborted records.
type Batch struct {
	Records   []Record
	Positions map[int32]int64
}

// Handler applies a batch. It runs on the reader's poll goroutine only; a
// ReadToEnd waiting for the batch's positions returns only after the
// handler has returned.
type Handler func(Batch)

// Opts configures a Reader.
type Opts struct {
	// Topic is the topic to read.
	Topic string
	// Client holds the consumer's librdkafka properties: bootstrap.servers
	// and any security settings, client.id. The Reader sets the
	// properties that make it a reader of a compacted topic on top.
	Client kafka.ConfigMap
	// GroupID is the group.id librdkafka requires even for manual
	// assignment; the Reader never joins the group or commits under it.
	// Default "connectd-compacted-reader".
	GroupID string
	// End is what ReadToEnd waits for (default HighWatermark).
	End End
	// Watermarks, when set, is the connection that answers end-offset
	// queries (typically the writer's producer of the same topic); it
	// must outlive the Reader. Nil: an admin client on the Reader's own
	// consumer answers, which rules out StallAfter.
	Watermarks *kafka.Producer
	// StallAfter, when > 0, is how long a partition may stay behind its
	// high watermark without the reader moving before the consumer is
	// replaced by a new one that resumes at the positions reached.
	StallAfter time.Duration
	// Logger receives the reader's warnings and librdkafka's log lines
	// (default slog.Default()).
	Logger *slog.Logger
	// OnEndQuery, when set, is called before each end-offset query that
	// ReadToEnd makes (each is a broker round trip).
	OnEndQuery func()
}

// Errors callers branch on.
var (
	// ErrTopicMissing: the topic does not exist (Start).
	ErrTopicMissing = errors.New("topic does not exist")
	// ErrClosed: the Reader was closed.
	ErrClosed = errors.New("reader is closed")
	// ErrNotStarted: ReadToEnd was called before Start.
	ErrNotStarted = errors.New("reader is not started")
	// ErrStopped: Start's context ended, so the reader reads no more.
	ErrStopped = errors.New("reader stopped: its context ended")
)

// BehindError is ReadToEnd's error when its context ended before every
// partition was read to its end. It unwraps to the context's error.
type BehindError struct {
	Topic string
	// Behind lists the partitions not read to their end, in order.
	Behind []int32
	// At and End are the positions reached and the ends waited for.
	At, End map[int32]int64
	Err     error
}

func (e *BehindError) Error() string {
	return fmt.Sprintf("topic %q: partitions %v not read to their end (at %v, end %v): %v", e.Topic, e.Behind, e.At, e.End, e.Err)
}

func (e *BehindError) Unwrap() error { return e.Err }

// maxBatch bounds the records handed to the handler at once, so that a
// long backlog is published in steps rather than at its end.
const maxBatch = 500

// Reader reads one compacted topic from the beginning and follows it.
// Create it with New, then Start it once; Close releases it.
type Reader struct {
	o     Opts
	log   *slog.Logger
	admin *kafka.AdminClient
	// end-offset queries in flight, so Close does not destroy the admin
	// client under one.
	queries sync.WaitGroup
	// closing ends in-flight queries and the loops when Close begins.
	closing context.Context
	stop    context.CancelFunc

	parts    []int32
	failFast bool // a one-shot Read: a read error ends ReadToEnd
	stall    chan struct{}
	replaced atomic.Int64

	mu        sync.Mutex
	consumer  *kafka.Consumer
	positions map[int32]int64 // next offset to read, handled already
	changed   chan struct{}   // closed at the next publish
	failed    error
	started   bool
	stopped   bool // the poll loop ended
	closed    bool

	loops   sync.WaitGroup // poll and watch goroutines
	closers sync.WaitGroup // replaced consumers being closed
	logs    sync.WaitGroup // librdkafka log forwarders
}

// New creates the Reader's consumer; it does not contact the broker.
func New(o Opts) (*Reader, error) {
	if o.Topic == "" {
		return nil, errors.New("compacted: empty topic name")
	}
	if s, _ := o.Client["bootstrap.servers"].(string); s == "" {
		return nil, fmt.Errorf("compacted: topic %q: Client has no bootstrap.servers", o.Topic)
	}
	if o.StallAfter > 0 && o.Watermarks == nil {
		// The stall watch must not ask the consumer it judges: it may be
		// the stuck part, and it is replaced.
		return nil, fmt.Errorf("compacted: topic %q: StallAfter needs Watermarks", o.Topic)
	}
	if o.GroupID == "" {
		o.GroupID = "connectd-compacted-reader"
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	closing, stop := context.WithCancel(context.Background())
	r := &Reader{
		o:         o,
		log:       o.Logger,
		closing:   closing,
		stop:      stop,
		stall:     make(chan struct{}, 1),
		positions: map[int32]int64{},
		changed:   make(chan struct{}),
	}
	c, err := r.newConsumer()
	if err != nil {
		stop()
		return nil, err
	}
	if o.Watermarks != nil {
		r.admin, err = kafka.NewAdminClientFromProducer(o.Watermarks)
	} else {
		r.admin, err = kafka.NewAdminClientFromConsumer(c)
	}
	if err != nil {
		c.Close()
		r.logs.Wait()
		stop()
		return nil, fmt.Errorf("compacted: topic %q: admin client: %w", o.Topic, err)
	}
	r.consumer = c
	return r, nil
}

// newConsumer creates a consumer with the reader's settings.
func (r *Reader) newConsumer() (*kafka.Consumer, error) {
	cm := kafka.ConfigMap{}
	maps.Copy(cm, r.o.Client)
	maps.Copy(cm, kafka.ConfigMap{
		"group.id":                 r.o.GroupID,
		"isolation.level":          "read_committed",
		"enable.auto.commit":       false,
		"enable.auto.offset.store": false,
		// PartitionEOF moves the position of an idle partition to its
		// end even when markers, not records, come last.
		"enable.partition.eof": true,
		"auto.offset.reset":    "earliest",
		// Records written by other workers should be seen at once: a
		// fetch at the end returns after 50 ms, not librdkafka's 500.
		"fetch.wait.max.ms": 50,
	})
	kafkalog.Enable(cm)
	c, err := kafka.NewConsumer(&cm)
	if err != nil {
		return nil, fmt.Errorf("topic %q reader: %w", r.o.Topic, err)
	}
	done := kafkalog.Forward(r.log, c.Logs())
	r.logs.Add(1)
	go func() {
		defer r.logs.Done()
		<-done
	}()
	return c, nil
}

// current is the consumer in use now.
func (r *Reader) current() *kafka.Consumer {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.consumer
}

// Partitions lists the partitions Start assigned.
func (r *Reader) Partitions() []int32 { return slices.Clone(r.parts) }

// Replacements counts the consumers replaced because they stopped
// fetching.
func (r *Reader) Replacements() int64 { return r.replaced.Load() }

// Start looks up the topic's partitions (bounded by ctx, at most 10 s),
// assigns them from the beginning and reads until ctx ends or Close,
// handing batches to h. The lookup fails with ErrTopicMissing when the
// topic does not exist.
func (r *Reader) Start(ctx context.Context, h Handler) error {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return ErrClosed
	}
	if r.started {
		r.mu.Unlock()
		return fmt.Errorf("topic %q: reader already started", r.o.Topic)
	}
	r.mu.Unlock()
	parts, err := r.lookup(ctx)
	if err != nil {
		return err
	}
	return r.begin(ctx, parts, h)
}

// begin assigns parts from the beginning and starts reading.
func (r *Reader) begin(ctx context.Context, parts []int32, h Handler) error {
	r.parts = parts
	if err := r.consumer.Assign(r.assignment(nil)); err != nil {
		return fmt.Errorf("topic %q: assign: %w", r.o.Topic, err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return ErrClosed
	}
	r.started = true
	ctx, cancel := context.WithCancel(ctx)
	context.AfterFunc(r.closing, cancel)
	r.loops.Add(1)
	go func() {
		defer r.loops.Done()
		defer cancel()
		r.poll(ctx, h)
		r.mu.Lock()
		r.stopped = true
		r.notifyLocked()
		r.mu.Unlock()
	}()
	if r.o.StallAfter > 0 {
		r.loops.Add(1)
		go func() {
			defer r.loops.Done()
			r.watch(ctx)
		}()
	}
	return nil
}

func (r *Reader) lookup(ctx context.Context) ([]int32, error) {
	topic := r.o.Topic
	md, err := r.consumer.GetMetadata(&topic, false, timeoutMs(ctx, 10000))
	if err != nil {
		return nil, fmt.Errorf("topic %q: metadata: %w", topic, err)
	}
	tm, ok := md.Topics[topic]
	if code := tm.Error.Code(); !ok || len(tm.Partitions) == 0 || code == kafka.ErrUnknownTopicOrPart || code == kafka.ErrUnknownTopic {
		return nil, fmt.Errorf("topic %q: %w", topic, ErrTopicMissing)
	}
	if tm.Error.Code() != kafka.ErrNoError {
		return nil, fmt.Errorf("topic %q: metadata: %w", topic, tm.Error)
	}
	parts := make([]int32, len(tm.Partitions))
	for i, p := range tm.Partitions {
		parts[i] = p.ID
	}
	slices.Sort(parts)
	return parts, nil
}

// assignment lists the partitions at the positions in reached (the
// beginning for those not read yet).
func (r *Reader) assignment(reached map[int32]int64) []kafka.TopicPartition {
	tps := make([]kafka.TopicPartition, len(r.parts))
	for i, p := range r.parts {
		off := kafka.OffsetBeginning
		if pos, ok := reached[p]; ok {
			off = kafka.Offset(pos)
		}
		tps[i] = kafka.TopicPartition{Topic: &r.o.Topic, Partition: p, Offset: off}
	}
	return tps
}

// poll reads until ctx ends, handing batches to h and publishing the
// positions they reach.
func (r *Reader) poll(ctx context.Context, h Handler) {
	reached := map[int32]int64{} // what was handled, as published
	var b Batch
	moved := map[int32]int64{} // positions of b
	advance := func(p int32, next int64) {
		if cur, ok := moved[p]; ok && next <= cur {
			return
		}
		if cur, ok := reached[p]; ok && next <= cur {
			return
		}
		moved[p] = next
	}
	flush := func() {
		if len(b.Records) == 0 && len(moved) == 0 {
			return
		}
		b.Positions = moved
		h(b)
		maps.Copy(reached, moved)
		r.publish(moved)
		b, moved = Batch{}, map[int32]int64{}
	}
	polls := 0
	wait := 100 // ms
	for ctx.Err() == nil {
		select {
		case <-r.stall:
			flush()
			r.replace(reached)
		default:
		}
		c := r.current()
		ev := c.Poll(wait)
		wait = 100
		polls++
		switch e := ev.(type) {
		case *kafka.Message:
			if err := e.TopicPartition.Error; err != nil {
				r.readFailed(fmt.Errorf("topic %q partition %d: consume: %w", r.o.Topic, e.TopicPartition.Partition, err))
				break
			}
			p, off := e.TopicPartition.Partition, int64(e.TopicPartition.Offset)
			b.Records = append(b.Records, Record{Partition: p, Offset: off, Key: e.Key, Value: e.Value})
			advance(p, off+1)
			// Keep collecting while records are immediately available.
			// The first poll that finds none reads the position, which
			// by then has passed a transaction marker right behind these
			// records: a reader of a transactional topic is at its end
			// at once, not after the next empty fetch (fetch.wait.max.ms)
			// or poll timeout.
			if len(b.Records) < maxBatch && polls%1000 != 0 {
				wait = 0
				continue
			}
		case kafka.PartitionEOF:
			advance(e.Partition, int64(e.Offset))
		case kafka.Error:
			r.log.Warn("topic reader error", "topic", r.o.Topic, "err", e)
			if e.IsFatal() {
				r.readFailed(fmt.Errorf("topic %q: consume: %w", r.o.Topic, e))
			}
		}
		// The position passes transaction markers and aborted records,
		// which PartitionEOF reports only once a fetch comes back empty:
		// never on a topic other producers keep committing to. A poll
		// that returns nothing (at once after records, or after its
		// timeout) is when to read it.
		if ev == nil || polls%1000 == 0 {
			r.positionsOf(c, advance)
		}
		flush()
	}
}

// positionsOf advances to the consumer's positions.
func (r *Reader) positionsOf(c *kafka.Consumer, advance func(int32, int64)) {
	tps := make([]kafka.TopicPartition, len(r.parts))
	for i, p := range r.parts {
		tps[i] = kafka.TopicPartition{Topic: &r.o.Topic, Partition: p}
	}
	pos, err := c.Position(tps)
	if err != nil {
		r.readFailed(fmt.Errorf("topic %q: position: %w", r.o.Topic, err))
		return
	}
	for _, tp := range pos {
		if tp.Offset >= 0 {
			advance(tp.Partition, int64(tp.Offset))
		}
	}
}

// readFailed reports an error the consumer returned. A one-shot Read ends
// with it; a following reader logs it and goes on, as librdkafka retries.
func (r *Reader) readFailed(err error) {
	if !r.failFast {
		r.log.Warn("topic reader error", "topic", r.o.Topic, "err", err)
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.failed == nil {
		r.failed = err
		r.notifyLocked()
	}
}

func (r *Reader) publish(moved map[int32]int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	maps.Copy(r.positions, moved)
	r.notifyLocked()
}

func (r *Reader) notifyLocked() {
	close(r.changed)
	r.changed = make(chan struct{})
}

// ReadToEnd waits until every partition has been read, and its records
// handed to the handler, up to the end it has when ReadToEnd is called
// (Opts.End says which end). It fails with a *BehindError when ctx ends
// first, with ErrClosed when the Reader is closed and with ErrStopped when
// Start's context ended.
func (r *Reader) ReadToEnd(ctx context.Context) error {
	r.mu.Lock()
	started, closed := r.started, r.closed
	r.mu.Unlock()
	switch {
	case closed:
		return fmt.Errorf("topic %q: %w", r.o.Topic, ErrClosed)
	case !started:
		return fmt.Errorf("topic %q: %w", r.o.Topic, ErrNotStarted)
	}
	ends, err := r.endsNow(ctx)
	if err != nil {
		return err
	}
	return r.waitFor(ctx, ends)
}

// endsNow asks where every partition ends now (Opts.End).
func (r *Reader) endsNow(ctx context.Context) (map[int32]int64, error) {
	iso := kafka.IsolationLevelReadUncommitted
	if r.o.End == LastStable {
		iso = kafka.IsolationLevelReadCommitted
	}
	return r.ends(ctx, iso, true)
}

// waitFor waits until every partition has been read up to ends.
func (r *Reader) waitFor(ctx context.Context, ends map[int32]int64) error {
	for {
		r.mu.Lock()
		ch, failed, closed, stopped := r.changed, r.failed, r.closed, r.stopped
		var behind []int32
		for _, p := range r.parts {
			if r.positions[p] < ends[p] {
				behind = append(behind, p)
			}
		}
		at := maps.Clone(r.positions)
		r.mu.Unlock()
		switch {
		case failed != nil:
			return failed
		case len(behind) == 0:
			return nil
		case closed:
			return fmt.Errorf("topic %q: %w", r.o.Topic, ErrClosed)
		case stopped:
			return fmt.Errorf("topic %q: %w", r.o.Topic, ErrStopped)
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return &BehindError{Topic: r.o.Topic, Behind: behind, At: at, End: ends, Err: ctx.Err()}
		}
	}
}

// Close stops reading, ends the end-offset queries in flight and closes
// the consumer, waiting at most 10 s for replaced ones to close. It may be
// called more than once.
func (r *Reader) Close() {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return
	}
	r.closed = true
	r.notifyLocked()
	r.mu.Unlock()
	r.stop()
	r.loops.Wait()
	r.queries.Wait()
	// A derived admin client owns no connection; closing it first keeps
	// it from outliving the handle it uses.
	r.admin.Close()
	r.current().Close()
	done := make(chan struct{})
	go func() {
		r.closers.Wait()
		r.logs.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		r.log.Warn("a replaced topic reader did not close in time", "topic", r.o.Topic)
	}
}

// Read reads topic o.Topic once from the beginning to the end it has when
// Read is called (Opts.End), handing batches to h, and closes. Unlike a
// following reader it fails at the first error the consumer returns. ctx
// bounds it; StallAfter is ignored.
func Read(ctx context.Context, o Opts, h Handler) error {
	o.StallAfter = 0
	r, err := New(o)
	if err != nil {
		return err
	}
	defer r.Close()
	r.failFast = true
	if r.parts, err = r.lookup(ctx); err != nil {
		return err
	}
	ends, err := r.endsNow(ctx)
	if err != nil {
		return err
	}
	// Only partitions with records are assigned: an empty one has
	// nothing to deliver, and a read of a topic with none assigns nothing
	// (so there are no fetchers to stop).
	var parts []int32
	for _, p := range r.parts {
		if ends[p] > 0 {
			parts = append(parts, p)
		}
	}
	if len(parts) == 0 {
		return nil
	}
	if err := r.begin(ctx, parts, h); err != nil {
		return err
	}
	return r.waitFor(ctx, ends)
}
