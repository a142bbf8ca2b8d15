package mirrortest_test

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	ckafka "github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"github.com/connectd/connectd/connectors/kafka/mirrorformat"
	"github.com/connectd/connectd/internal/kafkatest"
	"github.com/connectd/connectd/internal/mirrortest"
)

// TestReadsRealMirrorMaker2 runs MirrorMaker 2 4.1.1 (its source,
// checkpoint and heartbeat connectors on a Kafka Connect worker writing to
// cluster B) from cluster A, and reads what it wrote with the tool: the
// heartbeats, the offset syncs and the checkpoints of a consumer group,
// each decoded by MM2's own classes. connectd's heartbeat encoding is
// checked against MM2's real heartbeats byte for byte.
func TestReadsRealMirrorMaker2(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Kafka Connect worker; run without -short")
	}
	tool := mirrortest.Build(t)
	a, b := kafkatest.A(), kafkatest.B()
	topic := a.Topic(t)
	group := kafkatest.UniqueName(t, "g")
	const records, committed = 200, 150
	produce(t, a.Bootstrap(t), topic, records)
	commitGroup(t, a, group, topic, committed)

	suffix := group[len(group)-8:]
	src, dst := "mma"+suffix, "mmb"+suffix
	remote := src + "." + topic
	checkpoints := src + ".checkpoints.internal"
	syncs := "mm2-offset-syncs." + dst + ".internal"
	t.Cleanup(func() {
		b.DeleteTopics(t, remote, checkpoints)
		a.DeleteTopics(t, syncs)
	})

	mm2 := mirrortest.StartMM2(t, b)
	common := map[string]string{
		"source.cluster.alias": src, "target.cluster.alias": dst,
		"source.cluster.bootstrap.servers": a.Bootstrap(t), "target.cluster.bootstrap.servers": b.Bootstrap(t),
		"key.converter":    "org.apache.kafka.connect.converters.ByteArrayConverter",
		"value.converter":  "org.apache.kafka.connect.converters.ByteArrayConverter",
		"header.converter": "org.apache.kafka.connect.converters.ByteArrayConverter",
		"tasks.max":        "1",
	}
	with := func(kv ...string) map[string]string {
		m := map[string]string{}
		for k, v := range common {
			m[k] = v
		}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	mm2.Create(t, "heartbeats", with("connector.class", "org.apache.kafka.connect.mirror.MirrorHeartbeatConnector",
		"heartbeats.topic.replication.factor", "1", "emit.heartbeats.interval.seconds", "1"), 1)
	mm2.Create(t, "source", with("connector.class", "org.apache.kafka.connect.mirror.MirrorSourceConnector",
		"topics", topic, "replication.factor", "1", "offset-syncs.topic.replication.factor", "1",
		"sync.topic.acls.enabled", "false", "sync.topic.configs.enabled", "false", "heartbeats.replication.enabled", "false"), 1)
	mm2.Create(t, "checkpoints", with("connector.class", "org.apache.kafka.connect.mirror.MirrorCheckpointConnector",
		"groups", group, "checkpoints.topic.replication.factor", "1", "emit.checkpoints.interval.seconds", "1",
		"refresh.groups.interval.seconds", "1", "sync.group.offsets.enabled", "false"), 0)

	// Heartbeats on B, decoded by MM2's Heartbeat.
	var beats []mirrortest.Record
	kafkatest.Eventually(t, 60*time.Second, func() (bool, string) {
		beats = mirrortest.Heartbeats(tool.Read(t, b.Bootstrap(t), "heartbeats", mirrortest.Heartbeat), src, dst)
		return len(beats) >= 2, fmt.Sprintf("%d heartbeats %s→%s", len(beats), src, dst)
	})
	for _, hb := range beats {
		if hb.At.Timestamp != hb.Timestamp {
			t.Errorf("heartbeat %+v: record timestamp %d", hb, hb.At.Timestamp)
		}
	}
	checkHeartbeatBytes(t, b, src, dst)

	// Offset syncs on A (MM2's default offset-syncs.topic.location=source).
	var sync mirrortest.Record
	kafkatest.Eventually(t, 60*time.Second, func() (bool, string) {
		all := tool.Read(t, a.Bootstrap(t), syncs, mirrortest.OffsetSync)
		for _, s := range all {
			if s.Error == "" && s.Topic == topic && s.Partition == 0 {
				sync = s
				return true, ""
			}
		}
		return false, fmt.Sprintf("no offset sync of %s-0 among %+v", topic, all)
	})
	if sync.UpstreamOffset < 0 || sync.UpstreamOffset >= records || sync.DownstreamOffset < 0 || sync.DownstreamOffset > sync.UpstreamOffset {
		t.Errorf("offset sync %+v", sync)
	}

	// Checkpoints of the group on B, for the remote topic.
	var cp mirrortest.Record
	kafkatest.Eventually(t, 60*time.Second, func() (bool, string) {
		all := tool.Read(t, b.Bootstrap(t), checkpoints, mirrortest.Checkpoint)
		for _, c := range all {
			if c.Error == "" && c.ConsumerGroupID == group && c.Topic == remote && c.UpstreamOffset == committed {
				cp = c
				return true, ""
			}
		}
		return false, fmt.Sprintf("no checkpoint of %s at %d among %+v", group, committed, all)
	})
	if cp.Partition != 0 || cp.DownstreamOffset < 1 || cp.DownstreamOffset > committed {
		t.Errorf("checkpoint %+v", cp)
	}
	// MM2's RemoteClusterUtils path reads the same checkpoint.
	if got := tool.Translate(t, b.Bootstrap(t), group, src); got[mirrortest.TopicPartition{Topic: remote, Partition: 0}] != cp.DownstreamOffset {
		t.Errorf("MirrorClient.remoteConsumerOffsets = %v, want %s-0 at %d", got, remote, cp.DownstreamOffset)
	}
	t.Logf("MM2: %d heartbeats, offset sync %d→%d, checkpoint %s %s-%d %d→%d", len(beats),
		sync.UpstreamOffset, sync.DownstreamOffset, cp.ConsumerGroupID, cp.Topic, cp.Partition, cp.UpstreamOffset, cp.DownstreamOffset)
}

