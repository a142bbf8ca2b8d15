package worker

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"github.com/connectd/connectd/framework/sdk"
	"github.com/connectd/connectd/offsets"
	"github.com/connectd/connectd/plugins/host"
)

// Transaction boundaries (transaction.boundary).
const (
	boundaryPoll      = "poll"
	boundaryInterval  = "interval"
	boundaryConnector = "connector"
)

// sourceCredits is how many poll batches the plugin may run ahead of the
// runner: it keeps polling while a transaction commits.
const sourceCredits = 3

// maxAbortRestarts bounds consecutive restarts from committed offsets
// after aborted transactions; beyond it the task fails (and the
// supervisor's backoff takes over).
const maxAbortRestarts = 5

// sourceRunner runs a source task: exactly-once (records and offsets in
// one transaction per boundary) when the worker has exactly-once source
// support, at-least-once otherwise.
type sourceRunner struct {
	w     *Worker
	t     *taskRuntime
	id    TaskID
	props map[string]string // connector props overlaid with task props: what the plugin gets

	boundary string
	interval time.Duration

	offsetsTopic    string
	offsetsParts    int // expected partitions; 0 = not checked
	policy          errorPolicy
	eh              *errorHandler
	maxMessageBytes int
	creator         *topicCreator // makes sure the target topics exist
}

func newSourceRunner(w *Worker, t *taskRuntime) (runner, error) {
	props := clone(t.connProps)
	for k, v := range t.taskProps {
		props[k] = v
	}
	policy, err := parseErrorPolicy(props)
	if err != nil {
		return nil, err
	}
	r := &sourceRunner{w: w, t: t, id: t.id, props: props, policy: policy}
	r.eh = &errorHandler{policy: policy, id: t.id, log: t.log, tm: t.tm}
	r.boundary = props["transaction.boundary"]
	switch r.boundary {
	case "":
		r.boundary = boundaryPoll
	case boundaryPoll, boundaryInterval, boundaryConnector:
	default:
		return nil, &ConfigError{Key: "transaction.boundary", Message: fmt.Sprintf("%q is not one of poll, interval, connector", r.boundary)}
	}
	r.interval = w.cfg.OffsetFlushInterval
	if v := props["transaction.boundary.interval.ms"]; v != "" {
		ms, err := strconv.ParseInt(v, 10, 64)
		if err != nil || ms < 0 {
			return nil, &ConfigError{Key: "transaction.boundary.interval.ms", Message: fmt.Sprintf("%q is not a non-negative number of milliseconds", v)}
		}
		r.interval = time.Duration(ms) * time.Millisecond
	}
	r.offsetsTopic = props["offsets.storage.topic"]
	if r.offsetsTopic == "" {
		r.offsetsTopic, r.offsetsParts = w.cfg.OffsetsTopic, w.cfg.OffsetsPartitions
	}
	if r.offsetsTopic == "" {
		return nil, &ConfigError{Key: "offsets.storage.topic", Message: "no offsets topic: set offset.storage.topic on the worker or offsets.storage.topic on the connector"}
	}
	if r.creator, err = newTopicCreator(w, t); err != nil {
		return nil, err
	}
	return r, nil
}

func (r *sourceRunner) run(ctx context.Context, ctl *taskControl) error {
	if r.w.cfg.ExactlyOnceSource {
		return r.runEOS(ctx, ctl)
	}
	return r.runALO(ctx, ctl)
}

// offsetReader is where a task reads its committed offsets: the worker's
// follower of its own offsets topic, or a one-shot read of a connector's
// offsets.storage.topic.
type offsetReader interface {
	Read(ctx context.Context, connector string) ([]offsets.Offset, error)
}

// prepare checks the offsets topic and the dead-letter topic, and returns
// where the committed offsets are read. The worker's own offsets topic was
// checked when the worker started.
func (r *sourceRunner) prepare(ctx context.Context) (offsetReader, error) {
	own := r.offsetsTopic == r.w.cfg.OffsetsTopic
	if !own {
		if err := r.w.verifyOffsetsTopic(ctx, r.offsetsTopic, r.offsetsParts); err != nil {
			return nil, err
		}
	}
	if r.policy.DLQTopic != "" {
		admin, err := r.w.newAdmin(r.t.connProps)
		if err != nil {
			return nil, err
		}
		defer admin.Close()
		if err := ensureDLQTopic(ctx, admin.AdminClient, r.policy.DLQTopic, r.policy.DLQReplicationFactor); err != nil {
			return nil, err
		}
	}
	if own {
		return r.w.offsetsFollower(ctx)
	}
	return offsets.NewStore(offsets.Config{Topic: r.offsetsTopic, Client: r.w.internalClient(), Logger: r.t.log})
}

