package quickstart

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"
)

// CreateTopics creates the pipeline's topics with partitions partitions
// each (the generator's topic and, with a replication stage, its replica
// topic with the same count, as partition.mapping=preserve wants) and waits
// until the broker lists them. Existing topics are left as they are.
func CreateTopics(ctx context.Context, bootstrap string, p *Pipeline, partitions int) error {
	admin, err := kafka.NewAdminClient(&kafka.ConfigMap{"bootstrap.servers": bootstrap, "log_level": 3})
	if err != nil {
		return err
	}
	defer admin.Close()
	topics := []string{p.OrdersTopic}
	if p.ReplicaTopic != "" {
		topics = append(topics, p.ReplicaTopic)
	}
	specs := make([]kafka.TopicSpecification, len(topics))
	for i, t := range topics {
		specs[i] = kafka.TopicSpecification{Topic: t, NumPartitions: partitions, ReplicationFactor: -1}
	}
	res, err := admin.CreateTopics(ctx, specs)
	if err != nil {
		return fmt.Errorf("create topics on %s: %w", bootstrap, err)
	}
	for _, r := range res {
		if c := r.Error.Code(); c != kafka.ErrNoError && c != kafka.ErrTopicAlreadyExists {
			return fmt.Errorf("create topic %s: %w", r.Topic, r.Error)
		}
	}
	for _, t := range topics {
		for {
			md, err := admin.GetMetadata(&t, false, 5000)
			if err == nil && md.Topics[t].Error.Code() == kafka.ErrNoError && len(md.Topics[t].Partitions) > 0 {
				break
			}
			select {
			case <-ctx.Done():
				return fmt.Errorf("topic %s did not appear: %w", t, ctx.Err())
			case <-time.After(200 * time.Millisecond):
			}
		}
	}
	return nil
}

// DeleteAll deletes topics and consumer groups of a finished run (used
// when the broker is shared and outlives the quickstart). Missing ones are
// not an error.
func DeleteAll(ctx context.Context, bootstrap string, topics, groups []string) error {
	admin, err := kafka.NewAdminClient(&kafka.ConfigMap{"bootstrap.servers": bootstrap, "log_level": 3})
	if err != nil {
		return err
	}
	defer admin.Close()
	var errs []error
	if len(groups) > 0 {
		errs = append(errs, deleteGroups(ctx, admin, groups))
	}
	if len(topics) > 0 {
		res, err := admin.DeleteTopics(ctx, topics)
		if err != nil {
			errs = append(errs, err)
		}
		for _, r := range res {
			if c := r.Error.Code(); c != kafka.ErrNoError && c != kafka.ErrUnknownTopicOrPart && c != kafka.ErrUnknownTopic {
				errs = append(errs, fmt.Errorf("delete topic %s: %w", r.Topic, r.Error))
			}
		}
	}
	return errors.Join(errs...)
}

// counter counts the committed records of some topics with one
// read_committed consumer, from the beginning. Topics that do not exist
// yet are assigned when they appear.
type counter struct {
	c      *kafka.Consumer
	topics []string

	mu       sync.Mutex
	counts   map[string]int64
	assigned map[string]int // topic → partitions assigned
	err      error
}

func newCounter(bootstrap string, topics []string) (*counter, error) {
	c, err := kafka.NewConsumer(&kafka.ConfigMap{
		"bootstrap.servers": bootstrap,
		// Never joins the group (partitions are assigned by hand) and never
		// commits; librdkafka wants a group id all the same.
		"group.id":           "connectd-quickstart-watch-" + strconv.Itoa(os.Getpid()),
		"enable.auto.commit": false,
		"isolation.level":    "read_committed",
		"auto.offset.reset":  "earliest",
		"log_level":          3,
	})
	if err != nil {
		return nil, err
	}
	return &counter{c: c, topics: topics, counts: map[string]int64{}, assigned: map[string]int{}}, nil
}

// assign adds the partitions of topics that appeared since the last call.
func (k *counter) assign() {
	for _, t := range k.topics {
		md, err := k.c.GetMetadata(&t, false, 2000)
		if err != nil {
			continue
		}
		tm, ok := md.Topics[t]
		if !ok || tm.Error.Code() != kafka.ErrNoError {
			continue
		}
		k.mu.Lock()
		have := k.assigned[t]
		k.mu.Unlock()
		if len(tm.Partitions) <= have {
			continue
		}
		var tps []kafka.TopicPartition
		for _, pm := range tm.Partitions {
			if int(pm.ID) >= have {
				tps = append(tps, kafka.TopicPartition{Topic: &t, Partition: pm.ID, Offset: kafka.OffsetBeginning})
			}
		}
		if err := k.c.IncrementalAssign(tps); err != nil {
			k.setErr(err)
			continue
		}
		k.mu.Lock()
		k.assigned[t] = len(tm.Partitions)
		k.mu.Unlock()
	}
}

