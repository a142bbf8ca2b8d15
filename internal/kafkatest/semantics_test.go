package kafkatest_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"github.com/connectd/connectd/internal/kafkatest"
)

// These tests pin down the broker and client behaviour that connectd's
// guarantees stand on. If an upgrade of Kafka or librdkafka changes any of
// it, they fail before the product's own tests do.

func newTxProducer(t *testing.T, txID string) *kafka.Producer {
	t.Helper()
	p, err := kafka.NewProducer(&kafka.ConfigMap{
		"bootstrap.servers":      kafkatest.Bootstrap(t),
		"transactional.id":       txID,
		"transaction.timeout.ms": 30000,
		"linger.ms":              5,
	})
	if err != nil {
		t.Fatalf("producer: %v", err)
	}
	t.Cleanup(p.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := p.InitTransactions(ctx); err != nil {
		t.Fatalf("InitTransactions(%s): %v", txID, err)
	}
	return p
}

// produceSync produces one record and waits for its delivery report.
func produceSync(t *testing.T, p *kafka.Producer, topic, key, value string) error {
	t.Helper()
	done := make(chan kafka.Event, 1)
	err := p.Produce(&kafka.Message{
		TopicPartition: kafka.TopicPartition{Topic: &topic, Partition: kafka.PartitionAny},
		Key:            []byte(key),
		Value:          []byte(value),
	}, done)
	if err != nil {
		return err
	}
	select {
	case ev := <-done:
		m := ev.(*kafka.Message)
		return m.TopicPartition.Error
	case <-time.After(30 * time.Second):
		return errors.New("no delivery report within 30s")
	}
}

func values(msgs []*kafka.Message) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = string(m.Value)
	}
	return out
}

func TestCommittedTransactionIsReadOnce(t *testing.T) {
	topic := kafkatest.Topic(t, kafkatest.Partitions(3))
	p := newTxProducer(t, kafkatest.UniqueName(t, "tx"))
	ctx := context.Background()

	const n = 30
	if err := p.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if err := produceSync(t, p, topic, fmt.Sprintf("k%d", i), fmt.Sprintf("v%d", i)); err != nil {
			t.Fatalf("produce %d: %v", i, err)
		}
	}
	// Before the commit a read_committed reader must see nothing.
	if got := kafkatest.ReadAll(t, topic, kafkatest.ReadCommitted, 300*time.Millisecond, 20*time.Second); len(got) != 0 {
		t.Fatalf("read_committed saw %d records of an open transaction", len(got))
	}
	if err := p.CommitTransaction(ctx); err != nil {
		t.Fatalf("commit: %v", err)
	}

	got := kafkatest.ReadAll(t, topic, kafkatest.ReadCommitted, 300*time.Millisecond, 20*time.Second)
	seen := map[string]int{}
	for _, v := range values(got) {
		seen[v]++
	}
	if len(got) != n || len(seen) != n {
		t.Fatalf("read_committed: got %d records (%d distinct), want %d once each", len(got), len(seen), n)
	}
	for v, c := range seen {
		if c != 1 {
			t.Errorf("record %s seen %d times", v, c)
		}
	}
}

