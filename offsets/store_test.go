package offsets_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"github.com/connectd/connectd/framework/sdk"
	"github.com/connectd/connectd/internal/kafkatest"
	"github.com/connectd/connectd/offsets"
)

func compactTopic(t *testing.T, partitions int) string {
	t.Helper()
	return kafkatest.Topic(t, kafkatest.Partitions(partitions), kafkatest.Config("cleanup.policy", "compact"))
}

func newStore(t *testing.T, topic string, timeout time.Duration) *offsets.Store {
	t.Helper()
	s, err := offsets.NewStore(offsets.Config{
		Topic:       topic,
		Client:      map[string]string{"bootstrap.servers": kafkatest.Bootstrap(t)},
		ReadTimeout: timeout,
	})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	t.Cleanup(cancel)
	return c
}

func off(p, o string) offsets.Offset {
	if o == "" {
		return offsets.Offset{Partition: []byte(p)}
	}
	return offsets.Offset{Partition: []byte(p), Offset: []byte(o)}
}

func render(list []offsets.Offset) string {
	var b strings.Builder
	for _, o := range list {
		fmt.Fprintf(&b, "%s=%s;", o.Partition, o.Offset)
	}
	return b.String()
}

// readFunc reads a connector's committed offsets.
type readFunc func(ctx context.Context, connector string) ([]offsets.Offset, error)

// readerKinds are the two ways a worker reads committed offsets: a
// one-shot Store.Read (a connector's own offsets.storage.topic), and a
// Follower that follows the topic (the worker's offsets topic).
var readerKinds = []string{"store", "follower"}

// newReader returns a reader of kind on topic; a follower starts now and
// follows the topic for the rest of the test.
func newReader(t *testing.T, kind, topic string, timeout time.Duration) (readFunc, error) {
	t.Helper()
	s := newStore(t, topic, timeout)
	if kind == "store" {
		return s.Read, nil
	}
	f, err := s.Follow(ctx(t))
	if err != nil {
		return nil, err
	}
	t.Cleanup(f.Close)
	return f.Read, nil
}

func TestAlterReadReset(t *testing.T) {
	for _, kind := range readerKinds {
		t.Run(kind, func(t *testing.T) { testAlterReadReset(t, kind) })
	}
}

func testAlterReadReset(t *testing.T, kind string) {
	topic := compactTopic(t, 3)
	s := newStore(t, topic, 30*time.Second)
	read, err := newReader(t, kind, topic, 30*time.Second)
	must(t, err)
	c := ctx(t)

	if got, err := read(c, "a"); err != nil || len(got) != 0 {
		t.Fatalf("Read on an empty topic = %v, %v", got, err)
	}
	must(t, s.Alter(c, "a", []offsets.Offset{off(`{"f":"x"}`, `{"pos":1}`), off(`{"f":"y"}`, `{"pos":1}`)}, offsets.WriteOptions{}))
	must(t, s.Alter(c, "b", []offsets.Offset{off(`{"f":"x"}`, `{"pos":99}`)}, offsets.WriteOptions{}))
	// A later write wins; the key is canonical whatever the field order.
	must(t, s.Alter(c, "a", []offsets.Offset{off(`{ "f" : "x" }`, `{"pos":2,"gen":7}`)}, offsets.WriteOptions{TransactionalID: kafkatest.UniqueName(t, "alter")}))

	got, err := read(c, "a")
	must(t, err)
	if want := `{"f":"x"}={"gen":7,"pos":2};{"f":"y"}={"pos":1};`; render(got) != want {
		t.Fatalf("Read(a) = %s, want %s", render(got), want)
	}
	all, err := s.ReadAll(c)
	must(t, err)
	if len(all) != 2 || render(all["b"]) != `{"f":"x"}={"pos":99};` {
		t.Fatalf("ReadAll = %v", all)
	}

	// A tombstone removes one partition; Reset removes the rest.
	must(t, s.Alter(c, "a", []offsets.Offset{off(`{"f":"y"}`, "")}, offsets.WriteOptions{}))
	got, err = read(c, "a")
	must(t, err)
	if want := `{"f":"x"}={"gen":7,"pos":2};`; render(got) != want {
		t.Fatalf("after tombstone Read(a) = %s, want %s", render(got), want)
	}
	must(t, s.Reset(c, "a", offsets.WriteOptions{}))
	got, err = read(c, "a")
	must(t, err)
	if len(got) != 0 {
		t.Fatalf("after Reset Read(a) = %s", render(got))
	}
	if got, _ := read(c, "b"); render(got) != `{"f":"x"}={"pos":99};` {
		t.Fatalf("Reset(a) touched b: %s", render(got))
	}
}