func (k *counter) setErr(err error) {
	k.mu.Lock()
	k.err = err
	k.mu.Unlock()
}

func (k *counter) failure() error {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.err
}

// run polls until ctx is done, then closes the consumer.
func (k *counter) run(ctx context.Context) {
	defer k.c.Close()
	next := time.Now()
	for ctx.Err() == nil {
		if time.Now().After(next) {
			k.assign()
			next = time.Now().Add(time.Second)
		}
		switch e := k.c.Poll(200).(type) {
		case *kafka.Message:
			if e.TopicPartition.Topic != nil {
				k.mu.Lock()
				k.counts[*e.TopicPartition.Topic]++
				k.mu.Unlock()
			}
		case kafka.Error:
			if e.IsFatal() {
				k.setErr(e)
				return
			}
		}
	}
}

// count returns the records counted in topic so far and whether the topic
// exists.
func (k *counter) count(topic string) (int64, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.counts[topic], k.assigned[topic] > 0
}

// groupLag returns how far group's committed offsets are behind the end of
// topic, summed over partitions, in offsets (a committed transaction's
// marker takes an offset too). ok is false while the group has committed
// nothing.
func groupLag(ctx context.Context, admin *kafka.AdminClient, c *kafka.Consumer, group, topic string) (lag int64, ok bool, err error) {
	md, err := admin.GetMetadata(&topic, false, 2000)
	if err != nil {
		return 0, false, err
	}
	tm, found := md.Topics[topic]
	if !found || tm.Error.Code() != kafka.ErrNoError {
		return 0, false, nil
	}
	tps := make([]kafka.TopicPartition, len(tm.Partitions))
	for i, pm := range tm.Partitions {
		tps[i] = kafka.TopicPartition{Topic: &topic, Partition: pm.ID}
	}
	res, err := admin.ListConsumerGroupOffsets(ctx, []kafka.ConsumerGroupTopicPartitions{{Group: group, Partitions: tps}})
	if err != nil {
		return 0, false, err
	}
	if len(res.ConsumerGroupsTopicPartitions) != 1 {
		return 0, false, fmt.Errorf("offsets of group %s: %d results", group, len(res.ConsumerGroupsTopicPartitions))
	}
	for _, tp := range res.ConsumerGroupsTopicPartitions[0].Partitions {
		_, high, err := c.QueryWatermarkOffsets(topic, tp.Partition, 2000)
		if err != nil {
			return 0, false, err
		}
		committed := int64(tp.Offset)
		if tp.Offset < 0 {
			// Nothing committed for this partition yet: all of it is behind.
			committed = 0
		} else {
			ok = true
		}
		lag += max(high-committed, 0)
	}
	return lag, ok, nil
}

// deleteGroups deletes consumer groups. A group that still has a member
// is tried again until ctx ends: a worker that could not close a sink
// task's consumer in time (its task abandoned at shutdown) leaves the
// member behind until its session times out.
func deleteGroups(ctx context.Context, admin *kafka.AdminClient, groups []string) error {
	for {
		res, err := admin.DeleteConsumerGroups(ctx, groups)
		if err != nil {
			return err
		}
		var errs []error
		var busy []string
		for _, g := range res.ConsumerGroupResults {
			switch g.Error.Code() {
			case kafka.ErrNoError, kafka.ErrGroupIDNotFound:
			case kafka.ErrNonEmptyGroup:
				busy = append(busy, g.Group)
				errs = append(errs, fmt.Errorf("delete group %s: %w", g.Group, g.Error))
			default:
				errs = append(errs, fmt.Errorf("delete group %s: %w", g.Group, g.Error))
			}
		}
		if len(busy) == 0 || len(busy) < len(errs) {
			return errors.Join(errs...)
		}
		select {
		case <-ctx.Done():
			return errors.Join(append(errs, fmt.Errorf("groups %v still had members when the time was up: %w", busy, ctx.Err()))...)
		case <-time.After(time.Second):
		}
		groups = busy
	}
}
