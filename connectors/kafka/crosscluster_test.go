package kafka

import (
	"context"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	ckafka "github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"github.com/connectd/connectd/framework/rest/api"
	"github.com/connectd/connectd/internal/kafkatest"
)

// The cross-cluster tests run as MirrorMaker 2 is deployed: `connectd
// worker` processes whose own Kafka (configs, offsets, status, and the
// transactions that write the replicas) is the target cluster, with
// source.bootstrap.servers naming the other one. The workers' default
// converters are JsonConverter, so the byte-identical copies also prove
// that the connector's raw bytes bypass them (sdk.Spec.RawBytes).

// jsonWorkerDefaults are worker converter defaults that would turn bytes
// into base64 JSON strings.
var jsonWorkerDefaults = map[string]string{
	"key.converter":    "org.apache.kafka.connect.json.JsonConverter",
	"value.converter":  "org.apache.kafka.connect.json.JsonConverter",
	"header.converter": "org.apache.kafka.connect.json.JsonConverter",
}

// newClusterOn starts a worker cluster whose own Kafka is cl.
func newClusterOn(t *testing.T, cl kafkatest.Cluster, workerProps map[string]string) *testCluster {
	t.Helper()
	c := newTestCluster(t)
	c.props["bootstrap.servers"] = cl.Bootstrap(t)
	for k, v := range workerProps {
		c.props[k] = v
	}
	group := c.props["group.id"]
	t.Cleanup(func() {
		// Before newTestCluster's cleanup (which deletes these topics on
		// cluster A): stop the workers, then delete on cl.
		for _, w := range c.workers {
			w.stop()
		}
		cl.DeleteTopics(t, group+"-configs", group+"-offsets", group+"-status")
	})
	return c
}

// produceOn writes records to cluster bootstrap and fails the test on any
// error.
func produceOn(t testing.TB, bootstrap string, msgs ...*ckafka.Message) {
	t.Helper()
	p, err := ckafka.NewProducer(&ckafka.ConfigMap{"bootstrap.servers": bootstrap, "linger.ms": 5, "enable.idempotence": true})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	dr := make(chan ckafka.Event, len(msgs))
	for _, m := range msgs {
		if err := p.Produce(m, dr); err != nil {
			t.Fatalf("produce: %v", err)
		}
	}
	for range msgs {
		if m := (<-dr).(*ckafka.Message); m.TopicPartition.Error != nil {
			t.Fatalf("delivery: %v", m.TopicPartition.Error)
		}
	}
}

// records builds n records per partition of topic (see e2eRecord).
func records(topic string, partitions []int32, n int) []*ckafka.Message {
	base := time.Now().Add(-time.Hour).Truncate(time.Millisecond)
	var out []*ckafka.Message
	for _, p := range partitions {
		for seq := range n {
			out = append(out, e2eRecord(topic, base, p, seq))
		}
	}
	return out
}