func TestAlterRejectsBadFormatBeforeWriting(t *testing.T) {
	topic := compactTopic(t, 1)
	s := newStore(t, topic, 30*time.Second)
	c := ctx(t)
	err := s.Alter(c, "a", []offsets.Offset{off(`{"f":"x"}`, `{"pos":1}`), off(`{"f":{"nested":1}}`, `{"pos":1}`)}, offsets.WriteOptions{})
	if !errors.Is(err, offsets.ErrFormat) || !strings.Contains(err.Error(), "offset 1") {
		t.Fatalf("Alter with a nested partition: %v", err)
	}
	if got, _ := s.Read(c, "a"); len(got) != 0 {
		t.Fatalf("a rejected Alter wrote %s", render(got))
	}
}

// produceRaw writes records straight to the topic with a transactional
// producer so tests can leave transactions committed, aborted or open.
type txWriter struct {
	t     *testing.T
	p     *kafka.Producer
	topic string
}

func newTxWriter(t *testing.T, topic string) *txWriter {
	t.Helper()
	p, err := kafka.NewProducer(&kafka.ConfigMap{
		"bootstrap.servers":   kafkatest.Bootstrap(t),
		"transactional.id":    kafkatest.UniqueName(t, "w"),
		"go.delivery.reports": false,
	})
	must(t, err)
	t.Cleanup(p.Close)
	must(t, p.InitTransactions(ctx(t)))
	return &txWriter{t: t, p: p, topic: topic}
}

func (w *txWriter) begin() { must(w.t, w.p.BeginTransaction()) }

func (w *txWriter) write(key, value string) {
	w.t.Helper()
	m := &kafka.Message{TopicPartition: kafka.TopicPartition{Topic: &w.topic, Partition: 0}, Key: []byte(key)}
	if value != "" {
		m.Value = []byte(value)
	}
	must(w.t, w.p.Produce(m, nil))
	if n := w.p.Flush(30000); n != 0 {
		w.t.Fatalf("%d records not flushed", n)
	}
}

func TestReadIsReadCommitted(t *testing.T) {
	for _, kind := range readerKinds {
		t.Run(kind, func(t *testing.T) { testReadIsReadCommitted(t, kind) })
	}
}

func testReadIsReadCommitted(t *testing.T, kind string) {
	topic := compactTopic(t, 1)
	c := ctx(t)
	read, err := newReader(t, kind, topic, 30*time.Second)
	must(t, err)
	impatient, err := newReader(t, kind, topic, 3*time.Second)
	must(t, err)

	w := newTxWriter(t, topic)
	w.begin()
	w.write(`["a",{"p":1}]`, `{"pos":1}`)
	must(t, w.p.CommitTransaction(c))
	w.begin()
	w.write(`["a",{"p":1}]`, `{"pos":2}`)
	w.write(`["a",{"p":2}]`, `{"pos":2}`)
	must(t, w.p.AbortTransaction(c))
	// The partition now ends with an abort marker: the reader must still
	// finish (the marker is never delivered as a record).
	got, err := read(c, "a")
	must(t, err)
	if want := `{"p":1}={"pos":1};`; render(got) != want {
		t.Fatalf("Read = %s, want %s (aborted records must be invisible)", render(got), want)
	}

	// An open transaction that began before a committed write holds the
	// last stable offset back; Read must not return without that write.
	other := newTxWriter(t, topic)
	other.begin()
	other.write(`["b",{"p":1}]`, `{"pos":1}`)
	w.begin()
	w.write(`["a",{"p":1}]`, `{"pos":3}`)
	must(t, w.p.CommitTransaction(c))

	_, err = impatient(c, "a")
	if err == nil || !strings.Contains(err.Error(), "open transaction") {
		t.Fatalf("Read behind an open transaction = %v, want a timeout naming the open transaction", err)
	}
	must(t, other.p.CommitTransaction(c))
	got, err = read(c, "a")
	must(t, err)
	if want := `{"p":1}={"pos":3};`; render(got) != want {
		t.Fatalf("Read = %s, want %s", render(got), want)
	}
}

func TestReadSkipsMalformedRecords(t *testing.T) {
	for _, kind := range readerKinds {
		t.Run(kind, func(t *testing.T) { testReadSkipsMalformedRecords(t, kind) })
	}
}

