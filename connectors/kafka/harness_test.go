package kafka

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"slices"
	"testing"
	"time"

	ckafka "github.com/confluentinc/confluent-kafka-go/v2/kafka"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/connectd/connectd/framework/sdk"
	"github.com/connectd/connectd/internal/kafkatest"
)

// taskCtx is the framework's side of a task, as far as these in-process
// tests need it: committed offsets are looked up by the JSON encoding of
// the source partition and handed back JSON-decoded, as the worker does.
type taskCtx struct {
	connector string
	id        int
	offsets   map[string]map[string]any
	reg       *prometheus.Registry
}

func newTaskCtx(connector string, id int) *taskCtx {
	return &taskCtx{connector: connector, id: id, offsets: map[string]map[string]any{}, reg: prometheus.NewRegistry()}
}

func (c *taskCtx) Connector() string              { return c.connector }
func (c *taskCtx) TaskID() int                    { return c.id }
func (c *taskCtx) Logger() *slog.Logger           { return testLogger() }
func (c *taskCtx) Metrics() prometheus.Registerer { return c.reg }
func (c *taskCtx) Transactions() sdk.TransactionContext {
	return nil
}

func (c *taskCtx) Offset(p map[string]any) map[string]any {
	b, err := json.Marshal(p)
	if err != nil {
		panic(err)
	}
	return c.offsets[string(b)]
}

// setOffset stores an offset the way the offsets topic would return it.
func (c *taskCtx) setOffset(cluster, topic string, partition int, offset int64) {
	k, _ := json.Marshal(map[string]any{fieldCluster: cluster, fieldTopic: topic, fieldPartition: partition})
	var v map[string]any
	if err := json.Unmarshal(fmt.Appendf(nil, `{"offset":%d}`, offset), &v); err != nil {
		panic(err)
	}
	c.offsets[string(k)] = v
}

func testLogger() *slog.Logger {
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

// connCtx records what a connector asks of the framework.
type connCtx struct {
	reconfig chan struct{}
	raised   chan error
}

func newConnCtx() *connCtx {
	return &connCtx{reconfig: make(chan struct{}, 16), raised: make(chan error, 16)}
}

func (c *connCtx) RequestTaskReconfiguration() { c.reconfig <- struct{}{} }
func (c *connCtx) RaiseError(err error)        { c.raised <- err }
func (c *connCtx) Logger() *slog.Logger        { return testLogger() }

// produce writes records synchronously and fails the test on any error.
func produce(t testing.TB, msgs ...*ckafka.Message) {
	t.Helper()
	p, err := ckafka.NewProducer(&ckafka.ConfigMap{"bootstrap.servers": kafkatest.Bootstrap(t), "linger.ms": 5, "enable.idempotence": true})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	dr := make(chan ckafka.Event, len(msgs))
	for _, m := range msgs {
		for {
			err := p.Produce(m, dr)
			if err == nil {
				break
			}
			if e, ok := err.(ckafka.Error); !ok || e.Code() != ckafka.ErrQueueFull {
				t.Fatalf("produce: %v", err)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	for range msgs {
		e := <-dr
		if m := e.(*ckafka.Message); m.TopicPartition.Error != nil {
			t.Fatalf("delivery: %v", m.TopicPartition.Error)
		}
	}
}

// startTask starts a task with props and returns it, stopped at cleanup.
func startTask(t testing.TB, tctx *taskCtx, props map[string]string) *Task {
	t.Helper()
	task := &Task{}
	if err := task.Start(t.Context(), tctx, props); err != nil {
		t.Fatalf("task start: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := task.Stop(ctx); err != nil {
			t.Errorf("task stop: %v", err)
		}
	})
	return task
}

// pollN polls until n records arrived (failing after timeout) and returns
// them; it then polls once more to check nothing beyond n is returned
// when extraCheck is set.
func pollN(t testing.TB, task *Task, n int, timeout time.Duration) []*sdk.SourceRecord {
	t.Helper()
	var out []*sdk.SourceRecord
	deadline := time.Now().Add(timeout)
	for len(out) < n {
		if time.Now().After(deadline) {
			t.Fatalf("polled %d of %d records within %v", len(out), n, timeout)
		}
		recs, err := task.Poll(t.Context())
		if err != nil {
			t.Fatalf("poll: %v", err)
		}
		out = append(out, kept(recs)...)
	}
	return out
}

// kept copies a Poll result for keeping past the next Poll, which reuses
// its memory (sdk.SourceTask): keys and values are the consumer's and not
// reused; offset maps and headers are.
func kept(recs []*sdk.SourceRecord) []*sdk.SourceRecord {
	out := make([]*sdk.SourceRecord, len(recs))
	for i, r := range recs {
		c := *r
		c.SourceOffset = maps.Clone(r.SourceOffset)
		c.Headers = slices.Clone(r.Headers)
		out[i] = &c
	}
	return out
}

// brokerClusterID returns the test broker's cluster ID.
func brokerClusterID(t testing.TB) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	id, err := clusterID(ctx, kafkatest.Admin(t))
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// taskProps builds task properties for partitions of topic on the test
// broker, as TaskConfigs would.
func taskProps(t testing.TB, cluster string, parts []topicPartition, kv ...string) map[string]string {
	bs := kafkatest.Bootstrap(t)
	p := with(map[string]string{
		"name":               "repl",
		KeySourceBootstrap:   bs,
		KeyTargetBootstrap:   bs,
		KeyTopics:            parts[0].Topic,
		KeyTargetFormat:      "${topic}.replica",
		KeyPollTimeout:       "200",
		taskKeyPartitions:    encodePartitions(parts),
		taskKeySourceCluster: cluster,
	}, kv...)
	return p
}

func partitionsOf(topic string, n int) []topicPartition {
	out := make([]topicPartition, n)
	for i := range out {
		out[i] = topicPartition{topic, int32(i)}
	}
	return out
}