// producerConfig is the task producer's configuration: acks=all and
// idempotence always (the records' order per partition must survive
// retries), plus a transactional.id in exactly-once mode.
func (r *sourceRunner) producerConfig(extra map[string]any) (kafka.ConfigMap, error) {
	forced := map[string]any{
		"acks":               "all",
		"enable.idempotence": true,
		"client.id":          fmt.Sprintf("connector-producer-%s-%d", r.id.Connector, r.id.Task),
	}
	for k, v := range extra {
		forced[k] = v
	}
	cm, err := r.w.clientConfig(producerClient, r.t.connProps, forced)
	if err != nil {
		return nil, err
	}
	// Throughput defaults, unless the worker or connector set them.
	if _, ok := cm["linger.ms"]; !ok {
		cm["linger.ms"] = 5
	}
	// confluent-kafka-go's own channels default to a million entries each
	// (Events() and ProduceChannel()): 24 MiB of Go heap per producer at
	// creation. The pages stay untouched, but the garbage collector counts
	// them as live, so every task let the worker keep 24 MiB more garbage
	// before a collection (with the herder's producers, the replication
	// benchmark's worker had 250 MiB "live" and a 500 MiB heap goal).
	// Tasks produce with Produce, never ProduceChannel. Events() shrinks
	// only without delivery reports (exactly-once): with them
	// (at-least-once) a full channel would block librdkafka's poller until
	// the runner drains it.
	defaults := map[string]int{"go.produce.channel.size": 0}
	if dr, ok := cm["go.delivery.reports"].(bool); ok && !dr {
		defaults["go.events.channel.size"] = 10000
	}
	for k, v := range defaults {
		if _, ok := cm[k]; !ok {
			cm[k] = v
		}
	}
	r.maxMessageBytes = 1000000 // librdkafka's default message.max.bytes
	if v, ok := cm["message.max.bytes"]; ok {
		if n, err := strconv.Atoi(fmt.Sprint(v)); err == nil {
			r.maxMessageBytes = n
		}
	}
	return cm, nil
}

// committedOffsets reads what the connector has committed, read_committed.
func (r *sourceRunner) committedOffsets(ctx context.Context, store offsetReader) (*offsetSet, error) {
	list, err := store.Read(ctx, r.id.Connector)
	if err != nil {
		return nil, err
	}
	set := newOffsetSet()
	for _, o := range list {
		if err := set.set(o.Partition, o.Offset); err != nil {
			return nil, err
		}
	}
	return set, nil
}

// offsetSet holds the latest offset per source partition, keyed by the
// partition's canonical JSON, in first-seen order. It also tracks which
// entries changed since takeDirty last returned them.
type offsetSet struct {
	idx   map[string]int
	list  []host.Offset
	dirty []bool
}

func newOffsetSet() *offsetSet { return &offsetSet{idx: map[string]int{}} }

func (s *offsetSet) set(partition, offset []byte) error {
	p, err := offsets.Canonical(partition)
	if err != nil {
		return fmt.Errorf("source partition from the task: %w", err)
	}
	// A copy: offset may point into a poll batch, whose memory is reused
	// once the batch is released.
	offset = bytes.Clone(offset)
	if i, ok := s.idx[string(p)]; ok {
		s.list[i].Offset = offset
		s.dirty[i] = true
		return nil
	}
	s.idx[string(p)] = len(s.list)
	s.list = append(s.list, host.Offset{Partition: p, Offset: offset})
	s.dirty = append(s.dirty, true)
	return nil
}

func (s *offsetSet) merge(list []host.Offset) error {
	for _, o := range list {
		if err := s.set(o.Partition, o.Offset); err != nil {
			return err
		}
	}
	return nil
}

func (s *offsetSet) len() int { return len(s.list) }

func (s *offsetSet) reset() {
	clear(s.idx)
	s.list = s.list[:0]
	s.dirty = s.dirty[:0]
}

// takeDirty calls fn for every entry set since the last takeDirty (or
// markDirty), in first-seen order, and marks those it accepted clean; it
// stops at fn's first error.
func (s *offsetSet) takeDirty(fn func(host.Offset) error) error {
	for i, d := range s.dirty {
		if !d {
			continue
		}
		if err := fn(s.list[i]); err != nil {
			return err
		}
		s.dirty[i] = false
	}
	return nil
}

