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
	if os.Getenv("RAWCOPY_DEBUG") != "" {
		log.Printf("init transactions %v", time.Since(ti))
	}

	md, err := c.GetMetadata(&source, false, 10000)
	if err != nil {
		return 0, err
	}
	var tps []ckafka.TopicPartition
	for _, pm := range md.Topics[source].Partitions {
		tps = append(tps, ckafka.TopicPartition{Topic: &source, Partition: pm.ID, Offset: ckafka.OffsetBeginning})
	}
	if err := c.Assign(tps); err != nil {
		return 0, err
	}
	gmd, err := c.GetConsumerGroupMetadata()
	if err != nil {
		return 0, err
	}

	var copied int64
	next := map[int32]ckafka.Offset{} // next offset to consume, per partition
	for expect == 0 || copied < expect {
		if err := p.BeginTransaction(); err != nil {
			return copied, err
		}
		var inTxn int64
		deadline := time.Now().Add(interval)
		for time.Now().Before(deadline) {
			ev := c.Poll(int(max(time.Until(deadline), time.Millisecond).Milliseconds()))
			m, ok := ev.(*ckafka.Message)
			if !ok {
				if e, isErr := ev.(ckafka.Error); isErr && e.IsFatal() {
					return copied, e
				}
				continue
			}
			if m.TopicPartition.Error != nil {
				return copied, m.TopicPartition.Error
			}
			out := &ckafka.Message{
				TopicPartition: ckafka.TopicPartition{Topic: &target, Partition: m.TopicPartition.Partition},
				Key:            m.Key, Value: m.Value, Headers: m.Headers, Timestamp: m.Timestamp,
			}
			for {
				err := p.Produce(out, nil)
				if err == nil {
					break
				}
				if e, ok := err.(ckafka.Error); ok && e.Code() == ckafka.ErrQueueFull {
					p.Flush(10)
					continue
				}
				return copied, err
			}
			next[m.TopicPartition.Partition] = m.TopicPartition.Offset + 1
			inTxn++
			if expect > 0 && copied+inTxn >= expect {
				break
			}
		}
		if inTxn == 0 {
			if err := p.AbortTransaction(ctx); err != nil {
				return copied, err
			}
			continue
		}
		offs := make([]ckafka.TopicPartition, 0, len(next))
		for part, o := range next {
			offs = append(offs, ckafka.TopicPartition{Topic: &source, Partition: part, Offset: o})
		}
		if err := p.SendOffsetsToTransaction(ctx, offs, gmd); err != nil {
			return copied, fmt.Errorf("send offsets: %w", err)
		}
		tc := time.Now()
		if err := p.CommitTransaction(ctx); err != nil {
			return copied, fmt.Errorf("commit: %w", err)
		}
		if os.Getenv("RAWCOPY_DEBUG") != "" {
			log.Printf("txn %d records, commit %v", inTxn, time.Since(tc))
		}
		copied += inTxn
	}
	return copied, nil
}
