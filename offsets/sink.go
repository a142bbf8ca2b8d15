package offsets

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"github.com/connectd/connectd/framework/sdk"
	"github.com/connectd/connectd/internal/kafkaadmin"
)

// SinkGroup is the consumer group of a sink connector's tasks, whose
// committed offsets are the connector's sink offsets (Kafka Connect's
// naming).
func SinkGroup(connector string) string { return "connect-" + connector }

// SinkOffset is the committed position of one partition for a sink
// connector: the next offset its tasks will consume.
type SinkOffset struct {
	sdk.TopicPartition
	Offset int64
}

// SinkOffsets returns the committed offsets of connector's consumer group,
// sorted by topic and partition. A group without commits has none.
func SinkOffsets(ctx context.Context, admin *kafka.AdminClient, connector string) ([]SinkOffset, error) {
	group := SinkGroup(connector)
	if err := kafkaadmin.Reachable(ctx, admin); err != nil {
		return nil, fmt.Errorf("sink offsets of %q (group %s): %w", connector, group, err)
	}
	res, err := admin.ListConsumerGroupOffsets(ctx, []kafka.ConsumerGroupTopicPartitions{{Group: group}},
		kafka.SetAdminRequireStableOffsets(true))
	if err != nil {
		return nil, fmt.Errorf("sink offsets of %q (group %s): %w", connector, group, err)
	}
	var out []SinkOffset
	for _, g := range res.ConsumerGroupsTopicPartitions {
		for _, tp := range g.Partitions {
			if tp.Error != nil {
				return nil, fmt.Errorf("sink offsets of %q (group %s) %s[%d]: %w", connector, group, *tp.Topic, tp.Partition, tp.Error)
			}
			if tp.Offset < 0 {
				continue
			}
			out = append(out, SinkOffset{sdk.TopicPartition{Topic: *tp.Topic, Partition: tp.Partition}, int64(tp.Offset)})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Topic != out[j].Topic {
			return out[i].Topic < out[j].Topic
		}
		return out[i].Partition < out[j].Partition
	})
	return out, nil
}

// SinkChange sets (Offset != nil) or resets (Offset == nil) one partition's
// committed offset.
type SinkChange struct {
	sdk.TopicPartition
	Offset *int64
}

// AlterSinkOffsets changes committed offsets of connector's consumer group.
// The group must have no active members (the connector STOPPED), which the
// broker enforces.
//
// Resetting a single partition sets its offset to the partition's log start
// offset: the client library has no DeleteConsumerGroupOffsets call, and
// with the sink consumer's auto.offset.reset=earliest a missing offset and
// the log start offset resume at the same record.
func AlterSinkOffsets(ctx context.Context, admin *kafka.AdminClient, connector string, changes []SinkChange) error {
	if len(changes) == 0 {
		return nil
	}
	group := SinkGroup(connector)
	if err := kafkaadmin.Reachable(ctx, admin); err != nil {
		return fmt.Errorf("sink offsets of %q (group %s): %w", connector, group, err)
	}
	req := map[kafka.TopicPartition]kafka.OffsetSpec{}
	for _, c := range changes {
		if c.Offset == nil {
			topic := c.Topic
			req[kafka.TopicPartition{Topic: &topic, Partition: c.Partition}] = kafka.EarliestOffsetSpec
		}
	}
	starts := map[sdk.TopicPartition]int64{}
	if len(req) > 0 {
		res, err := admin.ListOffsets(ctx, req)
		if err != nil {
			return fmt.Errorf("sink offsets of %q: log start offsets: %w", connector, err)
		}
		for tp, info := range res.ResultInfos {
			if info.Error.Code() != kafka.ErrNoError {
				return fmt.Errorf("sink offsets of %q: log start offset of %s[%d]: %w", connector, *tp.Topic, tp.Partition, info.Error)
			}
			starts[sdk.TopicPartition{Topic: *tp.Topic, Partition: tp.Partition}] = int64(info.Offset)
		}
	}
	tps := make([]kafka.TopicPartition, 0, len(changes))
	for _, c := range changes {
		if c.Offset != nil && *c.Offset < 0 {
			return fmt.Errorf("sink offsets of %q: %s: offset %d is negative", connector, c.TopicPartition, *c.Offset)
		}
		off := starts[c.TopicPartition]
		if c.Offset != nil {
			off = *c.Offset
		}
		topic := c.Topic
		tps = append(tps, kafka.TopicPartition{Topic: &topic, Partition: c.Partition, Offset: kafka.Offset(off)})
	}
	res, err := admin.AlterConsumerGroupOffsets(ctx, []kafka.ConsumerGroupTopicPartitions{{Group: group, Partitions: tps}})
	if err != nil {
		return fmt.Errorf("sink offsets of %q (group %s): %w", connector, group, err)
	}
	var errs []error
	for _, g := range res.ConsumerGroupsTopicPartitions {
		for _, tp := range g.Partitions {
			if tp.Error != nil {
				errs = append(errs, fmt.Errorf("%s[%d]: %w", *tp.Topic, tp.Partition, tp.Error))
			}
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("sink offsets of %q (group %s): %w (the connector must be stopped)", connector, group, errors.Join(errs...))
	}
	return nil
}

// ResetSinkOffsets removes all committed offsets of connector by deleting
// its consumer group, as Kafka Connect does. The group must be empty.
func ResetSinkOffsets(ctx context.Context, admin *kafka.AdminClient, connector string) error {
	group := SinkGroup(connector)
	if err := kafkaadmin.Reachable(ctx, admin); err != nil {
		return fmt.Errorf("reset sink offsets of %q (group %s): %w", connector, group, err)
	}
	res, err := admin.DeleteConsumerGroups(ctx, []string{group})
	if err != nil {
		return fmt.Errorf("reset sink offsets of %q (group %s): %w", connector, group, err)
	}
	for _, r := range res.ConsumerGroupResults {
		switch r.Error.Code() {
		case kafka.ErrNoError, kafka.ErrGroupIDNotFound:
		case kafka.ErrNonEmptyGroup:
			return fmt.Errorf("reset sink offsets of %q: group %s still has members; stop the connector first: %w", connector, group, r.Error)
		default:
			return fmt.Errorf("reset sink offsets of %q (group %s): %w", connector, group, r.Error)
		}
	}
	return nil
}