func testReadSkipsMalformedRecords(t *testing.T, kind string) {
	topic := compactTopic(t, 1)
	c := ctx(t)
	read, err := newReader(t, kind, topic, 30*time.Second)
	must(t, err)
	w := newTxWriter(t, topic)
	w.begin()
	w.write(`not-json`, `{"pos":1}`)
	w.write(`["a",{"p":1},"extra"]`, `{"pos":1}`)
	w.write(`["a",{"p":1}]`, `[1,2]`)
	w.write(`["a",{"p":2}]`, `{"pos":5}`)
	must(t, w.p.CommitTransaction(c))
	got, err := read(c, "a")
	must(t, err)
	if want := `{"p":2}={"pos":5};`; render(got) != want {
		t.Fatalf("Read = %s, want %s", render(got), want)
	}
}

func TestReadMissingTopic(t *testing.T) {
	for _, kind := range readerKinds {
		t.Run(kind, func(t *testing.T) {
			name := kafkatest.UniqueName(t, "missing")
			read, err := newReader(t, kind, name, 10*time.Second)
			if err == nil {
				_, err = read(ctx(t), "a")
			}
			if !errors.Is(err, offsets.ErrTopicMissing) {
				t.Fatalf("reading a missing topic: %v", err)
			}
		})
	}
}

func TestMessageFormat(t *testing.T) {
	m, err := offsets.Message("offs", "conn", off(`{"b":1,"a":2}`, `{"pos":3}`))
	must(t, err)
	if string(m.Key) != `["conn",{"a":2,"b":1}]` || string(m.Value) != `{"pos":3}` || *m.TopicPartition.Topic != "offs" {
		t.Fatalf("Message = %s / %s", m.Key, m.Value)
	}
	m, err = offsets.Message("offs", "conn", off(`{"a":2}`, ""))
	must(t, err)
	if m.Value != nil {
		t.Fatalf("tombstone value = %q", m.Value)
	}
}

func TestVerifyTopic(t *testing.T) {
	admin := kafkatest.Admin(t)
	c := ctx(t)
	good := compactTopic(t, 3)
	deleting := kafkatest.Topic(t, kafkatest.Partitions(3))
	both := kafkatest.Topic(t, kafkatest.Partitions(3), kafkatest.Config("cleanup.policy", "compact,delete"))

	tests := []struct {
		name, topic string
		partitions  int
		want        error
		fix         string
	}{
		{"good", good, 3, nil, ""},
		{"good, any count", good, 0, nil, ""},
		{"missing", kafkatest.UniqueName(t, "none"), 0, offsets.ErrTopicMissing, "cleanup.policy=compact"},
		{"delete policy", deleting, 3, offsets.ErrNotCompacted, "--add-config cleanup.policy=compact"},
		{"compact,delete", both, 0, offsets.ErrNotCompacted, "cleanup.policy=compact only"},
		{"partition count", good, 25, offsets.ErrPartitionCount, "offset.storage.partitions=3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := offsets.VerifyTopic(c, admin, tt.topic, tt.partitions)
			if tt.want == nil {
				must(t, err)
				return
			}
			var te *offsets.TopicError
			if !errors.Is(err, tt.want) || !errors.As(err, &te) || !strings.Contains(err.Error(), tt.fix) || !strings.Contains(err.Error(), tt.topic) {
				t.Fatalf("VerifyTopic = %v; want %v naming the topic and %q", err, tt.want, tt.fix)
			}
		})
	}
}

func TestCreateTopic(t *testing.T) {
	admin := kafkatest.Admin(t)
	c := ctx(t)
	name := kafkatest.UniqueName(t, "offs")
	t.Cleanup(func() { kafkatest.DeleteTopics(t, name) })
	must(t, offsets.CreateTopic(c, admin, offsets.TopicSpec{Name: name, Partitions: 4, ReplicationFactor: 1, Config: map[string]string{"cleanup.policy": "delete"}}))
	must(t, offsets.VerifyTopic(c, admin, name, 4))
	// Creating again verifies the existing topic.
	must(t, offsets.CreateTopic(c, admin, offsets.TopicSpec{Name: name, Partitions: 4}))
	if err := offsets.CreateTopic(c, admin, offsets.TopicSpec{Name: name, Partitions: 5}); !errors.Is(err, offsets.ErrPartitionCount) {
		t.Fatalf("CreateTopic over a 4-partition topic with 5: %v", err)
	}
}