// checkHeartbeatBytes: connectd's encoder, given the fields of MM2's real
// heartbeats, writes exactly MM2's bytes.
func checkHeartbeatBytes(t *testing.T, c kafkatest.Cluster, src, dst string) {
	t.Helper()
	n := 0
	for _, m := range readToEnd(t, c, "heartbeats") {
		hb, err := mirrorformat.DecodeHeartbeat(m.Key, m.Value)
		if err != nil || hb.SourceClusterAlias != src || hb.TargetClusterAlias != dst {
			continue
		}
		key, err := hb.Key()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(key, m.Key) || !bytes.Equal(hb.Value(), m.Value) {
			t.Errorf("MM2 wrote %x/%x, connectd encodes %x/%x", m.Key, m.Value, key, hb.Value())
		}
		n++
	}
	if n == 0 {
		t.Error("connectd's decoder found none of MM2's heartbeats")
	}
}

func produce(t *testing.T, bootstrap, topic string, n int) {
	t.Helper()
	p, err := ckafka.NewProducer(&ckafka.ConfigMap{"bootstrap.servers": bootstrap, "linger.ms": 5})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	dr := make(chan ckafka.Event, n)
	for i := range n {
		if err := p.Produce(&ckafka.Message{TopicPartition: ckafka.TopicPartition{Topic: &topic, Partition: 0},
			Key: fmt.Appendf(nil, "k%d", i), Value: fmt.Appendf(nil, "v%d", i)}, dr); err != nil {
			t.Fatal(err)
		}
	}
	for range n {
		if m := (<-dr).(*ckafka.Message); m.TopicPartition.Error != nil {
			t.Fatal(m.TopicPartition.Error)
		}
	}
}

// commitGroup gives group a committed offset on topic's partition 0, as a
// consumer that read that far would.
func commitGroup(t *testing.T, c kafkatest.Cluster, group, topic string, offset int64) {
	t.Helper()
	res, err := c.Admin(t).AlterConsumerGroupOffsets(t.Context(), []ckafka.ConsumerGroupTopicPartitions{{
		Group: group, Partitions: []ckafka.TopicPartition{{Topic: &topic, Partition: 0, Offset: ckafka.Offset(offset)}},
	}})
	if err != nil || len(res.ConsumerGroupsTopicPartitions) != 1 || res.ConsumerGroupsTopicPartitions[0].Partitions[0].Error != nil {
		t.Fatalf("committing %s at %d: %v %+v", group, offset, err, res)
	}
	t.Cleanup(func() {
		if _, err := c.Admin(t).DeleteConsumerGroups(context.Background(), []string{group}); err != nil {
			t.Logf("deleting group %s: %v", group, err)
		}
	})
}

// readToEnd reads partition 0 of a topic that is still being written, up
// to its end when the read started.
func readToEnd(t *testing.T, c kafkatest.Cluster, topic string) []*ckafka.Message {
	t.Helper()
	cons, err := ckafka.NewConsumer(&ckafka.ConfigMap{"bootstrap.servers": c.Bootstrap(t), "group.id": "unused",
		"enable.auto.commit": false, "isolation.level": "read_committed"})
	if err != nil {
		t.Fatal(err)
	}
	defer cons.Close()
	_, high, err := cons.QueryWatermarkOffsets(topic, 0, 10000)
	if err != nil {
		t.Fatal(err)
	}
	if err := cons.Assign([]ckafka.TopicPartition{{Topic: &topic, Partition: 0, Offset: ckafka.OffsetBeginning}}); err != nil {
		t.Fatal(err)
	}
	var out []*ckafka.Message
	deadline := time.Now().Add(60 * time.Second)
	for next := int64(0); next < high; {
		if time.Now().After(deadline) {
			t.Fatalf("reading %s: at offset %d of %d after 60s", topic, next, high)
		}
		m, err := cons.ReadMessage(time.Second)
		if err != nil {
			if e, ok := err.(ckafka.Error); ok && e.IsTimeout() {
				pos, _ := cons.Position([]ckafka.TopicPartition{{Topic: &topic, Partition: 0}})
				if len(pos) == 1 && pos[0].Offset >= 0 {
					next = int64(pos[0].Offset)
				}
				continue
			}
			t.Fatal(err)
		}
		next = int64(m.TopicPartition.Offset) + 1
		if int64(m.TopicPartition.Offset) < high {
			out = append(out, m)
		}
	}
	return out
}
