package herder

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"github.com/connectd/connectd/framework/herder/clusterstate"
	"github.com/connectd/connectd/framework/rest/api"
	"github.com/connectd/connectd/internal/kafkatest"
	"github.com/connectd/connectd/plugins/host"
)

// writeConfigs fills the config topic with n connectors of one task each,
// the way the leader writes them: a connector config, a target state, a
// task config and a commit record each (4·n records).
func writeConfigs(t *testing.T, bootstrap, topic string, n int) {
	t.Helper()
	p, err := kafka.NewProducer(&kafka.ConfigMap{"bootstrap.servers": bootstrap, "linger.ms": 20, "acks": "all"})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	// Flush counts undrained delivery reports as outstanding.
	failed := make(chan error, 1)
	go func() {
		for ev := range p.Events() {
			if m, ok := ev.(*kafka.Message); ok && m.TopicPartition.Error != nil {
				select {
				case failed <- m.TopicPartition.Error:
				default:
				}
			}
		}
	}()
	for i := range n {
		name := fmt.Sprintf("c%05d", i)
		props := map[string]string{"name": name, "connector.class": "Source", "tasks.max": "1", "topic": "t-" + name}
		for _, r := range []clusterstate.Record{
			clusterstate.ConnectorRecord(name, props),
			clusterstate.TargetStateRecord(name, clusterstate.TargetStarted),
			// What recordRuntime generates, so no connector sends new
			// task configs.
			clusterstate.TaskRecord(api.ConnectorTaskID{Connector: name, Task: 0}, map[string]string{"task.index": "0"}),
			clusterstate.CommitRecord(name, 1),
		} {
			if err := p.Produce(&kafka.Message{TopicPartition: kafka.TopicPartition{Topic: &topic, Partition: 0}, Key: []byte(r.Key), Value: r.Value}, nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	if left := p.Flush(60_000); left != 0 {
		t.Fatalf("%d config records not delivered", left)
	}
	select {
	case err := <-failed:
		t.Fatalf("a config record failed: %v", err)
	default:
	}
}

// TestConfigReplayAtScale measures what a restarted worker does with a
// config topic of 10,000 records (2,500 connectors): reading it into a
// snapshot, and starting as the only worker of its cluster until it runs
// every task. Both must take seconds, not minutes.
func TestConfigReplayAtScale(t *testing.T) {
	const connectors = 2500
	c := newCluster(t, false)
	c.base.Limits.WorkerTasks = connectors
	cat := &countingCatalog{Catalog: c.base.Plugins.(*host.Catalog)}
	c.base.Plugins = cat
	writeConfigs(t, c.base.BootstrapServers, c.base.ConfigTopic, connectors)

	// The config topic alone.
	cfg := c.base
	cfg.WorkerURL = "http://127.0.0.1:18999"
	cfg.Logger = c.testLogger("replay")
	reader, err := New(cfg, c.client)
	if err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	l, err := reader.newConfigLog()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := l.run(ctx); err != nil {
		t.Fatal(err)
	}
	snap, err := l.readToEnd(ctx)
	l.close()
	if err != nil {
		t.Fatal(err)
	}
	replay := time.Since(began)
	t.Logf("%d config records replayed in %v", snap.Offset, replay.Round(time.Millisecond))
	if got := len(snap.Connectors()); got != connectors {
		t.Fatalf("replayed %d connectors, want %d", got, connectors)
	}
	if snap.Offset < 4*connectors {
		t.Fatalf("replayed up to offset %d, want at least %d", snap.Offset, 4*connectors)
	}

	// A whole worker: it replays, joins, assigns itself everything as
	// the leader and starts it.
	began = time.Now()
	h, rt := c.add()
	kafkatest.Eventually(t, time.Minute, func() (bool, string) {
		n := len(rt.running())
		return n == connectors, strconv.Itoa(n) + " tasks running"
	})
	start := time.Since(began)
	t.Logf("a worker started and ran all %d tasks in %v", connectors, start.Round(time.Millisecond))
	if replay > 10*time.Second || start > 30*time.Second {
		t.Errorf("replay took %v (want < 10 s), start %v (want < 30 s)", replay, start)
	}

	// GET /connectors?expand=status, as the REST handler builds it: the
	// plugin catalog is asked about each class once, not per connector.
	var took []time.Duration
	for range 5 {
		before := cat.lookups.Load()
		began := time.Now()
		listStatuses(t, h, connectors)
		took = append(took, time.Since(began))
		if n := cat.lookups.Load() - before; n > 1 {
			t.Errorf("listing %d connectors with their status looked the plugin catalog up %d times", connectors, n)
		}
	}
	slices.Sort(took)
	t.Logf("GET /connectors?expand=status of %d connectors: median %v", connectors, took[len(took)/2].Round(time.Microsecond))
}

// listStatuses does what GET /connectors?expand=status does.
func listStatuses(t *testing.T, h *Herder, want int) {
	t.Helper()
	ctx := WithReadScope(ctxT(t))
	names, err := h.Connectors(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(names) != want {
		t.Fatalf("%d connectors listed, want %d", len(names), want)
	}
	for _, n := range names {
		st, err := h.ConnectorStatus(ctx, n)
		if err != nil {
			t.Fatal(err)
		}
		if st.Type != api.TypeSource || len(st.Tasks) != 1 {
			t.Fatalf("status of %s: %+v", n, st)
		}
	}
}

// countingCatalog counts the catalog lookups that read plugin.path.
type countingCatalog struct {
	*host.Catalog
	lookups atomic.Int64
}

func (c *countingCatalog) Lookup(class string) (host.Manifest, error) {
	c.lookups.Add(1)
	return c.Catalog.Lookup(class)
}