func TestSinkOffsets(t *testing.T) {
	admin := kafkatest.Admin(t)
	c := ctx(t)
	topic := kafkatest.Topic(t, kafkatest.Partitions(2))
	connector := kafkatest.UniqueName(t, "sink")
	t.Cleanup(func() { _ = offsets.ResetSinkOffsets(context.Background(), admin, connector) })

	// Put records in so that offsets are in range and the log start can move.
	p, err := kafka.NewProducer(&kafka.ConfigMap{"bootstrap.servers": kafkatest.Bootstrap(t), "go.delivery.reports": false})
	must(t, err)
	defer p.Close()
	for i := range 10 {
		must(t, p.Produce(&kafka.Message{TopicPartition: kafka.TopicPartition{Topic: &topic, Partition: int32(i % 2)}, Value: []byte("v")}, nil))
	}
	if p.Flush(30000) != 0 {
		t.Fatal("flush")
	}

	got, err := offsets.SinkOffsets(c, admin, connector)
	if err != nil || len(got) != 0 {
		t.Fatalf("SinkOffsets without a group = %v, %v", got, err)
	}
	three, four := int64(3), int64(4)
	must(t, offsets.AlterSinkOffsets(c, admin, connector, []offsets.SinkChange{
		{TopicPartition: sdk.TopicPartition{Topic: topic, Partition: 0}, Offset: &three},
		{TopicPartition: sdk.TopicPartition{Topic: topic, Partition: 1}, Offset: &four},
	}))
	got, err = offsets.SinkOffsets(c, admin, connector)
	must(t, err)
	if renderSink(got) != fmt.Sprintf("%s-0=3;%s-1=4;", topic, topic) {
		t.Fatalf("SinkOffsets = %v", got)
	}

	// Resetting one partition moves it to its log start.
	res, err := admin.DeleteRecords(c, []kafka.TopicPartition{{Topic: &topic, Partition: 1, Offset: 2}})
	must(t, err)
	_ = res
	must(t, offsets.AlterSinkOffsets(c, admin, connector, []offsets.SinkChange{{TopicPartition: sdk.TopicPartition{Topic: topic, Partition: 1}}}))
	got, err = offsets.SinkOffsets(c, admin, connector)
	must(t, err)
	if renderSink(got) != fmt.Sprintf("%s-0=3;%s-1=2;", topic, topic) {
		t.Fatalf("SinkOffsets after partition reset = %v", got)
	}

	must(t, offsets.ResetSinkOffsets(c, admin, connector))
	got, err = offsets.SinkOffsets(c, admin, connector)
	if err != nil || len(got) != 0 {
		t.Fatalf("SinkOffsets after reset = %v, %v", got, err)
	}
	if err := offsets.AlterSinkOffsets(c, admin, connector, []offsets.SinkChange{{TopicPartition: sdk.TopicPartition{Topic: topic}, Offset: ptr(int64(-5))}}); err == nil {
		t.Fatal("negative offset accepted")
	}
}

func renderSink(list []offsets.SinkOffset) string {
	var b strings.Builder
	for _, o := range list {
		fmt.Fprintf(&b, "%s=%d;", o.TopicPartition, o.Offset)
	}
	return b.String()
}

func ptr[T any](v T) *T { return &v }

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestReadWhileOthersCommit: on a busy offsets topic other tasks commit
// all the time, so the consumer never sees an empty fetch (no
// PartitionEOF); Read must still finish, and see what was committed
// before it began.
func TestReadWhileOthersCommit(t *testing.T) {
	topic := compactTopic(t, 1)
	c := ctx(t)
	mine := newTxWriter(t, topic)
	mine.begin()
	mine.write(`["a",{"p":1}]`, `{"pos":42}`)
	must(t, mine.p.CommitTransaction(c))

	busy := newTxWriter(t, topic)
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			// Like a running task: records stream into an open transaction
			// that commits every 50 ms.
			busy.begin()
			for end := time.Now().Add(50 * time.Millisecond); time.Now().Before(end); {
				busy.write(`["b",{"p":1}]`, fmt.Sprintf(`{"pos":%d}`, i))
			}
			if err := busy.p.CommitTransaction(c); err != nil {
				t.Errorf("busy writer: %v", err)
				return
			}
		}
	}()
	defer func() { close(stop); <-done }()
	time.Sleep(200 * time.Millisecond) // let the busy writer get going
	for range 3 {
		start := time.Now()
		got, err := newStore(t, topic, 20*time.Second).Read(c, "a")
		must(t, err)
		if want := `{"p":1}={"pos":42};`; render(got) != want {
			t.Fatalf("Read = %s, want %s", render(got), want)
		}
		t.Logf("read in %v while another producer commits continuously", time.Since(start))
	}
}
