package verify_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"github.com/connectd/connectd/framework/verify"
	"github.com/connectd/connectd/internal/kafkatest"
)

type rec struct {
	p       int32
	key     string
	value   string
	headers []kafka.Header
	null    bool // null value
}

// produce writes recs in order; with abort they are written in a
// transaction that is aborted.
func produce(t *testing.T, topic string, abort bool, recs ...rec) {
	t.Helper()
	cm := kafka.ConfigMap{"bootstrap.servers": kafkatest.Bootstrap(t), "enable.idempotence": true, "linger.ms": 0}
	if abort {
		cm["transactional.id"] = kafkatest.UniqueName(t, "txn")
	}
	p, err := kafka.NewProducer(&cm)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if abort {
		if err := p.InitTransactions(ctx); err != nil {
			t.Fatal(err)
		}
		if err := p.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
	}
	done := make(chan kafka.Event, len(recs))
	for _, r := range recs {
		m := &kafka.Message{TopicPartition: kafka.TopicPartition{Topic: &topic, Partition: r.p}, Key: []byte(r.key), Headers: r.headers}
		if !r.null {
			m.Value = []byte(r.value)
		}
		if err := p.Produce(m, done); err != nil {
			t.Fatal(err)
		}
		// One at a time keeps the order exact across retries.
		if m := (<-done).(*kafka.Message); m.TopicPartition.Error != nil {
			t.Fatal(m.TopicPartition.Error)
		}
	}
	if abort {
		if err := p.AbortTransaction(ctx); err != nil {
			t.Fatal(err)
		}
	}
}

func opts(t *testing.T) verify.ReadOptions {
	return verify.ReadOptions{Bootstrap: kafkatest.Bootstrap(t), Timeout: time.Minute}
}

