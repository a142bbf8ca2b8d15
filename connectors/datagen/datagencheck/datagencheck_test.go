package datagencheck_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"github.com/connectd/connectd/connectors/datagen"
	"github.com/connectd/connectd/connectors/datagen/datagencheck"
	"github.com/connectd/connectd/framework/verify"
	"github.com/connectd/connectd/internal/kafkatest"
)

type rec struct {
	p       int32
	key     string
	value   string
	headers []kafka.Header
}

// produce writes recs in order, one at a time so that the order is exact
// across retries.
func produce(t *testing.T, topic string, recs ...rec) {
	t.Helper()
	p, err := kafka.NewProducer(&kafka.ConfigMap{"bootstrap.servers": kafkatest.Bootstrap(t), "enable.idempotence": true, "linger.ms": 0})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	done := make(chan kafka.Event, 1)
	for _, r := range recs {
		m := &kafka.Message{TopicPartition: kafka.TopicPartition{Topic: &topic, Partition: r.p}, Key: []byte(r.key), Value: []byte(r.value), Headers: r.headers}
		if err := p.Produce(m, done); err != nil {
			t.Fatal(err)
		}
		if m := (<-done).(*kafka.Message); m.TopicPartition.Error != nil {
			t.Fatal(m.TopicPartition.Error)
		}
	}
}

func opts(t *testing.T) verify.ReadOptions {
	return verify.ReadOptions{Bootstrap: kafkatest.Bootstrap(t), Timeout: time.Minute}
}

// counterRec is the datagen counter record seq as the JSON converter
// writes it without schemas.
func counterRec(p int32, seed int64, card int, seq int64) rec {
	c := datagen.CounterAt(seed, card, seq)
	return rec{p: p, key: c.Key, value: fmt.Sprintf(`{"amount":%d,"key":%q,"seq":%d}`, c.Amount, c.Key, c.Seq)}
}

func TestCheck(t *testing.T) {
	ctx := context.Background()
	const (
		seed  = 7
		card  = 5
		tasks = 2
		iters = 40
	)
	spec := datagencheck.Spec{Tasks: tasks, Seed: seed, Cardinality: card, Iterations: iters, IgnoreHeader: "test.bad"}
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
		produce(t, topic, recs...)
		r, err := datagencheck.Check(ctx, opts(t), topic, spec)
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
		if r, err := datagencheck.Check(ctx, opts(t), topic, s); err != nil || !r.OK() {
			t.Fatalf("without iterations: %+v %v", r, err)
		}
		// Expecting more iterations reports the missing tail.
		s.Iterations = iters + 3
		if r, err := datagencheck.Check(ctx, opts(t), topic, s); err != nil || r.Missing != 3*tasks || r.OK() {
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
		produce(t, topic, recs...)
		r, err := datagencheck.Check(ctx, opts(t), topic, spec)
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
		produce(t, topic, recs...)
		r, err := datagencheck.Check(ctx, opts(t), topic, datagencheck.Spec{Tasks: 1, Seed: seed, Cardinality: card, Iterations: 6})
		if err != nil || !r.OK() || r.Distinct != 6 {
			t.Fatalf("%+v %v", r, err)
		}
	})
}
