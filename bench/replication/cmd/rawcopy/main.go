// Command rawcopy is the "physical limit" of exactly-once Kafka→Kafka
// copying in the replication benchmark: one read_committed consumer and
// one transactional producer in a single loop on the same
// confluent-kafka-go/librdkafka as connectd, with no framework, no plugin
// boundary and no offsets topic (consumer offsets go into the transaction
// with SendOffsetsToTransaction, KIP-447 style).
//
// It sets internal/brokerpoll's wait as the connectd worker does by
// default (-busy-poll-wait-ms), so that its producer waits for produce
// responses instead of busy-polling: the ratio against it then measures
// the framework, not that difference.
//
// It copies every partition of -source to the same partition of -target,
// committing a transaction every -commit-interval, and exits once -expect
// records are committed.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"strings"
	"time"

	ckafka "github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"github.com/connectd/connectd/internal/brokerpoll"
)

type kvFlags map[string]string

func (f kvFlags) String() string { return fmt.Sprint(map[string]string(f)) }
func (f kvFlags) Set(s string) error {
	k, v, ok := strings.Cut(s, "=")
	if !ok {
		return fmt.Errorf("want key=value, got %q", s)
	}
	f[k] = v
	return nil
}

func main() {
	var (
		bootstrap = flag.String("bootstrap", "", "bootstrap servers (source and target)")
		source    = flag.String("source", "", "source topic")
		target    = flag.String("target", "", "target topic (must exist with at least the source's partitions)")
		group     = flag.String("group", "rawcopy", "consumer group id (offsets are only written inside transactions)")
		txnID     = flag.String("transactional-id", "rawcopy", "producer transactional.id")
		interval  = flag.Duration("commit-interval", 100*time.Millisecond, "transaction length")
		expect    = flag.Int64("expect", 0, "exit after this many records are committed (0: run until killed)")
		pollWait  = flag.Int("busy-poll-wait-ms", 1, "as the worker's rdkafka.busy.poll.wait.ms (0: librdkafka's own busy polls)")
		prodProps = kvFlags{}
		consProps = kvFlags{}
	)
	flag.Var(prodProps, "P", "producer property key=value (repeatable)")
	flag.Var(consProps, "C", "consumer property key=value (repeatable)")
	flag.Parse()
	if *bootstrap == "" || *source == "" || *target == "" {
		flag.Usage()
		os.Exit(2)
	}
	if err := brokerpoll.SetWaitMillis(*pollWait); err != nil {
		log.Fatalf("rawcopy: -busy-poll-wait-ms: %v", err)
	}
	n, err := run(*bootstrap, *source, *target, *group, *txnID, *interval, *expect, prodProps, consProps)
	if err != nil {
		log.Fatalf("rawcopy: %v (after %d records)", err, n)
	}
}

func run(bootstrap, source, target, group, txnID string, interval time.Duration, expect int64, prodProps, consProps kvFlags) (int64, error) {
	ctx := context.Background()
	debug := os.Getenv("RAWCOPY_DEBUG") != ""
	cc := ckafka.ConfigMap{
		"bootstrap.servers": bootstrap, "group.id": group, "isolation.level": "read_committed",
		"enable.auto.commit": false, "enable.auto.offset.store": false, "auto.offset.reset": "earliest",
	}
	for k, v := range consProps {
		cc[k] = v
	}
	c, err := ckafka.NewConsumer(&cc)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	pc := ckafka.ConfigMap{
		"bootstrap.servers": bootstrap, "transactional.id": txnID, "enable.idempotence": true,
		"go.delivery.reports": false,
	}
	for k, v := range prodProps {
		pc[k] = v
	}
	p, err := ckafka.NewProducer(&pc)
	if err != nil {
		return 0, err
	}
	defer p.Close()
	ti := time.Now()
	if err := p.InitTransactions(ctx); err != nil {
		return 0, fmt.Errorf("init transactions: %w", err)
	}
	if debug {
		log.Printf("init transactions %v", time.Since(ti))
	}
	gmd, err := assignAll(c, source)
	if err != nil {
		return 0, err
	}
	cp := &copier{
		c: c, p: p, source: source, target: target, interval: interval, expect: expect, debug: debug,
		gmd: gmd, next: map[int32]ckafka.Offset{},
	}
	return cp.loop(ctx)
}

