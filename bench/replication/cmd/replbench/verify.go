package main

import (
	"bytes"
	"context"
	"fmt"
	"time"

	ckafka "github.com/confluentinc/confluent-kafka-go/v2/kafka"
)

// verdict is the exactly-once check of one run's target topic.
type verdict struct {
	Records    int64 `json:"records"`
	Duplicates int64 `json:"duplicates"` // records whose sequence number was already seen (or earlier)
	Gaps       int64 `json:"gaps"`       // missing sequence numbers
	Misplaced  int64 `json:"misplaced"`  // wrong partition, malformed key, or a value that differs from the source
}

func (v verdict) ok(expected int64) bool {
	return v.Records == expected && v.Duplicates == 0 && v.Gaps == 0 && v.Misplaced == 0
}

func (v verdict) String() string {
	return fmt.Sprintf("records=%d duplicates=%d gaps=%d misplaced=%d", v.Records, v.Duplicates, v.Gaps, v.Misplaced)
}

// verify reads the whole target topic with read_committed and checks that
// every partition holds exactly the source partition's records, in order,
// once each, with the value the source had.
func verify(ctx context.Context, bootstrap, topic string, partitions int, records int64, size int) (verdict, error) {
	c, err := ckafka.NewConsumer(&ckafka.ConfigMap{
		"bootstrap.servers": bootstrap, "group.id": "replbench-verify", "isolation.level": "read_committed",
		"enable.auto.commit": false, "enable.partition.eof": true, "auto.offset.reset": "earliest",
	})
	if err != nil {
		return verdict{}, err
	}
	defer c.Close()
	var tps []ckafka.TopicPartition
	for p := range partitions {
		tps = append(tps, ckafka.TopicPartition{Topic: &topic, Partition: int32(p), Offset: ckafka.OffsetBeginning})
	}
	if err := c.Assign(tps); err != nil {
		return verdict{}, err
	}
	counts := perPartition(records, partitions)
	next := make([]int64, partitions)
	eof := make([]bool, partitions)
	var v verdict
	lastProgress := time.Now()
	for {
		if ctx.Err() != nil {
			return v, ctx.Err()
		}
		switch e := c.Poll(200).(type) {
		case *ckafka.Message:
			lastProgress = time.Now()
			p := e.TopicPartition.Partition
			eof[p] = false
			v.Records++
			kp, seq, ok := parseKey(e.Key)
			if !ok || kp != p || len(e.Value) != max(size, keyLen) || !bytes.Equal(e.Value, recordValue(e.Key, size)) {
				v.Misplaced++
				continue
			}
			switch {
			case seq < next[p]:
				v.Duplicates++
			case seq > next[p]:
				v.Gaps += seq - next[p]
				next[p] = seq + 1
			default:
				next[p]++
			}
		case ckafka.PartitionEOF:
			eof[e.Partition] = true
		case ckafka.Error:
			if e.IsFatal() {
				return v, e
			}
		}
		all := true
		for _, b := range eof {
			all = all && b
		}
		if all && time.Since(lastProgress) > time.Second {
			break
		}
	}
	for p := range partitions {
		if next[p] < counts[p] {
			v.Gaps += counts[p] - next[p]
		}
	}
	return v, nil
}

// tailer detects the moment a target topic holds every record: the last
// committed record of every partition is the source partition's last.
type tailer struct {
	bootstrap  string
	topic      string
	partitions int
	lastSeq    []int64
	done       []bool
	c          *ckafka.Consumer
	a          *ckafka.AdminClient
}

func newTailer(bootstrap, topic string, partitions int, records int64) (*tailer, error) {
	c, err := ckafka.NewConsumer(&ckafka.ConfigMap{
		"bootstrap.servers": bootstrap, "group.id": "replbench-tail", "isolation.level": "read_committed",
		"enable.auto.commit": false, "enable.partition.eof": true, "fetch.wait.max.ms": 10,
		"topic.metadata.refresh.interval.ms": 1000,
	})
	if err != nil {
		return nil, err
	}
	a, err := ckafka.NewAdminClientFromConsumer(c)
	if err != nil {
		c.Close()
		return nil, err
	}
	t := &tailer{bootstrap: bootstrap, topic: topic, partitions: partitions, done: make([]bool, partitions), c: c, a: a}
	for _, n := range perPartition(records, partitions) {
		t.lastSeq = append(t.lastSeq, n-1)
	}
	return t, nil
}

func (t *tailer) close() {
	t.a.Close()
	t.c.Close()
}

// complete reports whether every partition's last committed record is the
// expected last one.
func (t *tailer) complete(ctx context.Context) (bool, error) {
	req := map[ckafka.TopicPartition]ckafka.OffsetSpec{}
	for p := range t.partitions {
		if !t.done[p] {
			req[ckafka.TopicPartition{Topic: &t.topic, Partition: int32(p)}] = ckafka.LatestOffsetSpec
		}
	}
	if len(req) == 0 {
		return true, nil
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	res, err := t.a.ListOffsets(ctx, req, ckafka.SetAdminIsolationLevel(ckafka.IsolationLevelReadCommitted))
	if err != nil {
		return false, nil // the topic may not exist yet
	}
	var assign []ckafka.TopicPartition
	for tp, info := range res.ResultInfos {
		if info.Error.Code() != ckafka.ErrNoError || info.Offset <= 0 {
			continue
		}
		assign = append(assign, ckafka.TopicPartition{Topic: &t.topic, Partition: tp.Partition, Offset: max(info.Offset-64, 0)})
	}
	if len(assign) == 0 {
		return false, nil
	}
	if err := t.c.Assign(assign); err != nil {
		return false, err
	}
	last := map[int32]int64{}
	eof := map[int32]bool{}
	deadline := time.Now().Add(3 * time.Second)
	for len(eof) < len(assign) && time.Now().Before(deadline) {
		switch e := t.c.Poll(100).(type) {
		case *ckafka.Message:
			if _, seq, ok := parseKey(e.Key); ok {
				last[e.TopicPartition.Partition] = seq
			}
		case ckafka.PartitionEOF:
			eof[e.Partition] = true
		}
	}
	for p, seq := range last {
		if seq == t.lastSeq[p] {
			t.done[p] = true
		}
	}
	for _, d := range t.done {
		if !d {
			return false, nil
		}
	}
	return true, nil
}