func TestAbortedTransactionIsInvisibleToReadCommitted(t *testing.T) {
	topic := kafkatest.Topic(t)
	p := newTxProducer(t, kafkatest.UniqueName(t, "tx"))
	ctx := context.Background()

	commit := func(vals ...string) {
		t.Helper()
		if err := p.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		for _, v := range vals {
			if err := produceSync(t, p, topic, v, v); err != nil {
				t.Fatal(err)
			}
		}
		if err := p.CommitTransaction(ctx); err != nil {
			t.Fatal(err)
		}
	}
	commit("before")
	if err := p.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"aborted-1", "aborted-2"} {
		if err := produceSync(t, p, topic, v, v); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.AbortTransaction(ctx); err != nil {
		t.Fatalf("abort: %v", err)
	}
	commit("after")

	tests := []struct {
		iso  kafkatest.Isolation
		want []string
	}{
		{kafkatest.ReadCommitted, []string{"before", "after"}},
		{kafkatest.ReadUncommitted, []string{"before", "aborted-1", "aborted-2", "after"}},
	}
	for _, tc := range tests {
		t.Run(string(tc.iso), func(t *testing.T) {
			got := values(kafkatest.ReadAll(t, topic, tc.iso, 300*time.Millisecond, 20*time.Second))
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestSameTransactionalIDFencesThePredecessor(t *testing.T) {
	topic := kafkatest.Topic(t)
	txID := kafkatest.UniqueName(t, "tx")
	ctx := context.Background()

	zombie := newTxProducer(t, txID)
	if err := zombie.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := produceSync(t, zombie, topic, "z", "zombie"); err != nil {
		t.Fatal(err)
	}

	// The successor's InitTransactions bumps the epoch and aborts the
	// zombie's open transaction.
	successor := newTxProducer(t, txID)
	if err := successor.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := produceSync(t, successor, topic, "s", "successor"); err != nil {
		t.Fatal(err)
	}
	if err := successor.CommitTransaction(ctx); err != nil {
		t.Fatalf("successor commit: %v", err)
	}

	// The zombie can no longer commit: its error is fatal and says fenced.
	err := zombie.CommitTransaction(ctx)
	if err == nil {
		t.Fatal("zombie commit succeeded after being fenced")
	}
	var kerr kafka.Error
	if !errors.As(err, &kerr) {
		t.Fatalf("zombie commit error %T %v is not a kafka.Error", err, err)
	}
	if !kerr.IsFatal() {
		t.Errorf("zombie commit error is not fatal: %v", kerr)
	}
	if c := kerr.Code(); c != kafka.ErrFenced && c != kafka.ErrProducerFenced && c != kafka.ErrInvalidProducerEpoch {
		t.Errorf("zombie commit error code %v (%v), want a fencing error", c, kerr)
	}

	got := values(kafkatest.ReadAll(t, topic, kafkatest.ReadCommitted, 300*time.Millisecond, 20*time.Second))
	if fmt.Sprint(got) != "[successor]" {
		t.Fatalf("read_committed saw %v, want only the successor's record", got)
	}
}

func TestCompactionKeepsLatestValuePerKey(t *testing.T) {
	topic := kafkatest.Topic(t,
		kafkatest.Config("cleanup.policy", "compact"),
		kafkatest.Config("segment.ms", "100"),
		kafkatest.Config("min.cleanable.dirty.ratio", "0.01"),
		kafkatest.Config("delete.retention.ms", "100"),
		kafkatest.Config("min.compaction.lag.ms", "0"),
	)
	p, err := kafka.NewProducer(&kafka.ConfigMap{"bootstrap.servers": kafkatest.Bootstrap(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)

	const keys, versions = 5, 20
	for v := range versions {
		for k := range keys {
			if err := produceSync(t, p, topic, fmt.Sprintf("k%d", k), fmt.Sprintf("k%d-v%d", k, v)); err != nil {
				t.Fatal(err)
			}
		}
	}

	// The cleaner never touches the active segment, so keep rolling it with
	// a marker record until compaction has run over the versions above.
	kafkatest.Eventually(t, 60*time.Second, func() (bool, string) {
		time.Sleep(200 * time.Millisecond) // let segment.ms elapse so the next write rolls
		if err := produceSync(t, p, topic, "roll", "roll"); err != nil {
			return false, err.Error()
		}
		latest := map[string]string{}
		count := 0
		for _, m := range kafkatest.ReadAll(t, topic, kafkatest.ReadCommitted, 100*time.Millisecond, 20*time.Second) {
			if string(m.Key) == "roll" {
				continue
			}
			latest[string(m.Key)] = string(m.Value)
			count++
		}
		if count != keys {
			return false, fmt.Sprintf("%d non-marker records remain, want %d (one per key)", count, keys)
		}
		for k := range keys {
			key := fmt.Sprintf("k%d", k)
			if want := fmt.Sprintf("%s-v%d", key, versions-1); latest[key] != want {
				return false, fmt.Sprintf("key %s holds %q, want %q", key, latest[key], want)
			}
		}
		return true, ""
	})
}
