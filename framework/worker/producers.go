package worker

import (
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/connectd/connectd/internal/kafkalog"
)

// producerPool holds the producers of at-least-once source tasks. Tasks
// of connectors with plugin.isolation=plugin whose producer configuration
// is the same write through one producer: a librdkafka producer costs
// three threads, a connection per broker and its own queues, so a
// producer per task made a thousand idle connectors cost a thousand of
// each. A task of a connector with plugin.isolation=connector gets its
// own. Exactly-once tasks never come here: a transactional producer
// belongs to one task.
//
// Sharing is safe for at-least-once delivery: each record's delivery
// report finds its task through the record's opaque, the producer is
// idempotent (order per partition survives retries whichever task wrote
// the record), and each task waits for its own records, not the
// producer's queue, when it stops.
type producerPool struct {
	log  *slog.Logger
	open prometheus.Gauge // connectd_worker_task_producers

	mu    sync.Mutex
	byKey map[string]*sharedProducer
}

func newProducerPool(log *slog.Logger, open prometheus.Gauge) *producerPool {
	return &producerPool{log: log, open: open, byKey: map[string]*sharedProducer{}}
}

// sharedProducer is one producer and the tasks using it.
type sharedProducer struct {
	pool *producerPool
	key  string // "" for a task's own producer
	p    *kafka.Producer

	mu    sync.Mutex
	users map[*aloTask]struct{}
}

// producerKey identifies a shareable producer configuration: every
// setting but client.id, which names the task.
func producerKey(cm kafka.ConfigMap) string {
	keys := make([]string, 0, len(cm))
	for k := range cm {
		if k != "client.id" {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%s=%v\x00", k, cm[k])
	}
	return b.String()
}

// acquire returns the producer for task a with configuration cm, shared
// when shared is true. sharedClientID replaces the task's client.id on a
// shared producer. The caller must release it.
func (pp *producerPool) acquire(a *aloTask, cm kafka.ConfigMap, shared bool, sharedClientID string) (*sharedProducer, error) {
	key := ""
	if shared {
		key = producerKey(cm)
	}
	pp.mu.Lock()
	defer pp.mu.Unlock()
	sp := pp.byKey[key]
	if key == "" || sp == nil {
		if key != "" {
			cm = cloneConfigMap(cm)
			cm["client.id"] = sharedClientID
		}
		p, err := kafkalog.NewProducer(pp.log, cm)
		if err != nil {
			return nil, fmt.Errorf("producer: %w", err)
		}
		pp.open.Inc()
		sp = &sharedProducer{pool: pp, key: key, p: p, users: map[*aloTask]struct{}{}}
		if key != "" {
			pp.byKey[key] = sp
		}
		go drainEvents(p, deliver, sp.onError)
	}
	sp.mu.Lock()
	sp.users[a] = struct{}{}
	sp.mu.Unlock()
	return sp, nil
}

// deliver hands a delivery report to the task whose record it is.
func deliver(m *kafka.Message) {
	if b, ok := m.Opaque.(*ackBatch); ok {
		b.task.onDelivery(m, b)
	}
}

// onError fails every user on a fatal error (an idempotent producer that
// can no longer guarantee order). The producer leaves the pool, so it is
// not handed out again; its users' restarts get a new one.
func (sp *sharedProducer) onError(ke kafka.Error) {
	if !ke.IsFatal() {
		return
	}
	err := fmt.Errorf("fatal producer error: %w", ke)
	sp.pool.mu.Lock()
	if sp.key != "" && sp.pool.byKey[sp.key] == sp {
		delete(sp.pool.byKey, sp.key)
	}
	sp.pool.mu.Unlock()
	sp.mu.Lock()
	users := make([]*aloTask, 0, len(sp.users))
	for a := range sp.users {
		users = append(users, a)
	}
	sp.mu.Unlock()
	for _, a := range users {
		a.fail(err)
	}
}

// release drops task a; the last user closes the producer. A task that
// stops waits for its own deliveries first; one that failed may leave
// records in flight, which other users' producer still delivers (their
// reports go to the ended task and change nothing) and a last user's
// closing producer drops, as a task's own producer did.
func (sp *sharedProducer) release(a *aloTask) {
	pp := sp.pool
	pp.mu.Lock()
	sp.mu.Lock()
	delete(sp.users, a)
	last := len(sp.users) == 0
	sp.mu.Unlock()
	if last && sp.key != "" && pp.byKey[sp.key] == sp {
		delete(pp.byKey, sp.key)
	}
	pp.mu.Unlock()
	if last {
		sp.p.Close()
		pp.open.Dec()
	}
}

func cloneConfigMap(cm kafka.ConfigMap) kafka.ConfigMap {
	out := make(kafka.ConfigMap, len(cm))
	for k, v := range cm {
		out[k] = v
	}
	return out
}
