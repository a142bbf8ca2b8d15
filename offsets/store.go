package offsets

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"github.com/connectd/connectd/internal/kafkalog"
)

// Config configures a Store.
type Config struct {
	// Topic is the offsets topic: the worker's offset.storage.topic or a
	// connector's offsets.storage.topic.
	Topic string
	// Client holds the librdkafka properties of the clients the Store
	// creates: bootstrap.servers and any security settings.
	Client map[string]string
	// ReadTimeout bounds reading the topic to its end (default 60 s). An
	// open transaction of another producer holds read_committed reads back
	// until it ends, at worst transaction.timeout.ms.
	ReadTimeout time.Duration
	// Logger receives warnings about malformed records (default
	// slog.Default()).
	Logger *slog.Logger
}

// Store reads and changes source offsets on one offsets topic. It holds no
// connections between calls and is safe for concurrent use.
type Store struct {
	cfg Config
}

// NewStore returns a Store for cfg.Topic.
func NewStore(cfg Config) (*Store, error) {
	if cfg.Topic == "" {
		return nil, errors.New("offsets: empty topic name")
	}
	if cfg.Client["bootstrap.servers"] == "" {
		return nil, errors.New("offsets: Client has no bootstrap.servers")
	}
	if cfg.ReadTimeout <= 0 {
		cfg.ReadTimeout = 60 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	cfg.Logger = cfg.Logger.With("offsets_topic", cfg.Topic)
	return &Store{cfg: cfg}, nil
}

// Topic is the offsets topic the Store uses.
func (s *Store) Topic() string { return s.cfg.Topic }

// Message builds the offsets-topic record for one source partition of a
// connector; a nil o.Offset builds a tombstone. The task runners produce it
// with the task's producer (inside the task's transaction in exactly-once
// mode).
func Message(topic, connector string, o Offset) (*kafka.Message, error) {
	key, err := Key(connector, o.Partition)
	if err != nil {
		return nil, err
	}
	var value []byte
	if o.Offset != nil {
		if value, err = Canonical(o.Offset); err != nil {
			return nil, fmt.Errorf("source offset: %w", err)
		}
	}
	return &kafka.Message{
		TopicPartition: kafka.TopicPartition{Topic: &topic, Partition: kafka.PartitionAny},
		Key:            key,
		Value:          value,
	}, nil
}

// Read returns the committed offsets of one connector, read with
// isolation.level=read_committed from the beginning of the topic to the
// end it had when Read started. Partitions are canonical JSON; the result
// is sorted by partition.
func (s *Store) Read(ctx context.Context, connector string) ([]Offset, error) {
	all, err := s.read(ctx, func(c string) bool { return c == connector })
	if err != nil {
		return nil, err
	}
	return all[connector], nil
}

// ReadAll returns the committed offsets of every connector on the topic.
func (s *Store) ReadAll(ctx context.Context) (map[string][]Offset, error) {
	return s.read(ctx, func(string) bool { return true })
}

func (s *Store) read(ctx context.Context, want func(connector string) bool) (map[string][]Offset, error) {
	latest := map[string]map[string][]byte{} // connector → partition → offset
	err := s.scan(ctx, func(m *kafka.Message) {
		conn, part, err := ParseKey(m.Key)
		if err != nil {
			s.cfg.Logger.Warn("skipping offsets record with a malformed key",
				"partition", m.TopicPartition.Partition, "offset", int64(m.TopicPartition.Offset), "error", err)
			return
		}
		if !want(conn) {
			return
		}
		byPart := latest[conn]
		if byPart == nil {
			byPart = map[string][]byte{}
			latest[conn] = byPart
		}
		if len(m.Value) == 0 {
			delete(byPart, string(part))
			return
		}
		val, err := Canonical(m.Value)
		if err != nil {
			s.cfg.Logger.Warn("skipping offsets record with a malformed value",
				"connector", conn, "partition", m.TopicPartition.Partition, "offset", int64(m.TopicPartition.Offset), "error", err)
			return
		}
		byPart[string(part)] = val
	})
	if err != nil {
		return nil, err
	}
	out := make(map[string][]Offset, len(latest))
	for conn, byPart := range latest {
		if len(byPart) == 0 {
			continue
		}
		list := make([]Offset, 0, len(byPart))
		for p, o := range byPart {
			list = append(list, Offset{Partition: []byte(p), Offset: o})
		}
		sort.Slice(list, func(i, j int) bool { return bytes.Compare(list[i].Partition, list[j].Partition) < 0 })
		out[conn] = list
	}
	return out, nil
}

// scan calls fn for every committed record of the topic, in order per
// partition, up to the high watermarks sampled at the start. With
// read_committed the consumer stops at the last stable offset, so the scan
// waits for open transactions that started before the sample to end: a
// committed record written just before the sample is never missed.
func (s *Store) scan(ctx context.Context, fn func(*kafka.Message)) error {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.ReadTimeout)
	defer cancel()
	cm := kafka.ConfigMap{}
	for k, v := range s.cfg.Client {
		cm[k] = v
	}
	cm["group.id"] = "connectd-offsets-reader" // librdkafka wants one; never joined or committed
	cm["enable.auto.commit"] = false
	cm["enable.auto.offset.store"] = false
	cm["isolation.level"] = "read_committed"
	cm["enable.partition.eof"] = true
	cm["auto.offset.reset"] = "earliest"
	c, err := kafkalog.NewConsumer(s.cfg.Logger, cm)
	if err != nil {
		return fmt.Errorf("offsets topic %q: consumer: %w", s.cfg.Topic, err)
	}
	defer c.Close()

	topic := s.cfg.Topic
	md, err := c.GetMetadata(&topic, false, timeoutMs(ctx, 10000))
	if err != nil {
		return fmt.Errorf("offsets topic %q: metadata: %w", topic, err)
	}
	tm, ok := md.Topics[topic]
	if !ok || len(tm.Partitions) == 0 || tm.Error.Code() == kafka.ErrUnknownTopicOrPart {
		return missing(topic)
	}
	// The consumer's own watermark query would return the last stable
	// offset (read_committed), which stops before a committed record that
	// follows another producer's open transaction; the high watermark,
	// asked for read_uncommitted, does not.
	admin, err := kafka.NewAdminClientFromConsumer(c)
	if err != nil {
		return fmt.Errorf("offsets topic %q: admin: %w", topic, err)
	}
	defer admin.Close()
	req := make(map[kafka.TopicPartition]kafka.OffsetSpec, len(tm.Partitions))
	for _, p := range tm.Partitions {
		req[kafka.TopicPartition{Topic: &topic, Partition: p.ID}] = kafka.LatestOffsetSpec
	}
	res, err := highWatermarks(ctx, admin, topic, req)
	if err != nil {
		return err
	}
	target := map[int32]int64{}
	var assign []kafka.TopicPartition
	for tp, info := range res.ResultInfos {
		if info.Offset > 0 {
			target[tp.Partition] = int64(info.Offset)
			assign = append(assign, kafka.TopicPartition{Topic: &topic, Partition: tp.Partition, Offset: kafka.OffsetBeginning})
		}
	}
	if len(assign) == 0 {
		return nil
	}
	if err := c.Assign(assign); err != nil {
		return fmt.Errorf("offsets topic %q: assign: %w", topic, err)
	}
	// The end of a partition is reached when the consumer's position passes
	// the sampled high watermark. Neither the last record (transaction
	// markers follow it) nor PartitionEOF (never emitted while new commits
	// keep arriving, as on a busy offsets topic) can tell on their own;
	// the position moves past markers and aborted records.
	polls := 0
	for len(target) > 0 {
		if ctx.Err() != nil {
			return fmt.Errorf("offsets topic %q: reading to the end (read_committed) did not finish within %v; "+
				"partitions %v are behind, most likely held back by an open transaction of another producer: %w",
				topic, s.cfg.ReadTimeout, keys(target), ctx.Err())
		}
		ev := c.Poll(100)
		switch e := ev.(type) {
		case *kafka.Message:
			if e.TopicPartition.Error != nil {
				return fmt.Errorf("offsets topic %q: consume: %w", topic, e.TopicPartition.Error)
			}
			fn(e)
			p := e.TopicPartition.Partition
			if t, ok := target[p]; ok && int64(e.TopicPartition.Offset)+1 >= t {
				delete(target, p)
			}
		case kafka.PartitionEOF:
			if t, ok := target[e.Partition]; ok && int64(e.Offset) >= t {
				delete(target, e.Partition)
			}
		case kafka.Error:
			if e.IsFatal() {
				return fmt.Errorf("offsets topic %q: consume: %w", topic, e)
			}
		}
		if polls++; ev == nil || polls%1000 == 0 {
			if err := dropReached(c, topic, target); err != nil {
				return err
			}
		}
	}
	return nil
}