// markDirty marks every entry as set again (what was written of them is
// gone, e.g. with an aborted transaction).
func (s *offsetSet) markDirty() {
	for i := range s.dirty {
		s.dirty[i] = true
	}
}

func (s *offsetSet) snapshot() []host.Offset {
	out := make([]host.Offset, len(s.list))
	copy(out, s.list)
	return out
}

// fetched is one poll batch, or the task's failure.
type fetched struct {
	b   *host.SourceBatch
	err error
}

// session is one plugin-side incarnation of the source task: the task
// stream, the goroutine that fetches (and prepares) the next batches while
// the runner produces and commits, and the goroutine that reports commits
// to the plugin without holding up the next transaction.
type session struct {
	task    *host.SourceTask
	release func()
	batches chan fetched
	cancel  context.CancelFunc
	fetched chan struct{} // closed when the fetcher ends
	ack     *acker
}

func (r *sourceRunner) startSession(ctx context.Context, committed *offsetSet) (*session, error) {
	p, _, release, err := r.w.acquireProcess(ctx, r.id.Connector, r.props)
	if err != nil {
		return nil, err
	}
	st, err := p.StartSourceTask(ctx, host.SourceTaskStart{
		Connector: r.id.Connector, Task: r.id.Task, Props: r.props, Defaults: r.w.cfg.ConverterDefaults,
		Offsets: committed.snapshot(), Credits: sourceCredits,
	})
	if err != nil {
		release()
		return nil, err
	}
	fctx, cancel := context.WithCancel(context.Background())
	s := &session{
		task: st, release: release, batches: make(chan fetched, 1), cancel: cancel,
		fetched: make(chan struct{}), ack: newAcker(st, r.t.log),
	}
	go s.fetch(fctx)
	go s.ack.run()
	return s, nil
}

func (s *session) fetch(ctx context.Context) {
	defer close(s.fetched)
	for {
		b, err := s.task.Next(ctx)
		var f fetched
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			f.err = err
		} else {
			f = fetched{b: b}
		}
		select {
		case s.batches <- f:
		case <-ctx.Done():
			return
		}
		if err != nil {
			return
		}
	}
}

// messageFor fills m (reused across records: Produce copies what it
// needs, and a slice of messages per batch would be garbage full of
// pointers for the collector to scan) with rec; hdrs is scratch space for
// the headers, returned for reuse.
func messageFor(m *kafka.Message, rec *host.SourceRecord, hdrs []kafka.Header) []kafka.Header {
	*m = kafka.Message{
		TopicPartition: kafka.TopicPartition{Topic: &rec.Topic, Partition: rec.Partition},
		Key:            rec.Key, Value: rec.Value,
	}
	if !rec.Timestamp.IsZero() {
		m.Timestamp, m.TimestampType = rec.Timestamp, kafka.TimestampCreateTime
	}
	if len(rec.Headers) > 0 {
		hdrs = hdrs[:0]
		for _, h := range rec.Headers {
			hdrs = append(hdrs, kafka.Header{Key: h.Key, Value: h.Value})
		}
		m.Headers = hdrs
	}
	return hdrs
}

// close stops the session: the fetcher, then the commit reports (the last
// ones are delivered while ctx allows), then the plugin task.
func (s *session) close(ctx context.Context) error {
	s.cancel()
	<-s.fetched
	s.ack.close(ctx)
	err := s.task.Stop(ctx)
	s.release()
	return err
}

// acker reports committed offsets to the plugin's SourceTask.Commit in
// order, merging what accumulates while a report is in flight, so the
// runner never waits for the plugin after a commit.
type acker struct {
	task    *host.SourceTask
	log     interface{ Warn(string, ...any) }
	mu      sync.Mutex
	pending *offsetSet
	closed  bool
	wake    chan struct{}
	done    chan struct{}
	ctx     context.Context
	cancel  context.CancelFunc
}

func newAcker(task *host.SourceTask, log interface{ Warn(string, ...any) }) *acker {
	ctx, cancel := context.WithCancel(context.Background())
	return &acker{task: task, log: log, pending: newOffsetSet(), wake: make(chan struct{}, 1), done: make(chan struct{}), ctx: ctx, cancel: cancel}
}

func (a *acker) add(list []host.Offset) {
	a.mu.Lock()
	_ = a.pending.merge(list) // already canonical
	a.mu.Unlock()
	select {
	case a.wake <- struct{}{}:
	default:
	}
}

