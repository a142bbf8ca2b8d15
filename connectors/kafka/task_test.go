package kafka

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	ckafka "github.com/confluentinc/confluent-kafka-go/v2/kafka"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/prometheus/client_golang/prometheus/testutil/promlint"

	"github.com/connectd/connectd/framework/sdk"
	"github.com/connectd/connectd/internal/kafkatest"
)

// sourceMessages builds records covering the byte-level edge cases: null
// and empty keys and values, binary data, headers with null, empty and
// repeated keys, and explicit timestamps.
func sourceMessages(topic string, partitions, perPartition int) []*ckafka.Message {
	var out []*ckafka.Message
	// Recent, so that the broker's time-based retention keeps them.
	base := time.Now().Add(-time.Hour).Truncate(time.Millisecond)
	for p := range partitions {
		for i := range perPartition {
			m := &ckafka.Message{
				TopicPartition: ckafka.TopicPartition{Topic: &topic, Partition: int32(p)},
				Timestamp:      base.Add(time.Duration(p*1000+i) * time.Millisecond),
			}
			switch i % 5 {
			case 0: // null key, tombstone
			case 1:
				m.Key, m.Value = []byte{}, []byte{}
			case 2:
				m.Key = []byte{0, 0xff, 0x80, '\n'}
				m.Value = bytes.Repeat([]byte{0xde, 0xad, 0xbe, 0xef}, 300)
				m.Headers = []ckafka.Header{{Key: "h", Value: nil}, {Key: "h", Value: []byte{}}, {Key: "bin", Value: []byte{0, 1, 2}}}
			default:
				m.Key = []byte(fmt.Sprintf("k-%d-%d", p, i))
				m.Value = []byte(fmt.Sprintf("value %d of partition %d", i, p))
				m.Headers = []ckafka.Header{{Key: "seq", Value: []byte(strconv.Itoa(i))}}
			}
			out = append(out, m)
		}
	}
	return out
}

func TestTaskCopiesRecordsByteForByte(t *testing.T) {
	topic := kafkatest.Topic(t, kafkatest.Partitions(3))
	src := sourceMessages(topic, 3, 40)
	produce(t, src...)
	// The broker's view of the source, with offsets.
	want := kafkatest.ReadAll(t, topic, kafkatest.ReadCommitted, 200*time.Millisecond, 30*time.Second)
	if len(want) != len(src) {
		t.Fatalf("source holds %d records, produced %d", len(want), len(src))
	}

	tctx := newTaskCtx("repl", 0)
	task := startTask(t, tctx, taskProps(t, "c1", partitionsOf(topic, 3)))
	got := pollN(t, task, len(want), 30*time.Second)
	if len(got) != len(want) {
		t.Fatalf("polled %d records, want %d", len(got), len(want))
	}
	// Records of one partition come in offset order; compare per partition.
	byPart := map[int32][]*sdk.SourceRecord{}
	for _, r := range got {
		byPart[r.Partition] = append(byPart[r.Partition], r)
	}
	wantByPart := map[int32][]*ckafka.Message{}
	for _, m := range want {
		wantByPart[m.TopicPartition.Partition] = append(wantByPart[m.TopicPartition.Partition], m)
	}
	for p, ms := range wantByPart {
		rs := byPart[p]
		if len(rs) != len(ms) {
			t.Fatalf("partition %d: %d records, want %d", p, len(rs), len(ms))
		}
		for i, m := range ms {
			r := rs[i]
			where := fmt.Sprintf("partition %d offset %d", p, m.TopicPartition.Offset)
			if r.Topic != topic+".replica" || r.Partition != p {
				t.Errorf("%s: target %s/%d", where, r.Topic, r.Partition)
			}
			checkBytes(t, where+" key", r.Key, m.Key)
			checkBytes(t, where+" value", r.Value, m.Value)
			if !r.Timestamp.Equal(m.Timestamp) {
				t.Errorf("%s: timestamp %v, want %v", where, r.Timestamp, m.Timestamp)
			}
			if len(r.Headers) != len(m.Headers) {
				t.Errorf("%s: %d headers, want %d", where, len(r.Headers), len(m.Headers))
			} else {
				for j, h := range m.Headers {
					if r.Headers[j].Key != h.Key || (r.Headers[j].Value == nil) != (h.Value == nil) || !bytes.Equal(r.Headers[j].Value, h.Value) {
						t.Errorf("%s: header %d = %q:%v, want %q:%v", where, j, r.Headers[j].Key, r.Headers[j].Value, h.Key, h.Value)
					}
				}
			}
			wantPart := map[string]any{fieldCluster: "c1", fieldTopic: topic, fieldPartition: int(p)}
			if fmt.Sprint(r.SourcePartition) != fmt.Sprint(wantPart) {
				t.Errorf("%s: source partition %v, want %v", where, r.SourcePartition, wantPart)
			}
			if off, err := offsetValue(r.SourceOffset[fieldOffset]); err != nil || off != int64(m.TopicPartition.Offset) {
				t.Errorf("%s: source offset %v", where, r.SourceOffset)
			}
			if r.KeySchema == nil || r.KeySchema.Type != "bytes" || !r.KeySchema.Optional {
				t.Errorf("%s: key schema %+v, want optional bytes", where, r.KeySchema)
			}
		}
	}
	// Nothing more to read.
	if recs, err := task.Poll(t.Context()); err != nil || len(recs) != 0 {
		t.Errorf("extra poll = %d records, %v", len(recs), err)
	}
}

