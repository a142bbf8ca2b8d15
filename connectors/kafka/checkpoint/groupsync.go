package checkpoint

import (
	"context"
	"fmt"
	"slices"

	ckafka "github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"github.com/connectd/connectd/internal/kafkaadmin"
)

// syncGroupOffsets commits the latest translated offsets to the same groups
// on the target (sync.group.offsets.enabled).
//
// A group is written only while it has no members on the target: an active
// consumer owns its positions, and moving them under it would make it skip
// or repeat records. The broker enforces the same rule for the admin commit
// (an offset commit without a generation is refused for a non-empty group),
// which closes the window between the describe and the commit. A partition
// is written only where the translated offset is above the group's current
// target offset, so a group is never moved backwards (for instance after it
// consumed on the target, or when a later translation is looser).
func (t *Task) syncGroupOffsets(ctx context.Context) {
	for _, g := range t.groups {
		cps := t.latest[g]
		if len(cps) == 0 {
			continue
		}
		if err := t.syncGroup(ctx, g); err != nil {
			t.warn("groupsync:"+g, "cannot sync the group's offsets to the target; retrying at the next interval", "group", g, "err", err)
		}
	}
}

func (t *Task) syncGroup(ctx context.Context, group string) error {
	active, state, err := t.activeOnTarget(ctx, group)
	if err != nil {
		return err
	}
	if active {
		t.warn("active:"+group, "consumer group is active on the target; its offsets are not synced while it has members",
			"group", group, "state", state)
		return nil
	}
	current, err := t.committed(ctx, t.dst, group)
	if err != nil {
		return err
	}
	var parts []ckafka.TopicPartition
	for k, cp := range t.latest[group] {
		if cur, ok := current[sourcePartition{k.topic, k.partition}]; ok && cur.offset >= cp.DownstreamOffset {
			continue // never backwards, and nothing to do when equal
		}
		topic, md := k.topic, cp.Metadata
		parts = append(parts, ckafka.TopicPartition{Topic: &topic, Partition: k.partition, Offset: ckafka.Offset(cp.DownstreamOffset), Metadata: &md})
	}
	if len(parts) == 0 {
		return nil
	}
	slices.SortFunc(parts, func(a, b ckafka.TopicPartition) int {
		if *a.Topic != *b.Topic {
			if *a.Topic < *b.Topic {
				return -1
			}
			return 1
		}
		return int(a.Partition - b.Partition)
	})
	cctx, cancel := context.WithTimeout(ctx, adminTimeout)
	defer cancel()
	if err := kafkaadmin.Reachable(cctx, t.dst); err != nil {
		return fmt.Errorf("committing offsets of group %s on the target: %w", group, err)
	}
	res, err := t.dst.AlterConsumerGroupOffsets(cctx, []ckafka.ConsumerGroupTopicPartitions{{Group: group, Partitions: parts}})
	if err != nil {
		return fmt.Errorf("committing offsets of group %s on the target: %w", group, err)
	}
	for _, r := range res.ConsumerGroupsTopicPartitions {
		for _, tp := range r.Partitions {
			if tp.Error != nil {
				return fmt.Errorf("committing %s[%d] of group %s on the target: %w", *tp.Topic, tp.Partition, group, tp.Error)
			}
		}
	}
	t.log.Debug("synced group offsets to the target", "group", group, "partitions", len(parts))
	return nil
}

// activeOnTarget reports whether the group has members on the target.
func (t *Task) activeOnTarget(ctx context.Context, group string) (bool, string, error) {
	ctx, cancel := context.WithTimeout(ctx, adminTimeout)
	defer cancel()
	if err := kafkaadmin.Reachable(ctx, t.dst); err != nil {
		return false, "", fmt.Errorf("describing group %s on the target: %w", group, err)
	}
	res, err := t.dst.DescribeConsumerGroups(ctx, []string{group})
	if err != nil {
		return false, "", fmt.Errorf("describing group %s on the target: %w", group, err)
	}
	for _, d := range res.ConsumerGroupDescriptions {
		if d.Error.Code() != ckafka.ErrNoError && d.Error.Code() != ckafka.ErrGroupIDNotFound {
			return false, "", fmt.Errorf("describing group %s on the target: %w", group, d.Error)
		}
		if len(d.Members) > 0 {
			return true, d.State.String(), nil
		}
		switch d.State {
		case ckafka.ConsumerGroupStateEmpty, ckafka.ConsumerGroupStateDead, ckafka.ConsumerGroupStateUnknown:
		default:
			return true, d.State.String(), nil
		}
	}
	return false, "", nil
}