func (a *acker) run() {
	defer close(a.done)
	for {
		a.mu.Lock()
		batch := a.pending.snapshot()
		a.pending.reset()
		closed := a.closed
		a.mu.Unlock()
		if len(batch) > 0 {
			if err := a.task.Commit(a.ctx, batch); err != nil && a.ctx.Err() == nil {
				// The offsets are durable in Kafka; the plugin only misses
				// the news (Kafka Connect logs this too). A dead plugin
				// surfaces through the batch stream.
				a.log.Warn("source task commit callback failed", "error", err)
			}
			continue
		}
		if closed {
			return
		}
		<-a.wake
	}
}

// close delivers what is pending (bounded by ctx) and stops the acker.
func (a *acker) close(ctx context.Context) {
	a.mu.Lock()
	a.closed = true
	a.mu.Unlock()
	select {
	case a.wake <- struct{}{}:
	default:
	}
	select {
	case <-a.done:
	case <-ctx.Done():
		a.cancel()
		<-a.done
	}
	a.cancel()
}

// produce produces one message, waiting while librdkafka's queue is full
// (back-pressure from the broker) until hard ends.
func produce(hard context.Context, p *kafka.Producer, m *kafka.Message) error {
	if t := m.TopicPartition.Topic; t != nil && (len(*t) == 0 || len(*t) > maxTopicNameLen) {
		// confluent-kafka-go panics on a name librdkafka refuses to
		// create a topic handle for (over 512 bytes): a record's topic
		// comes from the connector, so it is refused here, as the broker
		// refuses the other illegal names.
		return fmt.Errorf("%w: %d bytes (Kafka topic names have 1 to %d)", errTopicName, len(*t), maxTopicNameLen)
	}
	wait := 100 * time.Microsecond
	for {
		err := p.Produce(m, nil)
		if err == nil {
			return nil // before errors.As: its target escapes, one allocation per record
		}
		if !isQueueFull(err) {
			return err
		}
		select {
		case <-hard.Done():
			return err
		case <-time.After(wait):
		}
		wait = min(2*wait, 10*time.Millisecond)
	}
}

// maxTopicNameLen is Kafka's limit on topic names.
const maxTopicNameLen = 249

// errTopicName is a record whose topic no Kafka cluster accepts.
var errTopicName = errors.New("illegal topic name")

func isQueueFull(err error) bool {
	var ke kafka.Error
	return errors.As(err, &ke) && ke.Code() == kafka.ErrQueueFull
}

// isTooLarge reports a record above the producer's message.max.bytes.
func isTooLarge(err error) bool {
	var ke kafka.Error
	return errors.As(err, &ke) && ke.Code() == kafka.ErrMsgSizeTooLarge
}

// tooLargeFailure describes a record the producer refused for its size.
// Its dead-letter copy keeps key and headers but not the value, which
// would not fit either.
func (r *sourceRunner) tooLargeFailure(rec *host.SourceRecord, err error) *recordFailure {
	size := len(rec.Key) + len(rec.Value)
	for _, h := range rec.Headers {
		size += len(h.Key) + len(h.Value)
	}
	return &recordFailure{
		Stage: sdk.StageKafkaProduce, Class: "producer",
		Message: fmt.Sprintf("record of %d bytes (key %d, value %d) exceeds the producer's message.max.bytes of %d bytes; "+
			"raise producer.override.message.max.bytes (and the topic's max.message.bytes) or make the record smaller: %v",
			size, len(rec.Key), len(rec.Value), r.maxMessageBytes, err),
		DLQNote: "the value is omitted from this dead-letter record: it is too large to produce",
		Topic:   rec.Topic, Partition: rec.Partition, Offset: -1,
		SourcePartition: rec.SourcePartition, SourceOffset: rec.SourceOffset,
		Key: rec.Key, Headers: rec.Headers, Timestamp: rec.Timestamp,
	}
}

// pluginFailure turns a record the plugin could not convert or transform
// into a recordFailure.
func pluginFailure(f *host.SourceFailure) *recordFailure {
	return &recordFailure{
		Stage: f.Stage, Class: f.Class, Message: f.Message, Trace: f.Trace,
		Topic: f.Topic, Partition: -1, Offset: -1,
		SourcePartition: f.SourcePartition, SourceOffset: f.SourceOffset,
		Key: f.Key, Value: f.Value,
	}
}

// drainEvents consumes a producer's event channel: delivery reports go to
// onDelivery, errors to onError.
func drainEvents(p *kafka.Producer, onDelivery func(*kafka.Message), onError func(kafka.Error)) {
	for ev := range p.Events() {
		switch e := ev.(type) {
		case *kafka.Message:
			onDelivery(e)
		case kafka.Error:
			onError(e)
		}
	}
}