// checkBytes compares a record's key or value with the source bytes,
// distinguishing null (nil interface) from empty.
func checkBytes(t *testing.T, what string, got any, want []byte) {
	t.Helper()
	if want == nil {
		if got != nil {
			t.Errorf("%s = %#v, want null", what, got)
		}
		return
	}
	b, ok := got.([]byte)
	if !ok || b == nil || !bytes.Equal(b, want) {
		t.Errorf("%s = %#v, want %#v", what, got, want)
	}
}

func TestTaskResumesAfterCommittedOffsets(t *testing.T) {
	topic := kafkatest.Topic(t, kafkatest.Partitions(2))
	produce(t, sourceMessages(topic, 2, 10)...)

	tctx := newTaskCtx("repl", 0)
	tctx.setOffset("c1", topic, 0, 4) // records 0..4 of partition 0 are copied
	// An offset of another cluster name must not be used.
	tctx.setOffset("other", topic, 1, 8)
	task := startTask(t, tctx, taskProps(t, "c1", partitionsOf(topic, 2)))
	got := pollN(t, task, 15, 30*time.Second)
	first := map[int32]int64{}
	count := map[int32]int{}
	for _, r := range got {
		off, _ := offsetValue(r.SourceOffset[fieldOffset])
		if _, ok := first[r.Partition]; !ok {
			first[r.Partition] = off
		}
		count[r.Partition]++
	}
	if first[0] != 5 || count[0] != 5 {
		t.Errorf("partition 0 resumed at %d with %d records, want offset 5 and 5 records", first[0], count[0])
	}
	if first[1] != 0 || count[1] != 10 {
		t.Errorf("partition 1 started at %d with %d records, want offset 0 and 10 records", first[1], count[1])
	}
}

