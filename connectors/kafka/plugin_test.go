package kafka

import (
	"fmt"
	"testing"

	ckafka "github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"github.com/connectd/connectd/internal/kafkatest"
	"github.com/connectd/connectd/plugins/plugintest"
)

const pluginPkg = "github.com/connectd/connectd/connectors/kafka/cmd/connectd-kafka-replication"

// TestPluginSuite runs the plugin binary through connectd's connector test
// kit: spec, validation, task configs, poll/commit/resume and a SIGKILL of
// the plugin process.
func TestPluginSuite(t *testing.T) {
	bs := kafkatest.Bootstrap(t)
	topic := kafkatest.Topic(t, kafkatest.Partitions(3))
	t.Cleanup(func() { kafkatest.DeleteTopics(t, topic+".replica") })
	var msgs []*ckafka.Message
	for i := range 3000 {
		msgs = append(msgs, &ckafka.Message{TopicPartition: ckafka.TopicPartition{Topic: &topic, Partition: int32(i % 3)},
			Key: []byte(fmt.Sprint(i)), Value: []byte(fmt.Sprintf("v%d", i))})
	}
	produce(t, msgs...)

	bin := builder.Build(t, pluginPkg)
	plugintest.SourceSuite{
		Binary: bin,
		Config: map[string]string{
			"name": "repl", "connector.class": "KafkaReplicationSource", "tasks.max": "2",
			"source.bootstrap.servers": bs, "target.bootstrap.servers": bs,
			"topics": topic, "target.topic.format": "${topic}.replica",
			"key.converter":   "org.apache.kafka.connect.converters.ByteArrayConverter",
			"value.converter": "org.apache.kafka.connect.converters.ByteArrayConverter",
			// Batches arrive at a known cadence: the broker answers a fetch
			// after 1.5 s with at most 4 KiB per partition (about 300
			// records), and a poll waits for it. The kit SIGKILLs the plugin
			// right after taking one batch and expects no further batch to
			// be in flight to the host by then.
			"poll.timeout.ms":                           "5000",
			"source.consumer.fetch.min.bytes":           "1048576",
			"source.consumer.fetch.wait.max.ms":         "1500",
			"source.consumer.max.partition.fetch.bytes": "4096",
		},
		Invalid: []plugintest.Invalid{
			{Name: "no source", Props: map[string]string{"source.bootstrap.servers": ""}, Key: "source.bootstrap.servers"},
			{Name: "no topics", Props: map[string]string{"topics": ""}, Key: "topics"},
			{Name: "topics and regex", Props: map[string]string{"topics.regex": "x.*"}, Key: "topics.regex"},
			{Name: "bad regex", Props: map[string]string{"topics": "", "topics.regex": "("}, Key: "topics.regex"},
			{Name: "format without topic", Props: map[string]string{"target.topic.format": "fixed"}, Key: "target.topic.format"},
			{Name: "self replication", Props: map[string]string{"target.topic.format": "${topic}"}, Key: "target.topic.format"},
			{Name: "bad mapping", Props: map[string]string{"partition.mapping": "random"}, Key: "partition.mapping"},
			{Name: "read uncommitted", Props: map[string]string{"source.consumer.isolation.level": "read_uncommitted"}, Key: "source.consumer.isolation.level"},
		},
		MaxTasks: 2,
		Records:  500,
	}.Run(t)
}
