package herder

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"strings"
	"sync"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"github.com/connectd/connectd/framework/herder/clusterstate"
	"github.com/connectd/connectd/framework/rest/api"
)

// Status is one connector's or task's reported state.
type Status struct {
	State      string
	Trace      string
	WorkerID   string
	Generation int32
}

// statusStore reads the status topic into memory and writes this worker's
// status records. A record only replaces the one in memory when it comes
// from the same worker or carries a generation at least as new (Kafka's
// putSafe rule, applied on both sides), so a zombie worker that still
// believes in an old assignment cannot overwrite the status written by the
// task's new owner.
type statusStore struct {
	log      *slog.Logger
	topic    string
	reader   *tailReader
	producer *kafka.Producer

	mu         sync.RWMutex
	connectors map[string]Status
	tasks      map[api.ConnectorTaskID]Status
	topics     map[string]map[string]topicStatus // connector -> topic -> record
	positions  map[int32]int64                   // next offset per partition
	changed    *broadcast

	wg sync.WaitGroup
}

// statusReaderStallAfter: how long the status-topic reader may sit behind
// the end of a partition without moving before its consumer is replaced
// (see tailReader). Status records are small and unconditional, so a
// healthy reader is never that far behind.
const statusReaderStallAfter = 5 * time.Second

func (h *Herder) newStatusStore() (*statusStore, error) {
	base := h.cfg.GroupID + "-statuses"
	prod, err := kafka.NewProducer(h.producerConfig(base, kafka.ConfigMap{
		"enable.idempotence": true,
		"acks":               "all",
		"linger.ms":          5,
		// Java's default partitioner, so a key lands where Kafka Connect
		// would put it and compaction keeps one record per key.
		"partitioner": "murmur2_random",
	}))
	if err != nil {
		return nil, fmt.Errorf("status topic writer: %w", err)
	}
	s := &statusStore{
		log:        h.log.With("component", "status-store"),
		topic:      h.cfg.StatusTopic,
		producer:   prod,
		connectors: map[string]Status{},
		tasks:      map[api.ConnectorTaskID]Status{},
		topics:     map[string]map[string]topicStatus{},
		positions:  map[int32]int64{},
		changed:    newBroadcast(),
	}
	newConsumer := func() (*kafka.Consumer, error) {
		cons, err := kafka.NewConsumer(h.clientConfig(base+"-reader", kafka.ConfigMap{
			"group.id":                 h.cfg.GroupID + "-status-reader",
			"enable.auto.commit":       false,
			"enable.auto.offset.store": false,
			"enable.partition.eof":     true,
			"auto.offset.reset":        "earliest",
			"fetch.wait.max.ms":        50,
		}))
		if err != nil {
			return nil, fmt.Errorf("status topic reader: %w", err)
		}
		drainLogs(s.log, cons.Logs(), &s.wg)
		return cons, nil
	}
	// The writer's client tells the reader where the end is: status
	// records are not transactional, so its high watermark is what the
	// reader must reach.
	endOffset := func(p int32) (int64, error) {
		_, hi, err := prod.QueryWatermarkOffsets(s.topic, p, 2000)
		return hi, err
	}
	if s.reader, err = newTailReader(s.log, s.topic, newConsumer, endOffset, statusReaderStallAfter); err != nil {
		prod.Close()
		return nil, err
	}
	drainLogs(s.log, prod.Logs(), &s.wg)
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for ev := range prod.Events() {
			if m, ok := ev.(*kafka.Message); ok && m.TopicPartition.Error != nil {
				s.log.Error("status write failed", "key", string(m.Key), "err", m.TopicPartition.Error)
			}
		}
	}()
	return s, nil
}

func (s *statusStore) partitions() ([]int32, error) {
	md, err := s.producer.GetMetadata(&s.topic, false, 10000)
	if err != nil {
		return nil, err
	}
	tm, ok := md.Topics[s.topic]
	if !ok || tm.Error.Code() != kafka.ErrNoError || len(tm.Partitions) == 0 {
		return nil, fmt.Errorf("status topic %s not found: %v", s.topic, tm.Error)
	}
	out := make([]int32, len(tm.Partitions))
	for i, p := range tm.Partitions {
		out[i] = p.ID
	}
	return out, nil
}

