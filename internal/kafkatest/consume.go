package kafkatest

import (
	"testing"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"
)

// Isolation selects what a test consumer may see.
type Isolation string

const (
	ReadCommitted   Isolation = "read_committed"
	ReadUncommitted Isolation = "read_uncommitted"
)

// ReadAll reads topic from the beginning with the given isolation until idle
// passes without a new record (after at least one poll round reached the
// end of every partition) or the overall timeout expires. It uses manual
// assignment, so it leaves no consumer group behind.
func ReadAll(t testing.TB, topic string, iso Isolation, idle, timeout time.Duration) []*kafka.Message {
	t.Helper()
	return A().ReadAll(t, topic, iso, idle, timeout)
}

// ReadAll is the package-level ReadAll on this cluster.
func (cl Cluster) ReadAll(t testing.TB, topic string, iso Isolation, idle, timeout time.Duration) []*kafka.Message {
	t.Helper()
	c, err := kafka.NewConsumer(&kafka.ConfigMap{
		"bootstrap.servers":    cl.Bootstrap(t),
		"group.id":             "kafkatest-reader", // required by librdkafka; never committed
		"enable.auto.commit":   false,
		"isolation.level":      string(iso),
		"enable.partition.eof": true,
	})
	if err != nil {
		t.Fatalf("kafkatest: consumer: %v", err)
	}
	defer c.Close()
	md, err := c.GetMetadata(&topic, false, 10000)
	if err != nil {
		t.Fatalf("kafkatest: metadata for %s: %v", topic, err)
	}
	var tps []kafka.TopicPartition
	for _, p := range md.Topics[topic].Partitions {
		tps = append(tps, kafka.TopicPartition{Topic: &topic, Partition: p.ID, Offset: kafka.OffsetBeginning})
	}
	if err := c.Assign(tps); err != nil {
		t.Fatalf("kafkatest: assign: %v", err)
	}
	var out []*kafka.Message
	atEOF := map[int32]bool{}
	deadline := time.Now().Add(timeout)
	lastNew := time.Now()
	for time.Now().Before(deadline) {
		ev := c.Poll(100)
		switch e := ev.(type) {
		case *kafka.Message:
			out = append(out, e)
			atEOF[e.TopicPartition.Partition] = false
			lastNew = time.Now()
		case kafka.PartitionEOF:
			atEOF[e.Partition] = true
		case kafka.Error:
			if e.IsFatal() {
				t.Fatalf("kafkatest: consume %s: %v", topic, e)
			}
		}
		if len(atEOF) == len(tps) && allTrue(atEOF) && time.Since(lastNew) >= idle {
			return out
		}
	}
	t.Fatalf("kafkatest: reading %s did not reach the end within %v (read %d records)", topic, timeout, len(out))
	return nil
}

func allTrue(m map[int32]bool) bool {
	for _, v := range m {
		if !v {
			return false
		}
	}
	return true
}
