package main

import (
	"context"
	"encoding/binary"
	"fmt"
	"sync/atomic"
	"time"

	ckafka "github.com/confluentinc/confluent-kafka-go/v2/kafka"
	"github.com/connectd/connectd/bench/internal/benchkit"
)

// Benchmark records carry their identity: the key is the source partition
// (4 bytes) and the record's sequence number within it (8 bytes), and the
// value starts with the key and is filled with a pattern up to its size.
const keyLen = 12

func recordKey(p int32, seq int64) []byte {
	k := make([]byte, keyLen)
	binary.BigEndian.PutUint32(k, uint32(p))
	binary.BigEndian.PutUint64(k[4:], uint64(seq))
	return k
}

func parseKey(k []byte) (p int32, seq int64, ok bool) {
	if len(k) != keyLen {
		return 0, 0, false
	}
	return int32(binary.BigEndian.Uint32(k)), int64(binary.BigEndian.Uint64(k[4:])), true
}

func recordValue(key []byte, size int) []byte {
	v := make([]byte, max(size, keyLen))
	copy(v, key)
	for i := keyLen; i < len(v); i++ {
		v[i] = byte('a' + i%26)
	}
	return v
}

// preload writes records records of size bytes, spread evenly over the
// topic's partitions (partition p gets records/partitions, the first
// records%partitions partitions one more).
func preload(ctx context.Context, bootstrap, topic string, partitions int, records int64, size int, producerProps map[string]string) error {
	cm := ckafka.ConfigMap{"bootstrap.servers": bootstrap, "enable.idempotence": true, "linger.ms": 50, "batch.size": 1 << 20,
		"queue.buffering.max.kbytes": 256 << 10}
	for k, v := range producerProps {
		cm[k] = v
	}
	p, err := ckafka.NewProducer(&cm)
	if err != nil {
		return err
	}
	defer p.Close()
	var failed atomic.Int64
	var firstErr atomic.Value
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range p.Events() {
			if m, ok := ev.(*ckafka.Message); ok && m.TopicPartition.Error != nil {
				if failed.Add(1) == 1 {
					firstErr.Store(m.TopicPartition.Error)
				}
			}
		}
	}()
	counts := perPartition(records, partitions)
	start := time.Now()
	for part := range partitions {
		for seq := range counts[part] {
			k := recordKey(int32(part), seq)
			m := &ckafka.Message{TopicPartition: ckafka.TopicPartition{Topic: &topic, Partition: int32(part)}, Key: k, Value: recordValue(k, size)}
			for {
				err := p.Produce(m, nil)
				if err == nil {
					break
				}
				if e, ok := err.(ckafka.Error); ok && e.Code() == ckafka.ErrQueueFull {
					time.Sleep(time.Millisecond)
					continue
				}
				return err
			}
		}
	}
	for p.Flush(1000) > 0 {
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	p.Close()
	<-done
	if n := failed.Load(); n > 0 {
		return fmt.Errorf("preload: %d records failed: %v", n, firstErr.Load())
	}
	logf("preloaded %d records of %d B into %s in %v", records, size, topic, time.Since(start).Round(time.Millisecond))
	return nil
}

func perPartition(records int64, partitions int) []int64 {
	out := make([]int64, partitions)
	for i := range out {
		out[i] = records / int64(partitions)
		if int64(i) < records%int64(partitions) {
			out[i]++
		}
	}
	return out
}

// deleteGroup deletes a consumer group (one that does not exist is fine).
func deleteGroup(ctx context.Context, bootstrap, group string) error {
	a, err := benchkit.Admin(bootstrap)
	if err != nil {
		return err
	}
	defer a.Close()
	res, err := a.DeleteConsumerGroups(ctx, []string{group})
	if err != nil {
		return err
	}
	for _, r := range res.ConsumerGroupResults {
		if c := r.Error.Code(); c != ckafka.ErrNoError && c != ckafka.ErrGroupIDNotFound {
			return fmt.Errorf("delete group %s: %w", group, r.Error)
		}
	}
	return nil
}