func (s *statusStore) run(ctx context.Context) error {
	parts, err := s.partitions()
	if err != nil {
		return fmt.Errorf("status topic %s: %w", s.topic, err)
	}
	dirty := false
	handle := func(ev kafka.Event) {
		switch e := ev.(type) {
		case *kafka.Message:
			s.apply(string(e.Key), e.Value, e.TopicPartition.Partition, int64(e.TopicPartition.Offset))
			dirty = true
			return
		case kafka.PartitionEOF:
			s.mu.Lock()
			if int64(e.Offset) > s.positions[e.Partition] {
				s.positions[e.Partition] = int64(e.Offset)
			}
			s.mu.Unlock()
			dirty = true
		case kafka.Error:
			s.log.Warn("status topic reader error", "err", e)
		}
		if dirty {
			dirty = false
			s.changed.Notify()
		}
	}
	if err := s.reader.start(ctx, parts, handle); err != nil {
		return fmt.Errorf("status topic %s: assign: %w", s.topic, err)
	}
	return nil
}

// readToEnd waits until every partition has been read up to its end as of
// the call.
func (s *statusStore) readToEnd(ctx context.Context) error {
	parts, err := s.partitions()
	if err != nil {
		return err
	}
	ends := map[int32]int64{}
	for _, p := range parts {
		_, hi, err := s.producer.QueryWatermarkOffsets(s.topic, p, queryTimeoutMs(ctx, 5000))
		if err != nil {
			return fmt.Errorf("status topic %s[%d] end offset: %w", s.topic, p, err)
		}
		ends[p] = hi
	}
	for {
		ch := s.changed.C()
		s.mu.RLock()
		done := true
		for p, end := range ends {
			if s.positions[p] < end {
				done = false
			}
		}
		s.mu.RUnlock()
		if done {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("reading the status topic %s: %w", s.topic, ctx.Err())
		}
	}
}

func (s *statusStore) apply(key string, value []byte, partition int32, offset int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.positions[partition] = offset + 1
	switch {
	case strings.HasPrefix(key, keyStatusConnectorPrefix):
		name := key[len(keyStatusConnectorPrefix):]
		st, ok := s.decode(key, value)
		if !ok {
			return
		}
		if st == nil {
			delete(s.connectors, name)
			return
		}
		if cur, ok := s.connectors[name]; !ok || supersedes(*st, cur) {
			s.connectors[name] = *st
		}
	case strings.HasPrefix(key, keyStatusTaskPrefix):
		id, err := clusterstate.ParseTaskID(key[len(keyStatusTaskPrefix):])
		if err != nil {
			s.log.Warn("skipping status record with a bad key", "key", key, "err", err)
			return
		}
		st, ok := s.decode(key, value)
		if !ok {
			return
		}
		if st == nil {
			delete(s.tasks, id)
			return
		}
		if cur, ok := s.tasks[id]; !ok || supersedes(*st, cur) {
			s.tasks[id] = *st
		}
	case strings.HasPrefix(key, keyStatusTopicPrefix):
		rest := key[len(keyStatusTopicPrefix):]
		i := strings.LastIndex(rest, statusTopicSeparator)
		if i < 0 {
			s.log.Warn("skipping status record with a bad key", "key", key)
			return
		}
		topic, conn := rest[:i], rest[i+len(statusTopicSeparator):]
		if value == nil {
			if m := s.topics[conn]; m != nil {
				delete(m, topic)
				if len(m) == 0 {
					delete(s.topics, conn)
				}
			}
			return
		}
		var v topicStatusValue
		if err := json.Unmarshal(value, &v); err != nil {
			s.log.Warn("skipping malformed topic status record", "key", key, "err", err)
			return
		}
		m := s.topics[conn]
		if m == nil {
			m = map[string]topicStatus{}
			s.topics[conn] = m
		}
		m[topic] = v.Topic
	default:
		s.log.Warn("skipping status record with an unknown key", "key", key)
	}
}

// decode returns nil for a tombstone; ok=false for a malformed record.
func (s *statusStore) decode(key string, value []byte) (*Status, bool) {
	if value == nil {
		return nil, true
	}
	var v statusValue
	if err := json.Unmarshal(value, &v); err != nil || v.State == "" {
		s.log.Warn("skipping malformed status record", "key", key, "err", err)
		return nil, false
	}
	st := Status{State: v.State, WorkerID: v.WorkerID, Generation: v.Generation}
	if v.Trace != nil {
		st.Trace = *v.Trace
	}
	return &st, true
}

// supersedes is Kafka's putSafe rule: a new status replaces the current one
// if it comes from the same worker or from an assignment generation at
// least as new.
func supersedes(next, cur Status) bool {
	return next.WorkerID == cur.WorkerID || next.Generation >= cur.Generation
}