// countOn counts the records of topic on cl that read_committed sees; 0
// when the topic does not exist.
func countOn(t *testing.T, cl kafkatest.Cluster, topic string) int {
	t.Helper()
	md, err := cl.Admin(t).GetMetadata(&topic, false, 10000)
	if err != nil || len(md.Topics[topic].Partitions) == 0 {
		return 0
	}
	c, err := ckafka.NewConsumer(&ckafka.ConfigMap{
		"bootstrap.servers": cl.Bootstrap(t), "group.id": "crosscluster-count", "isolation.level": "read_committed",
		"enable.auto.commit": false, "enable.partition.eof": true,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var tps []ckafka.TopicPartition
	for _, p := range md.Topics[topic].Partitions {
		tps = append(tps, ckafka.TopicPartition{Topic: &topic, Partition: p.ID, Offset: ckafka.OffsetBeginning})
	}
	if err := c.Assign(tps); err != nil {
		t.Fatal(err)
	}
	n, eof := 0, map[int32]bool{}
	deadline := time.Now().Add(2 * time.Minute)
	for len(eof) < len(tps) && time.Now().Before(deadline) {
		switch ev := c.Poll(200).(type) {
		case *ckafka.Message:
			n++
			delete(eof, ev.TopicPartition.Partition)
		case ckafka.PartitionEOF:
			eof[ev.Partition] = true
		}
	}
	return n
}

// awaitCount waits until topic on cl holds exactly want committed records.
func awaitCount(t *testing.T, cl kafkatest.Cluster, topic string, want int, timeout time.Duration) {
	t.Helper()
	kafkatest.Eventually(t, timeout, func() (bool, string) {
		n := countOn(t, cl, topic)
		if n > want {
			t.Fatalf("%s holds %d records, more than the %d produced", topic, n, want)
		}
		return n == want, fmt.Sprintf("%s: %d of %d records", topic, n, want)
	})
}

// topicConfigsOn returns topic's configs on cl, with where each comes from.
func topicConfigsOn(t *testing.T, cl kafkatest.Cluster, topic string) map[string]ckafka.ConfigEntryResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	res, err := cl.Admin(t).DescribeConfigs(ctx, []ckafka.ConfigResource{{Type: ckafka.ResourceTopic, Name: topic}})
	if err != nil || res[0].Error.Code() != ckafka.ErrNoError {
		t.Fatalf("describe configs of %s: %v %v", topic, err, res)
	}
	return res[0].Config
}

// setTopicConfig sets one config of topic on cl.
func setTopicConfig(t *testing.T, cl kafkatest.Cluster, topic, key, value string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	res, err := cl.Admin(t).IncrementalAlterConfigs(ctx, []ckafka.ConfigResource{{Type: ckafka.ResourceTopic, Name: topic,
		Config: []ckafka.ConfigEntry{{Name: key, Value: value, IncrementalOperation: ckafka.AlterConfigOpTypeSet}}}})
	if err != nil || res[0].Error.Code() != ckafka.ErrNoError {
		t.Fatalf("set %s=%s on %s: %v %v", key, value, topic, err, res)
	}
}

// topicsOn lists the topics of cl whose names contain sub.
func topicsOn(t *testing.T, cl kafkatest.Cluster, sub string) []string {
	t.Helper()
	md, err := cl.Admin(t).GetMetadata(nil, true, 10000)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for name := range md.Topics {
		if strings.Contains(name, sub) {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// createConnector creates a connector through w's REST API.
func createConnector(t *testing.T, w *daemon, name string, config map[string]string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	if _, err := w.client(t).Create(ctx, name, config, api.InitialRunning); err != nil {
		t.Fatalf("create %s: %v", name, err)
	}
}

// mirrorConfig is a KafkaReplicationSource config replicating topics
// matching regex from the cluster at source (alias src) to the one at
// target (alias dst) with DefaultReplicationPolicy, in MM2's style: no
// converters set, so the worker's defaults would apply to any other
// connector.
func mirrorConfig(source, target, src, dst, regex string, kv ...string) map[string]string {
	return with(map[string]string{
		"connector.class": Class, "tasks.max": "2",
		KeySourceBootstrap: source, KeyTargetBootstrap: target,
		KeyTopicsRegex:        regex,
		KeyPolicyClass:        "org.apache.kafka.connect.mirror.DefaultReplicationPolicy",
		KeySourceClusterAlias: src, KeyTargetClusterAlias: dst,
		KeyRefreshInterval: "1000",
		KeyPollTimeout:     "200",
	}, kv...)
}

// TestCrossClusterDefaultPolicy replicates cluster A to cluster B with
// DefaultReplicationPolicy through a worker on B whose default converters
// are JsonConverter: target topics are named a.<topic>; the copy is
// byte-identical (keys, values, headers, timestamps); the source topics'
// explicit configs are synced at creation and on refresh, except MM2's
// excluded ones; a pre-existing target keeps its own settings except where
// the source sets the same key; a pre-existing target with fewer
// partitions fails that connector with a clear trace; source partitions
// added later are mirrored.
func TestCrossClusterDefaultPolicy(t *testing.T) {
	a, b := kafkatest.A(), kafkatest.B()
	prefix := kafkatest.UniqueName(t, "pol")
	fresh := prefix + "-fresh"    // target created by the connector
	existing := prefix + "-exist" // target created beforehand with other settings
	a.CreateTopic(t, fresh, kafkatest.Partitions(3), kafkatest.Config("retention.ms", "86400000"),
		kafkatest.Config("max.message.bytes", "2000000"), kafkatest.Config("min.insync.replicas", "1"))
	a.CreateTopic(t, existing, kafkatest.Partitions(2), kafkatest.Config("retention.ms", "7200000"))
	b.CreateTopic(t, "a."+existing, kafkatest.Partitions(2), kafkatest.Config("retention.ms", "1000000"),
		kafkatest.Config("segment.ms", "3600000"))
	t.Cleanup(func() { b.DeleteTopics(t, "a."+fresh) })

	msgs := append(records(fresh, []int32{0, 1, 2}, 300), records(existing, []int32{0, 1}, 200)...)
	produceOn(t, a.Bootstrap(t), msgs...)

	c := newClusterOn(t, b, jsonWorkerDefaults)
	w := c.start()
	createConnector(t, w, "a-to-b", mirrorConfig(a.Bootstrap(t), b.Bootstrap(t), "a", "b", `\Q`+prefix+`\E-(fresh|exist)`))

	awaitCount(t, b, "a."+fresh, 900, 45*time.Second)
	awaitCount(t, b, "a."+existing, 400, 30*time.Second)
	for _, topic := range []string{fresh, existing} {
		want := a.ReadAll(t, topic, kafkatest.ReadCommitted, time.Second, 30*time.Second)
		got := b.ReadAll(t, "a."+topic, kafkatest.ReadCommitted, time.Second, 30*time.Second)
		compareCopies(t, want, got)
	}

	// Configs: the explicit ones travel, MM2's excluded ones do not.
	cfg := topicConfigsOn(t, b, "a."+fresh)
	for k, v := range map[string]string{"retention.ms": "86400000", "max.message.bytes": "2000000"} {
		if e := cfg[k]; e.Value != v || e.Source != ckafka.ConfigSourceDynamicTopic {
			t.Errorf("a.%s: %s = %q (source %v), want %q set on the topic", fresh, k, e.Value, e.Source, v)
		}
	}
	if e := cfg["min.insync.replicas"]; e.Source == ckafka.ConfigSourceDynamicTopic {
		t.Errorf("min.insync.replicas was synced (config.properties.exclude): %+v", e)
	}
	// The pre-existing target: the source's retention.ms wins, the
	// target's own segment.ms stays.
	kafkatest.Eventually(t, 20*time.Second, func() (bool, string) {
		cfg := topicConfigsOn(t, b, "a."+existing)
		return cfg["retention.ms"].Value == "7200000" && cfg["segment.ms"].Value == "3600000",
			fmt.Sprintf("retention.ms=%s segment.ms=%s", cfg["retention.ms"].Value, cfg["segment.ms"].Value)
	})
	// A change on the source reaches the target at the next refresh.
	setTopicConfig(t, a, fresh, "retention.ms", "43200000")
	kafkatest.Eventually(t, 20*time.Second, func() (bool, string) {
		v := topicConfigsOn(t, b, "a."+fresh)["retention.ms"].Value
		return v == "43200000", "target retention.ms " + v
	})

	// Partition growth: the target follows, and records of the new
	// partitions are copied.
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if res, err := a.Admin(t).CreatePartitions(ctx, []ckafka.PartitionsSpecification{{Topic: fresh, IncreaseTo: 5}}); err != nil || res[0].Error.Code() != ckafka.ErrNoError {
		t.Fatalf("add partitions: %v %v", err, res)
	}
	a.WaitForTopic(t, fresh, 5)
	produceOn(t, a.Bootstrap(t), records(fresh, []int32{3, 4}, 50)...)
	awaitCount(t, b, "a."+fresh, 1000, 45*time.Second)
	want := a.ReadAll(t, fresh, kafkatest.ReadCommitted, time.Second, 30*time.Second)
	got := b.ReadAll(t, "a."+fresh, kafkatest.ReadCommitted, time.Second, 30*time.Second)
	compareCopies(t, want, got)

	// A pre-existing target with fewer partitions than its source: that
	// connector fails with a trace naming both.
	small := prefix + "-small"
	a.CreateTopic(t, small, kafkatest.Partitions(3))
	b.CreateTopic(t, "a."+small, kafkatest.Partitions(1))
	createConnector(t, w, "a-to-b-small", mirrorConfig(a.Bootstrap(t), b.Bootstrap(t), "a", "b", `\Q`+small+`\E`))
	kafkatest.Eventually(t, 30*time.Second, func() (bool, string) {
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		defer cancel()
		st, err := w.client(t).Status(ctx, "a-to-b-small")
		if err != nil {
			return false, err.Error()
		}
		tr := st.Connector.Trace
		return st.Connector.State == "FAILED" && strings.Contains(tr, "fewer partitions than its source") &&
			strings.Contains(tr, fmt.Sprintf(`"a.%s" has 1 partitions but source topic %q has 3`, small, small)), st.Connector.State + ": " + tr
	})
	if t.Failed() {
		t.Logf("worker log tail:\n%s", w.tail())
	}
}

// TestCrossClusterActiveActive runs A→B and B→A at once, each on a worker
// of its target cluster, both with DefaultReplicationPolicy and regexes
// that match every topic of the test, replicas included: each side's
// records arrive exactly once on the other side (a.<t> on B, b.<t> on A),
// and no replica is replicated back (no a.b.<t>, b.a.<t>, a.a.<t>, b.b.<t>).
func TestCrossClusterActiveActive(t *testing.T) {
	a, b := kafkatest.A(), kafkatest.B()
	name := kafkatest.UniqueName(t, "aa")
	a.CreateTopic(t, name, kafkatest.Partitions(3))
	b.CreateTopic(t, name, kafkatest.Partitions(2))
	t.Cleanup(func() {
		a.DeleteTopics(t, "b."+name, "a.b."+name, "b.a."+name, "b.b."+name)
		b.DeleteTopics(t, "a."+name, "b.a."+name, "a.b."+name, "a.a."+name)
	})
	fromA, fromB := records(name, []int32{0, 1, 2}, 400), records(name, []int32{0, 1}, 300)
	produceOn(t, a.Bootstrap(t), fromA...)
	produceOn(t, b.Bootstrap(t), fromB...)

	regex := `.*\Q` + name + `\E` // the topic, its replicas, and replicas of replicas
	onA, onB := newClusterOn(t, a, jsonWorkerDefaults), newClusterOn(t, b, jsonWorkerDefaults)
	wa, wb := onA.start(), onB.start()
	createConnector(t, wb, "a-to-b", mirrorConfig(a.Bootstrap(t), b.Bootstrap(t), "a", "b", regex))
	createConnector(t, wa, "b-to-a", mirrorConfig(b.Bootstrap(t), a.Bootstrap(t), "b", "a", regex))

	awaitCount(t, b, "a."+name, len(fromA), 45*time.Second)
	awaitCount(t, a, "b."+name, len(fromB), 45*time.Second)
	// Both connectors have now seen the replicas (refresh every second):
	// write more on both sides and let a few refreshes pass, then check
	// nothing went round.
	moreA, moreB := records(name, []int32{0}, 50), records(name, []int32{1}, 50)
	produceOn(t, a.Bootstrap(t), moreA...)
	produceOn(t, b.Bootstrap(t), moreB...)
	awaitCount(t, b, "a."+name, len(fromA)+len(moreA), 30*time.Second)
	awaitCount(t, a, "b."+name, len(fromB)+len(moreB), 30*time.Second)
	time.Sleep(3 * time.Second) // three refreshes: a loop would have created its topic by now

	if got := topicsOn(t, a, name); !slices.Equal(got, slices.Sorted(slices.Values([]string{name, "b." + name}))) {
		t.Errorf("topics on A: %v, want only %s and b.%s", got, name, name)
	}
	if got := topicsOn(t, b, name); !slices.Equal(got, slices.Sorted(slices.Values([]string{name, "a." + name}))) {
		t.Errorf("topics on B: %v, want only %s and a.%s", got, name, name)
	}
	compareCopies(t, a.ReadAll(t, name, kafkatest.ReadCommitted, time.Second, 30*time.Second),
		b.ReadAll(t, "a."+name, kafkatest.ReadCommitted, time.Second, 30*time.Second))
	compareCopies(t, b.ReadAll(t, name, kafkatest.ReadCommitted, time.Second, 30*time.Second),
		a.ReadAll(t, "b."+name, kafkatest.ReadCommitted, time.Second, 30*time.Second))
	for _, w := range []*daemon{wa, wb} {
		if log, _ := os.ReadFile(w.log); !strings.Contains(string(log), "(cycle)") {
			t.Errorf("%s never logged the replica it does not send back; log tail:\n%s", w.name, w.tail())
		}
	}
}

// TestCrossClusterAliasChange changes source.cluster.alias of a running
// A→B replication. What happens (docs/connectors/kafka-replication.md):
// the source partitions are keyed by the alias, so the new alias starts a
// new replication from the beginning into new topics (a2.<t>); the old
// replica (a.<t>) keeps what it had and receives nothing more.
func TestCrossClusterAliasChange(t *testing.T) {
	a, b := kafkatest.A(), kafkatest.B()
	name := kafkatest.UniqueName(t, "alias")
	a.CreateTopic(t, name, kafkatest.Partitions(2))
	t.Cleanup(func() { b.DeleteTopics(t, "a."+name, "a2."+name) })
	first := records(name, []int32{0, 1}, 200)
	produceOn(t, a.Bootstrap(t), first...)

	c := newClusterOn(t, b, jsonWorkerDefaults)
	w := c.start()
	config := mirrorConfig(a.Bootstrap(t), b.Bootstrap(t), "a", "b", `\Q`+name+`\E`)
	createConnector(t, w, "a-to-b", config)
	awaitCount(t, b, "a."+name, len(first), 45*time.Second)

	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	if _, _, err := w.client(t).PutConfig(ctx, "a-to-b", with(config, KeySourceClusterAlias, "a2")); err != nil {
		t.Fatal(err)
	}
	// The new alias's tasks copy from the beginning; once they have, the
	// old generation is gone (fenced before the new one started).
	awaitCount(t, b, "a2."+name, len(first), 45*time.Second)
	second := records(name, []int32{0, 1}, 100)
	for _, m := range second {
		m.Value = append([]byte("second-"), m.Value...)
	}
	produceOn(t, a.Bootstrap(t), second...)
	awaitCount(t, b, "a2."+name, len(first)+len(second), 45*time.Second)
	if n := countOn(t, b, "a."+name); n != len(first) {
		t.Errorf("the old replica a.%s holds %d records after the alias change, want the %d it had", name, n, len(first))
	}
	compareCopies(t, a.ReadAll(t, name, kafkatest.ReadCommitted, time.Second, 30*time.Second),
		b.ReadAll(t, "a2."+name, kafkatest.ReadCommitted, time.Second, 30*time.Second))
}

// TestConnectorTopicConfigSync starts the connector in-process (one
// cluster, ${topic}.replica) and checks what the created target's configs
// are: the source's explicit ones with sync on, minus excluded keys, with
// target.topic.config.* winning; none with sync off.
func TestConnectorTopicConfigSync(t *testing.T) {
	cases := []struct {
		name string
		kv   []string
		want map[string]string // expected DYNAMIC_TOPIC_CONFIG entries of the target
	}{
		{"sync on", nil, map[string]string{"retention.ms": "86400000", "cleanup.policy": "compact"}},
		{"target.topic.config wins", []string{PrefixTargetTopicConfig + "retention.ms", "3600000"},
			map[string]string{"retention.ms": "3600000", "cleanup.policy": "compact"}},
		{"extra exclude", []string{KeyConfigExclude, `cleanup\.policy, min\.insync\.replicas`}, map[string]string{"retention.ms": "86400000"}},
		{"sync off", []string{KeySyncTopicConfigs, "false"}, map[string]string{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			src := kafkatest.Topic(t, kafkatest.Partitions(2), kafkatest.Config("retention.ms", "86400000"),
				kafkatest.Config("cleanup.policy", "compact"), kafkatest.Config("min.insync.replicas", "1"))
			deleteAtCleanup(t, src+".replica")
			if _, _, err := startConnector(t, connProps(t, append([]string{KeyTopics, src}, tc.kv...)...)); err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			for k, e := range topicConfigsOn(t, kafkatest.A(), src+".replica") {
				if e.Source == ckafka.ConfigSourceDynamicTopic {
					got[k] = e.Value
				}
			}
			if !maps.Equal(got, tc.want) {
				t.Errorf("target configs %v, want %v", got, tc.want)
			}
		})
	}
}

func TestPlannedConfigChanges(t *testing.T) {
	entry := func(v string) ckafka.ConfigEntryResult { return ckafka.ConfigEntryResult{Value: v} }
	want := map[string]map[string]string{
		"same":    {"retention.ms": "1"},
		"differs": {"retention.ms": "1", "segment.ms": "2"},
		"gone":    {"retention.ms": "1"},
	}
	have := map[string]map[string]ckafka.ConfigEntryResult{
		"same":    {"retention.ms": entry("1"), "segment.ms": entry("9")},
		"differs": {"retention.ms": entry("5"), "segment.ms": entry("2")},
	}
	got := plannedConfigChanges(want, have)
	if len(got) != 1 || got[0].target != "differs" || !maps.Equal(got[0].set, map[string]string{"retention.ms": "1"}) {
		t.Errorf("changes %+v, want only differs: retention.ms=1", got)
	}
}
