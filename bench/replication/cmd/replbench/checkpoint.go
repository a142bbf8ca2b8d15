package main

import (
	"context"
	"fmt"
	"slices"
	"time"

	ckafka "github.com/confluentinc/confluent-kafka-go/v2/kafka"
	"github.com/connectd/connectd/bench/internal/benchkit"
	"github.com/connectd/connectd/connectors/kafka/mirrorformat"
)

// checkpointer is a system that runs a checkpoint connector for the run's
// consumer group (cross-cluster mode).
type checkpointer interface {
	// checkpoints reports whether checkpoints are emitted, and if not why.
	checkpoints() (bool, string)
}

// ckptResult is the checkpoint lag measured in one run.
type ckptResult struct {
	lags  []time.Duration // one per partition and sample
	ahead int             // checkpoints whose downstream offset would skip records
	note  string          // why there is no measurement
	err   string
}

// checkpointGroup is the consumer group on the source whose offsets the
// checkpoint connectors translate.
func checkpointGroup(rs *runSpec) string { return "replbench-ckpt-" + rs.runID }

// commitGroup sets the group's committed offsets on the source cluster (the
// group has no members: the admin API commits for it).
func commitGroup(ctx context.Context, bootstrap, group, topic string, offsets []int64) error {
	a, err := benchkit.Admin(bootstrap)
	if err != nil {
		return err
	}
	defer a.Close()
	var tps []ckafka.TopicPartition
	for p, o := range offsets {
		tps = append(tps, ckafka.TopicPartition{Topic: &topic, Partition: int32(p), Offset: ckafka.Offset(o)})
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	res, err := a.AlterConsumerGroupOffsets(ctx, []ckafka.ConsumerGroupTopicPartitions{{Group: group, Partitions: tps}})
	if err != nil {
		return fmt.Errorf("commit offsets of %s: %w", group, err)
	}
	for _, g := range res.ConsumerGroupsTopicPartitions {
		for _, tp := range g.Partitions {
			if tp.Error != nil {
				return fmt.Errorf("commit offsets of %s: partition %d: %w", group, tp.Partition, tp.Error)
			}
		}
	}
	return nil
}

// ckptBatch is how many records each checkpoint sample appends: more than
// offset.lag.max (100), so that an offset sync follows and the translated
// offset moves. MirrorMaker 2 emits no checkpoint whose downstream offset
// equals the previous one, so a sample must move it.
const ckptBatch = 250

// measureCheckpoints times, samples times, how long a group's commit on the
// source takes to appear as a checkpoint on the target: it appends a batch
// to the checkpoint topic, waits until the batch is replicated, commits the
// run's group at the topic's end and waits for the checkpoint of that
// offset. It then checks that no checkpoint points past the record the
// group would read next (a consumer failing over would skip records).
func measureCheckpoints(ctx context.Context, rs *runSpec, samples int, perSample time.Duration) ckptResult {
	var res ckptResult
	fail := func(err error) ckptResult {
		res.err = err.Error()
		logf("%s: checkpoints: %v", rs.runID, err)
		return res
	}
	topic := rs.checkpointsTopic
	group := checkpointGroup(rs)
	replica := rs.sourceAlias + "." + rs.ckptTopic
	c, err := ckafka.NewConsumer(&ckafka.ConfigMap{
		"bootstrap.servers": rs.targetBootstrap, "group.id": "replbench-ckpt-reader", "isolation.level": "read_committed",
		"enable.auto.commit": false, "auto.offset.reset": "earliest", "fetch.wait.max.ms": 10,
		"topic.metadata.refresh.interval.ms": 1000,
	})
	if err != nil {
		return fail(err)
	}
	defer c.Close()
	// The connector creates the topic when it starts; wait for it.
	var parts int
	deadline := time.Now().Add(perSample)
	for {
		md, err := c.GetMetadata(&topic, false, 5000)
		if err == nil && md.Topics[topic].Error.Code() == ckafka.ErrNoError && len(md.Topics[topic].Partitions) > 0 {
			parts = len(md.Topics[topic].Partitions)
			break
		}
		if time.Now().After(deadline) {
			return fail(fmt.Errorf("topic %s not on the target after %v", topic, perSample))
		}
		select {
		case <-ctx.Done():
			return fail(ctx.Err())
		case <-time.After(500 * time.Millisecond):
		}
	}
	var tps []ckafka.TopicPartition
	for p := range parts {
		tps = append(tps, ckafka.TopicPartition{Topic: &topic, Partition: int32(p), Offset: ckafka.OffsetBeginning})
	}
	if err := c.Assign(tps); err != nil {
		return fail(err)
	}
	var checked []mirrorformat.Checkpoint
	var end int64
	for i := 1; i <= samples; i++ {
		if err := appendRecords(ctx, rs.bootstrap, rs.ckptTopic, end, ckptBatch, rs.size); err != nil {
			return fail(err)
		}
		end += ckptBatch
		if err := waitReplicated(ctx, rs.targetBootstrap, replica, end, perSample); err != nil {
			return fail(fmt.Errorf("sample %d: %w", i, err))
		}
		if err := commitGroup(ctx, rs.bootstrap, group, rs.ckptTopic, []int64{end}); err != nil {
			return fail(err)
		}
		t0 := time.Now()
		for {
			if time.Since(t0) > perSample {
				return fail(fmt.Errorf("sample %d: no checkpoint of offset %d within %v", i, end, perSample))
			}
			if ctx.Err() != nil {
				return fail(ctx.Err())
			}
			m, ok := c.Poll(20).(*ckafka.Message)
			if !ok {
				continue
			}
			cp, err := mirrorformat.DecodeCheckpoint(m.Key, m.Value)
			if err != nil {
				return fail(fmt.Errorf("%s offset %d: %w", topic, m.TopicPartition.Offset, err))
			}
			if cp.Group == group && (cp.Topic == replica || cp.Topic == rs.ckptTopic) && cp.Partition == 0 && cp.UpstreamOffset == end {
				res.lags = append(res.lags, time.Since(t0))
				checked = append(checked, cp)
				break
			}
		}
	}
	// The checkpoint topic's offsets are its records' sequence numbers (it
	// is written without transactions): resuming on the target at the
	// downstream offset must not pass the record with sequence number
	// upstream.
	for _, ck := range checked {
		seq, ok, err := seqAt(ctx, rs.targetBootstrap, replica, ck.Partition, ck.DownstreamOffset)
		if err != nil {
			return fail(err)
		}
		if ok && seq > ck.UpstreamOffset {
			res.ahead++
		}
	}
	if res.ahead > 0 {
		res.err = fmt.Sprintf("%d checkpoints point past the group's next record", res.ahead)
	}
	slices.Sort(res.lags)
	return res
}

// appendRecords writes n benchmark records to partition 0 of topic, with
// sequence numbers from on.
func appendRecords(ctx context.Context, bootstrap, topic string, from, n int64, size int) error {
	p, err := ckafka.NewProducer(&ckafka.ConfigMap{"bootstrap.servers": bootstrap, "enable.idempotence": true, "linger.ms": 5})
	if err != nil {
		return err
	}
	defer p.Close()
	done := make(chan ckafka.Event, n)
	for seq := from; seq < from+n; seq++ {
		k := recordKey(0, seq)
		m := &ckafka.Message{TopicPartition: ckafka.TopicPartition{Topic: &topic, Partition: 0}, Key: k, Value: recordValue(k, size)}
		if err := p.Produce(m, done); err != nil {
			return fmt.Errorf("append to %s: %w", topic, err)
		}
	}
	for range n {
		select {
		case ev := <-done:
			if m, ok := ev.(*ckafka.Message); ok && m.TopicPartition.Error != nil {
				return fmt.Errorf("append to %s: %w", topic, m.TopicPartition.Error)
			}
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// waitReplicated waits until the one-partition replica holds records up to
// sequence number records-1.
func waitReplicated(ctx context.Context, bootstrap, replica string, records int64, timeout time.Duration) error {
	t, err := newTailer(bootstrap, replica, 1, records)
	if err != nil {
		return err
	}
	defer t.close()
	deadline := time.Now().Add(timeout)
	for {
		done, err := t.complete(ctx)
		if err != nil {
			return err
		}
		if done {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s did not reach %d records within %v", replica, records, timeout)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// seqAt returns the sequence number of the first committed record at or
// after offset in a target partition (ok false at its end).
func seqAt(ctx context.Context, bootstrap, topic string, partition int32, offset int64) (int64, bool, error) {
	c, err := ckafka.NewConsumer(&ckafka.ConfigMap{
		"bootstrap.servers": bootstrap, "group.id": "replbench-ckpt-check", "isolation.level": "read_committed",
		"enable.auto.commit": false, "enable.partition.eof": true,
	})
	if err != nil {
		return 0, false, err
	}
	defer c.Close()
	if err := c.Assign([]ckafka.TopicPartition{{Topic: &topic, Partition: partition, Offset: ckafka.Offset(offset)}}); err != nil {
		return 0, false, err
	}
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		switch e := c.Poll(100).(type) {
		case *ckafka.Message:
			_, seq, ok := parseKey(e.Key)
			if !ok {
				return 0, false, fmt.Errorf("%s[%d]@%d: not a benchmark record", topic, partition, e.TopicPartition.Offset)
			}
			return seq, true, nil
		case ckafka.PartitionEOF:
			return 0, false, nil
		}
	}
	return 0, false, fmt.Errorf("%s[%d]@%d: nothing read within 10s", topic, partition, offset)
}
