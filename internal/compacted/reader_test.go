package compacted

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"github.com/connectd/connectd/internal/kafkatest"
)

// sink collects what a Reader delivers.
type sink struct {
	mu      sync.Mutex
	records []Record
	latest  map[string][]byte // key → value; a tombstone removes the key
	seen    map[string]bool   // keys delivered, tombstones included
}

func newSink() *sink { return &sink{latest: map[string][]byte{}, seen: map[string]bool{}} }

func (s *sink) handle(b Batch) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range b.Records {
		s.records = append(s.records, r)
		s.seen[string(r.Key)] = true
		if r.Value == nil {
			delete(s.latest, string(r.Key))
			continue
		}
		s.latest[string(r.Key)] = r.Value
	}
}

func (s *sink) value(key string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.latest[key]
	return string(v), ok
}

func (s *sink) wasSeen(key string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.seen[key]
}

// inOrder checks that offsets rise within each partition.
func (s *sink) inOrder(t *testing.T) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	last := map[int32]int64{}
	for _, r := range s.records {
		if prev, ok := last[r.Partition]; ok && r.Offset <= prev {
			t.Fatalf("partition %d: offset %d delivered after %d", r.Partition, r.Offset, prev)
		}
		last[r.Partition] = r.Offset
	}
}

func testCtx(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

func compactTopic(t *testing.T, partitions int) string {
	t.Helper()
	return kafkatest.Topic(t, kafkatest.Partitions(partitions), kafkatest.Config("cleanup.policy", "compact"))
}

func producer(t *testing.T, txID string) *kafka.Producer {
	t.Helper()
	cm := kafka.ConfigMap{"bootstrap.servers": kafkatest.Bootstrap(t), "enable.idempotence": true, "linger.ms": 0}
	if txID != "" {
		cm["transactional.id"] = txID
	}
	p, err := kafka.NewProducer(&cm)
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		for range p.Events() {
		}
	}()
	t.Cleanup(p.Close)
	if txID != "" {
		if err := p.InitTransactions(testCtx(t, 30*time.Second)); err != nil {
			t.Fatal(err)
		}
	}
	return p
}

// put writes key=value (value "" writes a tombstone) and waits for the
// broker's acknowledgement.
func put(t *testing.T, p *kafka.Producer, topic string, partition int32, key, value string) {
	t.Helper()
	m := &kafka.Message{TopicPartition: kafka.TopicPartition{Topic: &topic, Partition: partition}, Key: []byte(key)}
	if value != "" {
		m.Value = []byte(value)
	}
	done := make(chan kafka.Event, 1)
	if err := p.Produce(m, done); err != nil {
		t.Fatal(err)
	}
	select {
	case ev := <-done:
		if err := ev.(*kafka.Message).TopicPartition.Error; err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no delivery report within 30 s")
	}
}

