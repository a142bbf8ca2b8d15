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
	"github.com/connectd/connectd/internal/compacted"
)

// Status is one connector's or task's reported state.
type Status struct {
	State      string
	Trace      string
	WorkerID   string
	Generation int32
	// Version is the plugin version the connector or task runs (KIP-891;
	// empty when it never loaded one).
	Version string
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
	reader   *compacted.Reader
	producer *kafka.Producer

	mu         sync.RWMutex
	connectors map[string]Status
	// tasks is per connector, so that a connector's task statuses are
	// found without looking at every other connector's.
	tasks   map[string]map[int]Status
	topics  map[string]map[string]topicStatus // connector -> topic -> record
	changed *broadcast

	wg sync.WaitGroup
}

func (h *Herder) newStatusStore() (*statusStore, error) {
	s := &statusStore{
		log:        h.log.With("component", "status-store"),
		topic:      h.cfg.StatusTopic,
		connectors: map[string]Status{},
		tasks:      map[string]map[int]Status{},
		topics:     map[string]map[string]topicStatus{},
		changed:    newBroadcast(),
	}
	var err error
	s.producer, s.reader, err = h.openTopic(s.log, "status topic", s.topic, h.cfg.GroupID+"-statuses",
		kafka.ConfigMap{
			"enable.idempotence": true,
			"acks":               "all",
			"linger.ms":          5,
			// Java's default partitioner, so a key lands where Kafka
			// Connect would put it and compaction keeps one record per key.
			"partitioner": "murmur2_random",
		},
		compacted.Opts{
			GroupID: h.cfg.GroupID + "-status-reader",
			// Status records are not transactional: the high watermark
			// is what the reader must reach.
			End:        compacted.HighWatermark,
			StallAfter: statusReaderStallAfter,
		}, &s.wg, func(ev kafka.Event) {
			if m, ok := ev.(*kafka.Message); ok && m.TopicPartition.Error != nil {
				s.log.Error("status write failed", "key", string(m.Key), "err", m.TopicPartition.Error)
			}
		})
	if err != nil {
		return nil, err
	}
	return s, nil
}

func (s *statusStore) run(ctx context.Context) error {
	if err := s.reader.Start(ctx, s.applyBatch); err != nil {
		return fmt.Errorf("status topic %s: %w", s.topic, err)
	}
	return nil
}

// applyBatch applies a batch of status records and wakes the waiters.
func (s *statusStore) applyBatch(b compacted.Batch) {
	for _, r := range b.Records {
		s.apply(string(r.Key), r.Value)
	}
	s.changed.Notify()
}

// readToEnd waits until every partition has been read up to its end as of
// the call.
func (s *statusStore) readToEnd(ctx context.Context) error {
	if err := s.reader.ReadToEnd(ctx); err != nil {
		return fmt.Errorf("reading the status topic %s to its end: %w", s.topic, err)
	}
	return nil
}

func (s *statusStore) apply(key string, value []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
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
		s.applyTask(id, st)
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

// applyTask applies a task's status record (nil: a tombstone); s.mu is
// held.
func (s *statusStore) applyTask(id api.ConnectorTaskID, st *Status) {
	m := s.tasks[id.Connector]
	if st == nil {
		delete(m, id.Task)
		if len(m) == 0 {
			delete(s.tasks, id.Connector)
		}
		return
	}
	if m == nil {
		m = map[int]Status{}
		s.tasks[id.Connector] = m
	}
	if cur, ok := m[id.Task]; !ok || supersedes(*st, cur) {
		m[id.Task] = *st
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
	st := Status{State: v.State, WorkerID: v.WorkerID, Generation: v.Generation, Version: v.Version}
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
	st, ok := s.tasks[id.Connector][id.Task]
	return st, ok
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
	for task := range s.tasks[name] {
		keys = append(keys, statusTaskKey(api.ConnectorTaskID{Connector: name, Task: task}))
	}
	for i := 0; i < taskCount; i++ {
		if _, seen := s.tasks[name][i]; !seen {
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
	v := statusValue{State: st.State, WorkerID: st.WorkerID, Generation: st.Generation, Version: st.Version}
	if st.Trace != "" {
		v.Trace = &st.Trace
	}
	return mustJSON(v)
}

// flush waits for queued status writes.
func (s *statusStore) flush(timeout time.Duration) {
	s.producer.Flush(int(timeout.Milliseconds()))
}

func (s *statusStore) close() { closeTopic(s.reader, s.producer, &s.wg) }
