package verify_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"github.com/connectd/connectd/connectors/datagen"
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

// counterRec is the datagen counter record seq as the JSON converter
// writes it without schemas.
func counterRec(p int32, seed int64, card int, seq int64) rec {
	c := datagen.CounterAt(seed, card, seq)
	return rec{p: p, key: c.Key, value: fmt.Sprintf(`{"amount":%d,"key":%q,"seq":%d}`, c.Amount, c.Key, c.Seq)}
}

func TestCheckDatagen(t *testing.T) {
	ctx := context.Background()
	const (
		seed  = 7
		card  = 5
		tasks = 2
		iters = 40
	)
	spec := verify.DatagenSpec{Tasks: tasks, Seed: seed, Cardinality: card, Iterations: iters, IgnoreHeader: "test.bad"}
	var all []rec
	for i := range int64(iters) {
		for task := range int64(tasks) {
			seq := task + i*tasks
			all = append(all, counterRec(int32(seq%3), seed, card, seq))
		}
	}

	t.Run("exact, with ignored records", func(t *testing.T) {
		topic := kafkatest.Topic(t, kafkatest.Partitions(3))
		recs := append([]rec{}, all...)
		recs = append(recs, rec{p: 1, key: "bad", value: "{not json", headers: []kafka.Header{{Key: "test.bad", Value: []byte("1")}}})
		produce(t, topic, false, recs...)
		r, err := verify.CheckDatagen(ctx, opts(t), topic, spec)
		if err != nil {
			t.Fatal(err)
		}
		wantSums, _ := datagen.ExpectedSums(seed, card, tasks, iters)
		if !r.OK() || r.Distinct != tasks*iters || r.Ignored != 1 || len(r.Sums) != len(wantSums) {
			var b strings.Builder
			_ = r.WriteText(&b)
			t.Fatalf("not OK:\n%s", b.String())
		}
		for k, v := range wantSums {
			if r.Sums[k] != v {
				t.Fatalf("sum of %s = %d, want %d", k, r.Sums[k], v)
			}
		}
		// Without iterations, the same topic is complete as far as it goes.
		s := spec
		s.Iterations = 0
		if r, err := verify.CheckDatagen(ctx, opts(t), topic, s); err != nil || !r.OK() {
			t.Fatalf("without iterations: %+v %v", r, err)
		}
		// Expecting more iterations reports the missing tail.
		s.Iterations = iters + 3
		if r, err := verify.CheckDatagen(ctx, opts(t), topic, s); err != nil || r.Missing != 3*tasks || r.OK() {
			t.Fatalf("with more iterations: missing %d, err %v", r.Missing, err)
		}
	})

	t.Run("violations", func(t *testing.T) {
		topic := kafkatest.Topic(t, kafkatest.Partitions(3))
		var recs []rec
		for _, r := range all {
			switch r.value {
			case all[4].value: // seq 4: missing
				continue
			case all[10].value: // seq 10: twice
				recs = append(recs, r, r)
				continue
			}
			recs = append(recs, r)
		}
		// seq 2 (partition 2) again after later ones: a duplicate and
		// reordered; a record whose amount is wrong; an unparseable one.
		recs = append(recs, all[2])
		wrong := counterRec(0, seed, card, 1000)
		wrong.value = strings.Replace(wrong.value, `"amount":`, `"amount":1000`, 1)
		recs = append(recs, wrong, rec{p: 0, key: "x", value: "[1,2]"})
		produce(t, topic, false, recs...)
		r, err := verify.CheckDatagen(ctx, opts(t), topic, spec)
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		_ = r.WriteText(&b)
		if r.Missing != 1 || r.Duplicates != 2 || r.Reordered != 1 || r.Invalid != 2 || r.OK() {
			t.Fatalf("missing %d dup %d reordered %d invalid %d\n%s", r.Missing, r.Duplicates, r.Reordered, r.Invalid, b.String())
		}
		if !strings.Contains(b.String(), "task 0: seq 4 is missing") {
			t.Fatalf("report:\n%s", b.String())
		}
	})

	t.Run("json envelope and quoted keys", func(t *testing.T) {
		topic := kafkatest.Topic(t, kafkatest.Partitions(1))
		var recs []rec
		for seq := range int64(6) {
			c := datagen.CounterAt(seed, card, seq)
			recs = append(recs, rec{key: fmt.Sprintf("%q", c.Key),
				value: fmt.Sprintf(`{"schema":{"type":"struct"},"payload":{"amount":%d,"key":%q,"seq":%d}}`, c.Amount, c.Key, seq)})
		}
		produce(t, topic, false, recs...)
		r, err := verify.CheckDatagen(ctx, opts(t), topic, verify.DatagenSpec{Tasks: 1, Seed: seed, Cardinality: card, Iterations: 6})
		if err != nil || !r.OK() || r.Distinct != 6 {
			t.Fatalf("%+v %v", r, err)
		}
	})
}