func open(t *testing.T, topic string, end End, stallAfter time.Duration, watermarks *kafka.Producer) *Reader {
	t.Helper()
	r, err := New(Opts{
		Topic:      topic,
		Client:     kafka.ConfigMap{"bootstrap.servers": kafkatest.Bootstrap(t)},
		End:        end,
		StallAfter: stallAfter,
		Watermarks: watermarks,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Close)
	return r
}

// Read to the end returns only after every record written before the call
// has been handed over, tombstones included, in order; then the reader
// follows the topic and a later read to the end sees later writes.
func TestReadToEndThenFollow(t *testing.T) {
	for _, tc := range []struct {
		name       string
		partitions int
		end        End
		txn        bool // write in transactions, the last one aborted
	}{
		{"one partition, high watermark", 1, HighWatermark, false},
		{"five partitions, high watermark", 5, HighWatermark, false},
		{"one partition, last stable, transactions", 1, LastStable, true},
		{"three partitions, high watermark, transactions", 3, HighWatermark, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			topic := compactTopic(t, tc.partitions)
			txID := ""
			if tc.txn {
				txID = kafkatest.UniqueName(t, "tx")
			}
			p := producer(t, txID)
			out := newSink()
			write := func(round int, aborted bool) {
				if tc.txn {
					if err := p.BeginTransaction(); err != nil {
						t.Fatal(err)
					}
				}
				for i := range 40 {
					part := int32(i % tc.partitions)
					key := fmt.Sprintf("k%d", i)
					val := fmt.Sprintf("v%d-%d", i, round)
					if aborted {
						val = "aborted"
					}
					if i%10 == 9 && !aborted {
						val = "" // a tombstone
					}
					put(t, p, topic, part, key, val)
				}
				if !tc.txn {
					return
				}
				ctx := testCtx(t, 30*time.Second)
				if aborted {
					if err := p.AbortTransaction(ctx); err != nil {
						t.Fatal(err)
					}
					return
				}
				if err := p.CommitTransaction(ctx); err != nil {
					t.Fatal(err)
				}
			}
			check := func(round int) {
				t.Helper()
				for i := range 40 {
					key := fmt.Sprintf("k%d", i)
					v, ok := out.value(key)
					if i%10 == 9 {
						if ok {
							t.Fatalf("round %d: %s=%q, want removed by its tombstone", round, key, v)
						}
						continue
					}
					if want := fmt.Sprintf("v%d-%d", i, round); v != want {
						t.Fatalf("round %d: %s=%q (present %v), want %q", round, key, v, ok, want)
					}
				}
			}
			write(1, false)
			if tc.txn {
				// The partitions end with an abort marker: reading to the
				// end must pass it, and deliver none of its records.
				write(0, true)
			}
			r := open(t, topic, tc.end, 0, nil)
			ctx := testCtx(t, 60*time.Second)
			if err := r.Start(ctx, out.handle); err != nil {
				t.Fatal(err)
			}
			if err := r.ReadToEnd(ctx); err != nil {
				t.Fatal(err)
			}
			check(1)
			for i := 0; i < 40; i += 10 {
				if !out.wasSeen(fmt.Sprintf("k%d", i+9)) {
					t.Fatalf("tombstone of k%d never delivered", i+9)
				}
			}

			// Follow: later writes arrive without asking, and a read to
			// the end includes them.
			write(2, false)
			kafkatest.Eventually(t, 20*time.Second, func() (bool, string) {
				v, _ := out.value("k0")
				return v == "v0-2", fmt.Sprintf("k0=%q", v)
			})
			write(3, false)
			if err := r.ReadToEnd(ctx); err != nil {
				t.Fatal(err)
			}
			check(3)
			out.inOrder(t)
		})
	}
}

// An open transaction holds a read_committed reader back. LastStable does
// not wait for it (nor for records written after it began); HighWatermark
// does, and its error names the partition behind.
func TestOpenTransaction(t *testing.T) {
	topic := compactTopic(t, 1)
	plain := producer(t, "")
	put(t, plain, topic, 0, "before", "1")
	open1 := producer(t, kafkatest.UniqueName(t, "open"))
	if err := open1.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	put(t, open1, topic, 0, "in-txn", "1")
	put(t, plain, topic, 0, "after", "1")

	for _, tc := range []struct {
		name string
		end  End
	}{{"last stable", LastStable}, {"high watermark", HighWatermark}} {
		t.Run(tc.name, func(t *testing.T) {
			out := newSink()
			r := open(t, topic, tc.end, 0, nil)
			if err := r.Start(testCtx(t, time.Minute), out.handle); err != nil {
				t.Fatal(err)
			}
			err := r.ReadToEnd(testCtx(t, 3*time.Second))
			if tc.end == LastStable {
				if err != nil {
					t.Fatalf("LastStable behind an open transaction: %v", err)
				}
				if _, ok := out.value("before"); !ok {
					t.Fatal("the record before the open transaction was not delivered")
				}
				return
			}
			var be *BehindError
			if !errors.As(err, &be) || !errors.Is(err, context.DeadlineExceeded) || len(be.Behind) != 1 || be.Behind[0] != 0 {
				t.Fatalf("HighWatermark behind an open transaction = %v, want a BehindError for partition 0", err)
			}
		})
	}
	if err := open1.CommitTransaction(testCtx(t, 30*time.Second)); err != nil {
		t.Fatal(err)
	}
	out := newSink()
	r := open(t, topic, HighWatermark, 0, nil)
	ctx := testCtx(t, time.Minute)
	if err := r.Start(ctx, out.handle); err != nil {
		t.Fatal(err)
	}
	if err := r.ReadToEnd(ctx); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"before", "in-txn", "after"} {
		if _, ok := out.value(k); !ok {
			t.Fatalf("%s not delivered after the transaction committed", k)
		}
	}
}

