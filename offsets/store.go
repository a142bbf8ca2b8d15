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

	"github.com/connectd/connectd/internal/compacted"
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
	err := s.scan(ctx, func(m compacted.Record) { applyRecord(latest, m, want, s.cfg.Logger) })
	if err != nil {
		return nil, err
	}
	out := make(map[string][]Offset, len(latest))
	for conn, byPart := range latest {
		if len(byPart) > 0 {
			out[conn] = sortedOffsets(byPart)
		}
	}
	return out, nil
}

// applyRecord applies one offsets record to latest (connector →
// partition → offset), for the connectors want accepts (all when nil). A
// tombstone removes the partition; malformed records are logged and
// skipped.
func applyRecord(latest map[string]map[string][]byte, m compacted.Record, want func(string) bool, log *slog.Logger) {
	conn, part, err := ParseKey(m.Key)
	if err != nil {
		log.Warn("skipping offsets record with a malformed key",
			"partition", m.Partition, "offset", m.Offset, "error", err)
		return
	}
	if want != nil && !want(conn) {
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
		log.Warn("skipping offsets record with a malformed value",
			"connector", conn, "partition", m.Partition, "offset", m.Offset, "error", err)
		return
	}
	byPart[string(part)] = val
}

// sortedOffsets lists byPart sorted by partition.
func sortedOffsets(byPart map[string][]byte) []Offset {
	if len(byPart) == 0 {
		return nil
	}
	list := make([]Offset, 0, len(byPart))
	for p, o := range byPart {
		list = append(list, Offset{Partition: []byte(p), Offset: o})
	}
	sort.Slice(list, func(i, j int) bool { return bytes.Compare(list[i].Partition, list[j].Partition) < 0 })
	return list
}

// scan calls fn for every committed record of the topic, in order per
// partition, up to the high watermarks as of the call. With read_committed
// the consumer stops at the last stable offset, so the scan waits for
// open transactions that started before the call to end: a committed
// record written just before the call is never missed.
func (s *Store) scan(ctx context.Context, fn func(compacted.Record)) error {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.ReadTimeout)
	defer cancel()
	client := kafka.ConfigMap{}
	for k, v := range s.cfg.Client {
		client[k] = v
	}
	err := compacted.Read(ctx, compacted.Opts{
		Topic:   s.cfg.Topic,
		Client:  client,
		GroupID: "connectd-offsets-reader",
		End:     compacted.HighWatermark,
		Logger:  s.cfg.Logger,
	}, func(b compacted.Batch) {
		for _, r := range b.Records {
			fn(r)
		}
	})
	if err == nil {
		return nil
	}
	return readError(s.cfg, err)
}

// readError explains a failed read of the offsets topic.
func readError(cfg Config, err error) error {
	var behind *compacted.BehindError
	switch {
	case errors.Is(err, compacted.ErrTopicMissing):
		return missing(cfg.Topic)
	case errors.As(err, &behind):
		return fmt.Errorf("offsets topic %q: reading to the end (read_committed) did not finish within %v; "+
			"partitions %v are behind, most likely held back by an open transaction of another producer: %w",
			cfg.Topic, cfg.ReadTimeout, behind.Behind, err)
	}
	return fmt.Errorf("offsets topic %q: %w", cfg.Topic, err)
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