func TestCompareTopics(t *testing.T) {
	ctx := context.Background()
	var src []rec
	for i := range 30 {
		src = append(src, rec{p: int32(i % 3), key: fmt.Sprintf("k%d", i), value: fmt.Sprintf("v%d", i)})
	}
	src = append(src, rec{p: 0, key: "tomb", null: true}, rec{p: 0, key: "tomb", value: ""}, // null and empty differ
		rec{p: 1, key: "same", value: "x"}, rec{p: 1, key: "same", value: "x"}, // a repeated record is expected twice
		rec{p: 2, key: "h", value: "v", headers: []kafka.Header{{Key: "a", Value: []byte("1")}}})
	source := kafkatest.Topic(t, kafkatest.Partitions(3))
	produce(t, source, false, src...)

	t.Run("exact copy, aborted extras invisible", func(t *testing.T) {
		target := kafkatest.Topic(t, kafkatest.Partitions(3))
		produce(t, target, false, src[:20]...)
		produce(t, target, true, src[:5]...) // aborted: a read_committed reader never sees it
		produce(t, target, false, src[20:]...)
		r, err := verify.CompareTopics(ctx, source, target, verify.CompareOptions{Source: opts(t)})
		if err != nil {
			t.Fatal(err)
		}
		if !r.OK(false) || r.Copied != int64(len(src)) || r.SourceRecords != int64(len(src)) || r.TargetRecords != int64(len(src)) {
			var b strings.Builder
			_ = r.WriteText(&b, false)
			t.Fatalf("exact copy not OK:\n%s", b.String())
		}
		// Reading uncommitted sees the aborted copies as duplicates.
		o := opts(t)
		o.ReadUncommitted = true
		r, err = verify.CompareTopics(ctx, source, target, verify.CompareOptions{Source: o})
		if err != nil {
			t.Fatal(err)
		}
		if r.Duplicates != 5 {
			t.Fatalf("read_uncommitted: %d duplicates, want 5", r.Duplicates)
		}
	})

	t.Run("every kind of violation", func(t *testing.T) {
		target := kafkatest.Topic(t, kafkatest.Partitions(3))
		var tgt []rec
		// Partition 0 in source order: k0 k3 k6 ... k27 tomb(null) tomb("").
		// Drop k3 (lost), duplicate k6, swap k9 and k12 (one reordered),
		// drop the tail record tomb("") (pending).
		var p0 []rec
		for _, r := range src {
			if r.p == 0 {
				p0 = append(p0, r)
			}
		}
		tgt = append(tgt, p0[0], p0[2], p0[2], p0[4], p0[3])
		tgt = append(tgt, p0[5:len(p0)-1]...)
		// Partition 1: all, but the repeated record three times (one
		// duplicate) and an unexpected record.
		for _, r := range src {
			if r.p == 1 {
				tgt = append(tgt, r)
			}
		}
		tgt = append(tgt, rec{p: 1, key: "same", value: "x"}, rec{p: 1, key: "new", value: "?"})
		// Partition 2: k2 moved to partition 1; the header record with a
		// different header value is unexpected, and its original pending.
		for _, r := range src {
			if r.p == 2 && r.key != "h" {
				if r.key == "k2" {
					r.p = 1
				}
				tgt = append(tgt, r)
			}
		}
		tgt = append(tgt, rec{p: 2, key: "h", value: "v", headers: []kafka.Header{{Key: "a", Value: []byte("2")}}})
		produce(t, target, false, tgt...)
		r, err := verify.CompareTopics(ctx, source, target, verify.CompareOptions{Source: opts(t)})
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		_ = r.WriteText(&b, false)
		want := verify.CompareReport{Lost: 1, Duplicates: 2, Reordered: 1, Pending: 2, Unexpected: 2, Moved: 1}
		if r.Lost != want.Lost || r.Duplicates != want.Duplicates || r.Reordered != want.Reordered || r.Pending != want.Pending ||
			r.Unexpected != want.Unexpected || r.Moved != want.Moved || r.OK(true) {
			t.Fatalf("got lost %d dup %d reord %d pending %d unexp %d moved %d, want %+v\n%s",
				r.Lost, r.Duplicates, r.Reordered, r.Pending, r.Unexpected, r.Moved, want, b.String())
		}
		for _, s := range []string{"FAILED", "lost: source " + source + "-0@1 is missing", "duplicate: target", "reordered:", "moved: source " + source + "-2@0 is in target partition 1"} {
			if !strings.Contains(b.String(), s) {
				t.Errorf("report lacks %q:\n%s", s, b.String())
			}
		}
		// With mapping "any", the moved record is fine.
		r, err = verify.CompareTopics(ctx, source, target, verify.CompareOptions{Source: opts(t), Mapping: verify.MappingAny})
		if err != nil {
			t.Fatal(err)
		}
		if r.Moved != 0 || r.Lost != 1 {
			t.Fatalf("mapping any: moved %d lost %d", r.Moved, r.Lost)
		}
	})

	t.Run("pending tail only", func(t *testing.T) {
		target := kafkatest.Topic(t, kafkatest.Partitions(3))
		var tgt []rec
		for _, r := range src {
			if r.p != 2 || r.key == "k2" {
				tgt = append(tgt, r)
			}
		}
		produce(t, target, false, tgt...)
		r, err := verify.CompareTopics(ctx, source, target, verify.CompareOptions{Source: opts(t)})
		if err != nil {
			t.Fatal(err)
		}
		if r.Pending == 0 || r.Lost != 0 || r.OK(false) || !r.OK(true) {
			t.Fatalf("pending %d lost %d", r.Pending, r.Lost)
		}
	})

	t.Run("missing topic", func(t *testing.T) {
		_, err := verify.CompareTopics(ctx, source, kafkatest.UniqueName(t, "absent"), verify.CompareOptions{Source: opts(t)})
		if !errors.Is(err, verify.ErrTopicNotFound) {
			t.Fatalf("err = %v, want ErrTopicNotFound", err)
		}
	})
}