func (s *statusStore) connector(name string) (Status, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	st, ok := s.connectors[name]
	return st, ok
}

func (s *statusStore) task(id api.ConnectorTaskID) (Status, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	st, ok := s.tasks[id]
	return st, ok
}

// tasksOf returns the statuses of the connector's tasks.
func (s *statusStore) tasksOf(name string) map[int]Status {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := map[int]Status{}
	for id, st := range s.tasks {
		if id.Connector == name {
			out[id.Task] = st
		}
	}
	return out
}

func (s *statusStore) topicsOf(name string) map[string]topicStatus {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return maps.Clone(s.topics[name])
}

// putConnector writes a connector status unless a newer one from another
// worker is known.
func (s *statusStore) putConnector(name string, st Status) {
	if cur, ok := s.connector(name); ok && !supersedes(st, cur) {
		s.log.Debug("not overwriting a newer connector status", "connector", name, "state", st.State, "generation", st.Generation, "current_generation", cur.Generation, "current_worker", cur.WorkerID)
		return
	}
	s.send(statusConnectorKey(name), encodeStatus(st))
}

// putTask writes a task status unless a newer one from another worker is
// known.
func (s *statusStore) putTask(id api.ConnectorTaskID, st Status) {
	if cur, ok := s.task(id); ok && !supersedes(st, cur) {
		s.log.Debug("not overwriting a newer task status", "task", id.String(), "state", st.State, "generation", st.Generation, "current_generation", cur.Generation, "current_worker", cur.WorkerID)
		return
	}
	s.send(statusTaskKey(id), encodeStatus(st))
}

// hasTopic reports whether topic is recorded for connector; the worker
// asks on every batch, so it must not copy anything.
func (s *statusStore) hasTopic(connector, topic string) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	_, ok := s.topics[connector][topic]
	return ok
}

// putTopic records that a task of connector used topic. The record is
// also kept at once in the local view, so the batches that follow do not
// write it again before it has been read back from the status topic; a
// reset's tombstone (same key, so same partition, so ordered) read back
// later removes it again and the next batch writes it anew.
func (s *statusStore) putTopic(connector string, task int, topic string) {
	st := topicStatus{Name: topic, Connector: connector, Task: task, Discover: time.Now().UnixMilli()}
	s.mu.Lock()
	if _, ok := s.topics[connector][topic]; ok {
		s.mu.Unlock()
		return
	}
	m := s.topics[connector]
	if m == nil {
		m = map[string]topicStatus{}
		s.topics[connector] = m
	}
	m[topic] = st
	s.mu.Unlock()
	s.send(statusTopicKey(topic, connector), mustJSON(topicStatusValue{Topic: st}))
}

// deleteConnector writes tombstones for every status record of the
// connector this worker knows of.
func (s *statusStore) deleteConnector(name string, taskCount int) {
	s.mu.RLock()
	keys := []string{statusConnectorKey(name)}
	seen := map[int]bool{}
	for id := range s.tasks {
		if id.Connector == name {
			seen[id.Task] = true
			keys = append(keys, statusTaskKey(id))
		}
	}
	for i := 0; i < taskCount; i++ {
		if !seen[i] {
			keys = append(keys, statusTaskKey(api.ConnectorTaskID{Connector: name, Task: i}))
		}
	}
	for topic := range s.topics[name] {
		keys = append(keys, statusTopicKey(topic, name))
	}
	s.mu.RUnlock()
	for _, k := range keys {
		s.send(k, nil)
	}
}

func (s *statusStore) resetTopics(name string) {
	for topic := range s.topicsOf(name) {
		s.send(statusTopicKey(topic, name), nil)
	}
}

func (s *statusStore) send(key string, value []byte) {
	err := s.producer.Produce(&kafka.Message{
		TopicPartition: kafka.TopicPartition{Topic: &s.topic, Partition: kafka.PartitionAny},
		Key:            []byte(key),
		Value:          value,
	}, nil)
	if err != nil {
		s.log.Error("status write failed", "key", key, "err", err)
	}
}

func encodeStatus(st Status) []byte {
	v := statusValue{State: st.State, WorkerID: st.WorkerID, Generation: st.Generation}
	if st.Trace != "" {
		v.Trace = &st.Trace
	}
	return mustJSON(v)
}

// flush waits for queued status writes.
func (s *statusStore) flush(timeout time.Duration) {
	s.producer.Flush(int(timeout.Milliseconds()))
}

func (s *statusStore) close() {
	s.reader.close()
	s.producer.Flush(5000)
	s.producer.Close()
	s.wg.Wait()
}
