package kafka

import (
	"syscall"
	"testing"
	"time"

	ckafka "github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"github.com/connectd/connectd/internal/kafkatest"
)

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkTaskPoll measures the task's side of a copy: consuming 1 KiB
// records from 6 partitions of the broker and building source records
// (one op = one record). It reports process CPU per record, steadier than
// wall time on a shared machine.
//
//	go test ./connectors/kafka/ -run '^$' -bench TaskPoll -benchtime 200000x -count 5
func BenchmarkTaskPoll(b *testing.B) {
	topic := kafkatest.Topic(b, kafkatest.Partitions(6))
	value := make([]byte, 1024)
	msgs := make([]*ckafka.Message, b.N)
	for i := range msgs {
		msgs[i] = &ckafka.Message{TopicPartition: ckafka.TopicPartition{Topic: &topic, Partition: int32(i % 6)},
			Key: []byte{byte(i), byte(i >> 8), byte(i >> 16)}, Value: value,
			Headers: []ckafka.Header{{Key: "h", Value: []byte("v")}}}
	}
	produce(b, msgs...)
	// Offset syncs need a worker that commits (they wait for commits and
	// read target watermarks): this measures the copy path alone.
	task := startTask(b, newTaskCtx("bench", 0), taskProps(b, "c", partitionsOf(topic, 6), KeyEmitOffsetSyncs, "false"))
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cpuTime()
	for read := 0; read < b.N; {
		recs, err := task.Poll(b.Context())
		if err != nil {
			b.Fatal(err)
		}
		read += len(recs)
	}
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/record")
}