// dropReached removes the partitions whose position reached their target.
func dropReached(c *kafka.Consumer, topic string, target map[int32]int64) error {
	tps := make([]kafka.TopicPartition, 0, len(target))
	for p := range target {
		tps = append(tps, kafka.TopicPartition{Topic: &topic, Partition: p})
	}
	pos, err := c.Position(tps)
	if err != nil {
		return fmt.Errorf("offsets topic %q: position: %w", topic, err)
	}
	for _, tp := range pos {
		if tp.Offset >= 0 && int64(tp.Offset) >= target[tp.Partition] {
			delete(target, tp.Partition)
		}
	}
	return nil
}

func keys(m map[int32]int64) []int32 {
	out := make([]int32, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// WriteOptions control Alter and Reset.
type WriteOptions struct {
	// TransactionalID, when set, writes in one transaction with this id
	// (Kafka Connect uses ${group.id}-${connector} when exactly-once source
	// support is enabled), fencing an earlier writer with the same id.
	TransactionalID string
}

// Alter writes offsets for a connector's source partitions; an Offset with
// a nil Offset removes the partition. It validates every entry before
// writing any. The connector's tasks must not be running (the REST layer
// requires the connector to be STOPPED), or they would overwrite the change.
func (s *Store) Alter(ctx context.Context, connector string, offsets []Offset, opts WriteOptions) error {
	msgs := make([]*kafka.Message, 0, len(offsets))
	for i, o := range offsets {
		m, err := Message(s.cfg.Topic, connector, o)
		if err != nil {
			return fmt.Errorf("offset %d: %w", i, err)
		}
		msgs = append(msgs, m)
	}
	return s.write(ctx, msgs, opts)
}

// Reset removes every committed offset of a connector by writing a
// tombstone for each of its source partitions.
func (s *Store) Reset(ctx context.Context, connector string, opts WriteOptions) error {
	current, err := s.Read(ctx, connector)
	if err != nil {
		return err
	}
	tombs := make([]Offset, len(current))
	for i, o := range current {
		tombs[i] = Offset{Partition: o.Partition}
	}
	return s.Alter(ctx, connector, tombs, opts)
}

func (s *Store) write(ctx context.Context, msgs []*kafka.Message, opts WriteOptions) error {
	if len(msgs) == 0 {
		return nil
	}
	cm := kafka.ConfigMap{}
	for k, v := range s.cfg.Client {
		cm[k] = v
	}
	cm["acks"] = "all"
	cm["enable.idempotence"] = true
	// Deliveries come back on a per-call channel and Events() is drained
	// below, so confluent-kafka-go's million-entry channels (24 MiB of Go
	// heap per producer) would only feed the garbage collector.
	cm["go.produce.channel.size"] = 0
	cm["go.events.channel.size"] = 1000
	if opts.TransactionalID != "" {
		cm["transactional.id"] = opts.TransactionalID
	}
	p, err := kafkalog.NewProducer(s.cfg.Logger, cm)
	if err != nil {
		return fmt.Errorf("offsets topic %q: producer: %w", s.cfg.Topic, err)
	}
	defer p.Close()
	go func() {
		for range p.Events() { // drain errors; deliveries use their own channel
		}
	}()
	if opts.TransactionalID != "" {
		if err := p.InitTransactions(ctx); err != nil {
			return fmt.Errorf("offsets topic %q: init transactions (%s): %w", s.cfg.Topic, opts.TransactionalID, err)
		}
		if err := p.BeginTransaction(); err != nil {
			return fmt.Errorf("offsets topic %q: begin transaction: %w", s.cfg.Topic, err)
		}
	}
	done := make(chan kafka.Event, len(msgs))
	for _, m := range msgs {
		if err := p.Produce(m, done); err != nil {
			return fmt.Errorf("offsets topic %q: produce: %w", s.cfg.Topic, err)
		}
	}
	for range msgs {
		select {
		case ev := <-done:
			if m, ok := ev.(*kafka.Message); ok && m.TopicPartition.Error != nil {
				if opts.TransactionalID != "" {
					actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
					_ = p.AbortTransaction(actx)
					cancel()
				}
				return fmt.Errorf("offsets topic %q: write: %w", s.cfg.Topic, m.TopicPartition.Error)
			}
		case <-ctx.Done():
			return fmt.Errorf("offsets topic %q: write: %w", s.cfg.Topic, ctx.Err())
		}
	}
	if opts.TransactionalID != "" {
		if err := p.CommitTransaction(ctx); err != nil {
			return fmt.Errorf("offsets topic %q: commit: %w", s.cfg.Topic, err)
		}
	}
	return nil
}

// highWatermarks lists the partitions' high watermarks, asking again while
// a partition has no leader to answer (just after the topic was created,
// or during a leader election) until ctx ends.
func highWatermarks(ctx context.Context, admin *kafka.AdminClient, topic string, req map[kafka.TopicPartition]kafka.OffsetSpec) (kafka.ListOffsetsResult, error) {
	backoff := 50 * time.Millisecond
	for {
		res, err := admin.ListOffsets(ctx, req, kafka.SetAdminIsolationLevel(kafka.IsolationLevelReadUncommitted))
		if err != nil {
			return res, fmt.Errorf("offsets topic %q: high watermarks: %w", topic, err)
		}
		var failed error // a lasting error if there is one
		retry := true
		for tp, info := range res.ResultInfos {
			code := info.Error.Code()
			if code == kafka.ErrNoError || failed != nil && leaderMoving(code) {
				continue
			}
			failed = fmt.Errorf("offsets topic %q partition %d: high watermark: %w", topic, tp.Partition, info.Error)
			retry = retry && leaderMoving(code)
		}
		if failed == nil {
			return res, nil
		}
		if !retry {
			return res, failed
		}
		select {
		case <-ctx.Done():
			return res, failed
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, time.Second)
	}
}

// leaderMoving reports the partition errors that a leader election
// causes, which clear once it is over.
func leaderMoving(code kafka.ErrorCode) bool {
	switch code {
	case kafka.ErrNotLeaderForPartition, kafka.ErrLeaderNotAvailable, kafka.ErrOffsetNotAvailable,
		kafka.ErrFencedLeaderEpoch, kafka.ErrUnknownLeaderEpoch, kafka.ErrRequestTimedOut:
		return true
	}
	return false
}