// assignAll assigns every partition of topic from its beginning and returns
// the group metadata that commits offsets within a transaction.
func assignAll(c *ckafka.Consumer, topic string) (*ckafka.ConsumerGroupMetadata, error) {
	md, err := c.GetMetadata(&topic, false, 10000)
	if err != nil {
		return nil, err
	}
	var tps []ckafka.TopicPartition
	for _, pm := range md.Topics[topic].Partitions {
		tps = append(tps, ckafka.TopicPartition{Topic: &topic, Partition: pm.ID, Offset: ckafka.OffsetBeginning})
	}
	if err := c.Assign(tps); err != nil {
		return nil, err
	}
	return c.GetConsumerGroupMetadata()
}

// copier is the copy loop: one transaction per interval, holding what was
// consumed in it and the consumer's offsets.
type copier struct {
	c              *ckafka.Consumer
	p              *ckafka.Producer
	source, target string
	interval       time.Duration
	expect         int64
	debug          bool
	gmd            *ckafka.ConsumerGroupMetadata
	next           map[int32]ckafka.Offset // next offset to consume, per partition
}

// loop copies transaction after transaction until expect records are
// committed (forever when expect is 0) and returns how many were.
func (cp *copier) loop(ctx context.Context) (int64, error) {
	var copied int64
	for cp.expect == 0 || copied < cp.expect {
		if err := cp.p.BeginTransaction(); err != nil {
			return copied, err
		}
		inTxn, err := cp.fill(copied)
		if err != nil {
			return copied, err
		}
		if inTxn == 0 {
			if err := cp.p.AbortTransaction(ctx); err != nil {
				return copied, err
			}
			continue
		}
		if err := cp.commit(ctx, inTxn); err != nil {
			return copied, err
		}
		copied += inTxn
	}
	return copied, nil
}

// fill copies records into the open transaction for one interval, or until
// expect would be reached, and returns how many it copied.
func (cp *copier) fill(copied int64) (int64, error) {
	var inTxn int64
	deadline := time.Now().Add(cp.interval)
	for time.Now().Before(deadline) {
		ev := cp.c.Poll(int(max(time.Until(deadline), time.Millisecond).Milliseconds()))
		m, ok := ev.(*ckafka.Message)
		if !ok {
			if e, isErr := ev.(ckafka.Error); isErr && e.IsFatal() {
				return inTxn, e
			}
			continue
		}
		if m.TopicPartition.Error != nil {
			return inTxn, m.TopicPartition.Error
		}
		out := &ckafka.Message{
			TopicPartition: ckafka.TopicPartition{Topic: &cp.target, Partition: m.TopicPartition.Partition},
			Key:            m.Key, Value: m.Value, Headers: m.Headers, Timestamp: m.Timestamp,
		}
		if err := cp.produce(out); err != nil {
			return inTxn, err
		}
		cp.next[m.TopicPartition.Partition] = m.TopicPartition.Offset + 1
		inTxn++
		if cp.expect > 0 && copied+inTxn >= cp.expect {
			break
		}
	}
	return inTxn, nil
}

// produce enqueues m, flushing while librdkafka's queue is full.
func (cp *copier) produce(m *ckafka.Message) error {
	for {
		err := cp.p.Produce(m, nil)
		if err == nil {
			return nil
		}
		if e, ok := err.(ckafka.Error); ok && e.Code() == ckafka.ErrQueueFull {
			cp.p.Flush(10)
			continue
		}
		return err
	}
}

// commit adds the consumed offsets to the transaction and commits it.
func (cp *copier) commit(ctx context.Context, inTxn int64) error {
	offs := make([]ckafka.TopicPartition, 0, len(cp.next))
	for part, o := range cp.next {
		offs = append(offs, ckafka.TopicPartition{Topic: &cp.source, Partition: part, Offset: o})
	}
	if err := cp.p.SendOffsetsToTransaction(ctx, offs, cp.gmd); err != nil {
		return fmt.Errorf("send offsets: %w", err)
	}
	tc := time.Now()
	if err := cp.p.CommitTransaction(ctx); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	if cp.debug {
		log.Printf("txn %d records, commit %v", inTxn, time.Since(tc))
	}
	return nil
}