// Close ends a read to the end that is waiting, stops the goroutines and
// returns promptly; so does cancelling Start's context.
func TestCloseAndCancelEndPromptly(t *testing.T) {
	topic := compactTopic(t, 2)
	open1 := producer(t, kafkatest.UniqueName(t, "open"))
	if err := open1.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	put(t, open1, topic, 0, "held", "1")
	t.Cleanup(func() { _ = open1.AbortTransaction(testCtx(t, 30*time.Second)) })

	for _, tc := range []struct {
		name    string
		stop    func(r *Reader, cancel context.CancelFunc)
		wantErr error
	}{
		{"close", func(r *Reader, _ context.CancelFunc) { r.Close() }, ErrClosed},
		{"cancel", func(_ *Reader, cancel context.CancelFunc) { cancel() }, ErrStopped},
	} {
		t.Run(tc.name, func(t *testing.T) {
			plain := producer(t, "")
			before := runtime.NumGoroutine()
			r := open(t, topic, HighWatermark, 2*time.Second, plain)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if err := r.Start(ctx, newSink().handle); err != nil {
				t.Fatal(err)
			}
			// Held back by the open transaction until stopped.
			errc := make(chan error, 1)
			go func() { errc <- r.ReadToEnd(context.Background()) }()
			select {
			case err := <-errc:
				t.Fatalf("ReadToEnd returned %v behind an open transaction", err)
			case <-time.After(500 * time.Millisecond):
			}
			start := time.Now()
			tc.stop(r, cancel)
			select {
			case err := <-errc:
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("ReadToEnd after %s = %v, want %v", tc.name, err, tc.wantErr)
				}
			case <-time.After(5 * time.Second):
				t.Fatalf("ReadToEnd still waiting 5 s after %s", tc.name)
			}
			closeStart := time.Now()
			r.Close()
			if d := time.Since(closeStart); d > 5*time.Second {
				t.Fatalf("Close took %v", d)
			}
			t.Logf("%s ended the wait in %v", tc.name, time.Since(start))
			if err := r.ReadToEnd(context.Background()); !errors.Is(err, ErrClosed) {
				t.Fatalf("ReadToEnd after Close = %v", err)
			}
			// Nothing the reader started is left running (librdkafka's
			// log forwarders included).
			kafkatest.Eventually(t, 10*time.Second, func() (bool, string) {
				n := runtime.NumGoroutine()
				return n <= before, fmt.Sprintf("%d goroutines, %d before the reader", n, before)
			})
		})
	}
}

// A broker that does not answer and a topic that does not exist give
// errors within the caller's bound, never a hang.
func TestUnreachableBrokerAndMissingTopic(t *testing.T) {
	for _, tc := range []struct {
		name      string
		bootstrap func(t *testing.T) string
		topic     func(t *testing.T) string
		want      error
	}{
		{"unreachable broker", func(*testing.T) string { return "127.0.0.1:1" }, func(*testing.T) string { return "any" }, nil},
		{"missing topic", func(t *testing.T) string { return kafkatest.Bootstrap(t) }, func(t *testing.T) string { return kafkatest.UniqueName(t, "missing") }, ErrTopicMissing},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := Opts{Topic: tc.topic(t), Client: kafka.ConfigMap{"bootstrap.servers": tc.bootstrap(t)}}
			for _, call := range []struct {
				name string
				run  func(ctx context.Context) error
			}{
				{"Start", func(ctx context.Context) error {
					r, err := New(o)
					if err != nil {
						return err
					}
					defer r.Close()
					return r.Start(ctx, newSink().handle)
				}},
				{"Read", func(ctx context.Context) error { return Read(ctx, o, newSink().handle) }},
			} {
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
				start := time.Now()
				err := call.run(ctx)
				cancel()
				took := time.Since(start)
				if err == nil {
					t.Fatalf("%s: no error", call.name)
				}
				if tc.want != nil && !errors.Is(err, tc.want) {
					t.Fatalf("%s: %v, want %v", call.name, err, tc.want)
				}
				if !strings.Contains(err.Error(), o.Topic) {
					t.Fatalf("%s: %v does not name the topic", call.name, err)
				}
				if took > 5*time.Second {
					t.Fatalf("%s took %v with a 2 s bound", call.name, took)
				}
				t.Logf("%s: %v after %v", call.name, err, took.Round(time.Millisecond))
			}
		})
	}
}

// Read reads once to the end as of the call and closes.
func TestReadOnce(t *testing.T) {
	topic := compactTopic(t, 3)
	p := producer(t, "")
	for i := range 30 {
		put(t, p, topic, int32(i%3), fmt.Sprintf("k%d", i), "v")
	}
	put(t, p, topic, 0, "k0", "")
	out := newSink()
	o := Opts{Topic: topic, Client: kafka.ConfigMap{"bootstrap.servers": kafkatest.Bootstrap(t)}}
	if err := Read(testCtx(t, time.Minute), o, out.handle); err != nil {
		t.Fatal(err)
	}
	if _, ok := out.value("k0"); ok {
		t.Fatal("k0 survived its tombstone")
	}
	for i := 1; i < 30; i++ {
		if _, ok := out.value(fmt.Sprintf("k%d", i)); !ok {
			t.Fatalf("k%d missing", i)
		}
	}
	out.inOrder(t)
}