func TestTaskNeverCopiesAbortedUpstreamTransactions(t *testing.T) {
	topic := kafkatest.Topic(t, kafkatest.Partitions(1))
	p, err := ckafka.NewProducer(&ckafka.ConfigMap{
		"bootstrap.servers": kafkatest.Bootstrap(t), "transactional.id": kafkatest.UniqueName(t, "txn"),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	go func() {
		for range p.Events() { // delivery reports; Flush waits for them to be read
		}
	}()
	ctx := t.Context()
	if err := p.InitTransactions(ctx); err != nil {
		t.Fatal(err)
	}
	txn := func(prefix string, n int, commit bool) {
		t.Helper()
		if err := p.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		for i := range n {
			if err := p.Produce(&ckafka.Message{
				TopicPartition: ckafka.TopicPartition{Topic: &topic, Partition: 0},
				Value:          []byte(fmt.Sprintf("%s-%d", prefix, i)),
			}, nil); err != nil {
				t.Fatal(err)
			}
		}
		// Abort only after the records reached the partition: an abort
		// while they still wait for a leader sends EndTxn for a partition
		// the coordinator never added, which the broker refuses with
		// INVALID_TXN_STATE, fatal to the producer (librdkafka #4849);
		// and an aborted transaction that wrote nothing tests nothing.
		if left := p.Flush(30000); left != 0 {
			t.Fatalf("%d records of transaction %s not delivered in 30 s", left, prefix)
		}
		if commit {
			err = p.CommitTransaction(ctx)
		} else {
			err = p.AbortTransaction(ctx)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	txn("committed1", 5, true)
	txn("aborted1", 7, false)
	txn("committed2", 3, true)
	txn("aborted2", 4, false)

	task := startTask(t, newTaskCtx("repl", 0), taskProps(t, "c1", partitionsOf(topic, 1)))
	got := pollN(t, task, 8, 30*time.Second)

	// An open upstream transaction holds back everything after it.
	if err := p.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if err := p.Produce(&ckafka.Message{TopicPartition: ckafka.TopicPartition{Topic: &topic, Partition: 0}, Value: []byte(fmt.Sprintf("late-%d", i))}, nil); err != nil {
			t.Fatal(err)
		}
	}
	if p.Flush(10000) != 0 {
		t.Fatal("flush of the open transaction did not finish")
	}
	for range 3 {
		recs, err := task.Poll(ctx)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, kept(recs)...)
	}
	if len(got) != 8 {
		t.Errorf("read %d records while the upstream transaction is open, want 8", len(got))
	}
	if err := p.CommitTransaction(ctx); err != nil {
		t.Fatal(err)
	}
	got = append(got, pollN(t, task, 3, 30*time.Second)...)

	var values []string
	for _, r := range got {
		values = append(values, string(r.Value.([]byte)))
	}
	want := "committed1-0 committed1-1 committed1-2 committed1-3 committed1-4 committed2-0 committed2-1 committed2-2 late-0 late-1 late-2"
	if strings.Join(values, " ") != want {
		t.Errorf("copied %v\nwant    %s", values, want)
	}
}

func TestTaskKeyHashMatchesJavaPartitioner(t *testing.T) {
	const targetPartitions = 5
	// librdkafka's "murmur2" partitioner is the Java client's default: the
	// broker-side placement it produces is the reference.
	ref := kafkatest.Topic(t, kafkatest.Partitions(targetPartitions))
	pr, err := ckafka.NewProducer(&ckafka.ConfigMap{"bootstrap.servers": kafkatest.Bootstrap(t), "partitioner": "murmur2"})
	if err != nil {
		t.Fatal(err)
	}
	dr := make(chan ckafka.Event, 200)
	for i := range 200 {
		key := []byte(fmt.Sprintf("key-%d-%s", i, strings.Repeat("x", i%7)))
		if err := pr.Produce(&ckafka.Message{TopicPartition: ckafka.TopicPartition{Topic: &ref, Partition: ckafka.PartitionAny}, Key: key}, dr); err != nil {
			t.Fatal(err)
		}
	}
	refPart := map[string]int32{}
	for range 200 {
		m := (<-dr).(*ckafka.Message)
		if m.TopicPartition.Error != nil {
			t.Fatal(m.TopicPartition.Error)
		}
		refPart[string(m.Key)] = m.TopicPartition.Partition
	}
	pr.Close()

	src := kafkatest.Topic(t, kafkatest.Partitions(2))
	var msgs []*ckafka.Message
	for k := range refPart {
		msgs = append(msgs, &ckafka.Message{TopicPartition: ckafka.TopicPartition{Topic: &src, Partition: int32(len(msgs) % 2)}, Key: []byte(k)})
	}
	msgs = append(msgs, &ckafka.Message{TopicPartition: ckafka.TopicPartition{Topic: &src, Partition: 1}, Value: []byte("keyless")})
	produce(t, msgs...)

	props := taskProps(t, "c1", partitionsOf(src, 2), KeyPartitionMapping, MappingKeyHash,
		taskKeyTargetPartitions, src+".replica:"+strconv.Itoa(targetPartitions))
	task := startTask(t, newTaskCtx("repl", 0), props)
	for _, r := range pollN(t, task, len(msgs), 30*time.Second) {
		if r.Key == nil {
			if r.Partition != 1 {
				t.Errorf("keyless record of source partition 1 went to %d", r.Partition)
			}
			continue
		}
		k := string(r.Key.([]byte))
		if r.Partition != refPart[k] {
			t.Errorf("key %q: partition %d, the Java partitioner chose %d", k, r.Partition, refPart[k])
		}
	}
}

func TestTaskProvenanceHeaders(t *testing.T) {
	topic := kafkatest.Topic(t, kafkatest.Partitions(1))
	produce(t, &ckafka.Message{TopicPartition: ckafka.TopicPartition{Topic: &topic, Partition: 0}, Value: []byte("a"),
		Headers: []ckafka.Header{{Key: "own", Value: []byte("1")}}},
		&ckafka.Message{TopicPartition: ckafka.TopicPartition{Topic: &topic, Partition: 0}, Value: []byte("b")})
	task := startTask(t, newTaskCtx("repl", 0), taskProps(t, "clusterA", partitionsOf(topic, 1), KeyProvenanceHeaders, "true"))
	recs := pollN(t, task, 2, 30*time.Second)
	render := func(hs []sdk.Header) string {
		var parts []string
		for _, h := range hs {
			parts = append(parts, h.Key+"="+string(h.Value))
		}
		return strings.Join(parts, " ")
	}
	want0 := "own=1 connectd.source.cluster=clusterA connectd.source.topic=" + topic + " connectd.source.partition=0 connectd.source.offset=0"
	want1 := "connectd.source.cluster=clusterA connectd.source.topic=" + topic + " connectd.source.partition=0 connectd.source.offset=1"
	if got := render(recs[0].Headers); got != want0 {
		t.Errorf("headers of record 0:\n got %s\nwant %s", got, want0)
	}
	if got := render(recs[1].Headers); got != want1 {
		t.Errorf("headers of record 1:\n got %s\nwant %s", got, want1)
	}
}

func TestTaskMetrics(t *testing.T) {
	topic := kafkatest.Topic(t, kafkatest.Partitions(2))
	produce(t, sourceMessages(topic, 2, 50)...)
	tctx := newTaskCtx("repl", 0)
	task := startTask(t, tctx, taskProps(t, "c1", partitionsOf(topic, 2), KeyPollMaxRecords, "30"))

	var polled []*sdk.SourceRecord
	kafkatest.Eventually(t, 30*time.Second, func() (bool, string) {
		recs, err := task.Poll(t.Context())
		if err != nil {
			return false, err.Error()
		}
		polled = append(polled, kept(recs)...)
		return len(polled) >= 30, fmt.Sprintf("%d polled", len(polled))
	})
	if n := len(polled); n > 30 {
		t.Fatalf("poll.max.records=30 but a poll returned %d", n)
	}
	// Before any commit, all 100 records are lag.
	kafkatest.Eventually(t, 10*time.Second, func() (bool, string) {
		r, s := task.lag(time.Now())
		return r == 100 && s > 0, fmt.Sprintf("lag %v records %v s", r, s)
	})
	// Commit the polled records (the last offset per partition).
	last := map[int32]int64{}
	var size int
	for _, r := range polled {
		off, _ := offsetValue(r.SourceOffset[fieldOffset])
		last[r.Partition] = off
		if r.Key != nil {
			size += len(r.Key.([]byte))
		}
		if r.Value != nil {
			size += len(r.Value.([]byte))
		}
		for _, h := range r.Headers {
			size += len(h.Key) + len(h.Value)
		}
	}
	var offs []sdk.SourceOffset
	for p, o := range last {
		offs = append(offs, sdk.SourceOffset{
			Partition: map[string]any{fieldCluster: "c1", fieldTopic: topic, fieldPartition: float64(p)},
			Offset:    map[string]any{fieldOffset: float64(o)},
		})
	}
	if err := task.Commit(t.Context(), offs); err != nil {
		t.Fatal(err)
	}
	if got := testutil.ToFloat64(task.metrics.records); got != float64(len(polled)) {
		t.Errorf("records_total = %v, want %d", got, len(polled))
	}
	if got := testutil.ToFloat64(task.metrics.bytes); got != float64(size) {
		t.Errorf("bytes_total = %v, want %d", got, size)
	}
	if r, _ := task.lag(time.Now()); r != float64(100-len(polled)) {
		t.Errorf("lag after commit = %v records, want %d", r, 100-len(polled))
	}
	mfs, err := tctx.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	if len(mfs) != 5 {
		t.Errorf("gathered %d metric families, want 5", len(mfs))
	}
	if probs, err := promlint.NewWithMetricFamilies(mfs).Lint(); err != nil || len(probs) > 0 {
		t.Errorf("promlint: %+v", probs)
	}
}