// stall stops a reader's consumer from fetching, as librdkafka's consumer
// did after a broker restart in the chaos soak (it stayed connected and
// never fetched again). Pausing every assigned partition is the real
// consumer in the same state: no records, no errors.
func stall(t *testing.T, r *Reader) {
	t.Helper()
	c := r.current()
	tps, err := c.Assignment()
	if err != nil {
		t.Fatal(err)
	}
	if len(tps) == 0 {
		t.Fatal("the reader has no assignment to stall")
	}
	if err := c.Pause(tps); err != nil {
		t.Fatal(err)
	}
}

// A reader whose consumer stops fetching must not go on serving what it
// read last: in the chaos soak one worker's status reader froze for 68 s
// and kept reporting tasks RUNNING on a worker that had been replaced.
// The reader notices that the end moved while it did not, and replaces
// its consumer, which resumes where the old one was.
func TestStalledConsumerIsReplaced(t *testing.T) {
	for _, tc := range []struct {
		name string
		end  End
	}{{"high watermark", HighWatermark}, {"last stable", LastStable}} {
		t.Run(tc.name, func(t *testing.T) {
			topic := compactTopic(t, 2)
			p := producer(t, "")
			put(t, p, topic, 0, "k", "1")
			out := newSink()
			stallAfter := 2 * time.Second
			r := open(t, topic, tc.end, stallAfter, p)
			ctx := testCtx(t, time.Minute)
			if err := r.Start(ctx, out.handle); err != nil {
				t.Fatal(err)
			}
			if err := r.ReadToEnd(ctx); err != nil {
				t.Fatal(err)
			}
			stall(t, r)
			put(t, p, topic, 0, "k", "2")
			// Detection takes stallAfter plus up to two check intervals.
			rctx, cancel := context.WithTimeout(ctx, stallAfter+10*time.Second)
			defer cancel()
			if err := r.ReadToEnd(rctx); err != nil {
				t.Fatalf("the write was not read after the stall: %v", err)
			}
			if v, _ := out.value("k"); v != "2" {
				t.Fatalf("k=%q after the read to the end, want 2", v)
			}
			if n := r.Replacements(); n < 1 {
				t.Fatalf("caught up without a replacement (%d): the stall did not take", n)
			}
			// The replacement resumed where the old consumer was, not at
			// the beginning.
			tps, err := r.current().Assignment()
			if err != nil || len(tps) != 2 {
				t.Fatalf("replacement assignment %v, %v", tps, err)
			}
			for _, tp := range tps {
				if tp.Partition == 0 && tp.Offset == kafka.OffsetBeginning {
					t.Fatalf("the replacement re-read partition 0 from the beginning")
				}
			}
			// It keeps following.
			put(t, p, topic, 1, "k1", "3")
			if err := r.ReadToEnd(ctx); err != nil {
				t.Fatal(err)
			}
			if v, _ := out.value("k1"); v != "3" {
				t.Fatalf("k1=%q, want 3", v)
			}
			out.inOrder(t)
		})
	}
}

// An end-offset query that gets no answer ends at the caller's deadline,
// not after a client timeout of its own: a health check or a REST read
// with a 2 s bound must not take longer while the broker is away. The
// watermarks connection here points at a port nothing listens on.
func TestEndQueryEndsAtTheDeadline(t *testing.T) {
	topic := compactTopic(t, 1)
	away, err := kafka.NewProducer(&kafka.ConfigMap{"bootstrap.servers": "127.0.0.1:1", "log_level": 0})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(away.Close)
	r := open(t, topic, HighWatermark, time.Minute, away)
	if err := r.Start(testCtx(t, time.Minute), newSink().handle); err != nil {
		t.Fatal(err)
	}
	for _, bound := range []time.Duration{300 * time.Millisecond, 1500 * time.Millisecond} {
		ctx, cancel := context.WithTimeout(context.Background(), bound)
		start := time.Now()
		err := r.ReadToEnd(ctx)
		took := time.Since(start)
		cancel()
		if err == nil {
			t.Fatalf("ReadToEnd with no broker to ask succeeded")
		}
		if took > bound+time.Second {
			t.Fatalf("ReadToEnd with a %v bound took %v", bound, took)
		}
		t.Logf("bound %v: %v after %v", bound, err, took.Round(time.Millisecond))
	}
}
