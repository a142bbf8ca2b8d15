package offsets

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"github.com/connectd/connectd/internal/kafkaadmin"
)

// Problems VerifyTopic reports; a *TopicError wraps one of them.
var (
	ErrTopicMissing   = errors.New("offsets topic does not exist")
	ErrNotCompacted   = errors.New("offsets topic is not compacted")
	ErrPartitionCount = errors.New("offsets topic has the wrong partition count")
)

// TopicError explains why an offsets topic cannot be used and what to
// change. errors.Is matches ErrTopicMissing, ErrNotCompacted or
// ErrPartitionCount.
type TopicError struct {
	Topic   string
	Problem error
	Detail  string // what was found
	Fix     string // what to change
}

func (e *TopicError) Error() string {
	return fmt.Sprintf("offsets topic %q: %s; %s", e.Topic, e.Detail, e.Fix)
}

func (e *TopicError) Unwrap() error { return e.Problem }

// TopicSpec describes an offsets topic to create.
type TopicSpec struct {
	Name string
	// Partitions is the partition count (Kafka Connect's default for the
	// worker's topic is 25); <= 0 uses the broker default.
	Partitions int
	// ReplicationFactor; <= 0 uses the broker default.
	ReplicationFactor int
	// Config holds extra topic configs. cleanup.policy is always compact.
	Config map[string]string
}

// VerifyTopic checks that topic exists, has cleanup.policy=compact (only),
// and, when wantPartitions > 0, exactly wantPartitions partitions. The
// error is a *TopicError naming the fix.
func VerifyTopic(ctx context.Context, admin *kafka.AdminClient, topic string, wantPartitions int) error {
	n, err := partitionCount(ctx, admin, topic)
	if err != nil {
		return err
	}
	if wantPartitions > 0 && n != wantPartitions {
		return &TopicError{
			Topic:   topic,
			Problem: ErrPartitionCount,
			Detail:  fmt.Sprintf("it has %d partitions but %d are configured", n, wantPartitions),
			Fix: fmt.Sprintf("set offset.storage.partitions=%d to match the topic, or point offset.storage.topic at a new topic; "+
				"never add partitions to an offsets topic that holds offsets (keys would move to other partitions and a stale offset could win)", n),
		}
	}
	res, err := admin.DescribeConfigs(ctx, []kafka.ConfigResource{{Type: kafka.ResourceTopic, Name: topic}})
	if err != nil {
		return fmt.Errorf("offsets topic %q: describe configs: %w", topic, err)
	}
	if len(res) != 1 {
		return fmt.Errorf("offsets topic %q: describe configs returned %d results", topic, len(res))
	}
	if c := res[0].Error.Code(); c != kafka.ErrNoError {
		return fmt.Errorf("offsets topic %q: describe configs: %w", topic, res[0].Error)
	}
	policy := res[0].Config["cleanup.policy"].Value
	if !compactOnly(policy) {
		return &TopicError{
			Topic:   topic,
			Problem: ErrNotCompacted,
			Detail:  fmt.Sprintf("it has cleanup.policy=%s", policy),
			Fix: fmt.Sprintf("offsets topics must have cleanup.policy=compact only, or old offsets are deleted by retention: "+
				"run kafka-configs.sh --bootstrap-server <broker> --alter --entity-type topics --entity-name %s --add-config cleanup.policy=compact", topic),
		}
	}
	return nil
}

func compactOnly(policy string) bool {
	var ps []string
	for p := range strings.SplitSeq(policy, ",") {
		if p = strings.TrimSpace(p); p != "" {
			ps = append(ps, p)
		}
	}
	return slices.Equal(ps, []string{"compact"})
}

func partitionCount(ctx context.Context, admin *kafka.AdminClient, topic string) (int, error) {
	md, err := admin.GetMetadata(&topic, false, timeoutMs(ctx, 10000))
	if err != nil {
		return 0, fmt.Errorf("offsets topic %q: metadata: %w", topic, err)
	}
	tm, ok := md.Topics[topic]
	if !ok || tm.Error.Code() == kafka.ErrUnknownTopicOrPart || tm.Error.Code() == kafka.ErrUnknownTopic {
		return 0, missing(topic)
	}
	if tm.Error.Code() != kafka.ErrNoError {
		return 0, fmt.Errorf("offsets topic %q: metadata: %w", topic, tm.Error)
	}
	if len(tm.Partitions) == 0 {
		return 0, missing(topic)
	}
	return len(tm.Partitions), nil
}

func missing(topic string) error {
	return &TopicError{
		Topic:   topic,
		Problem: ErrTopicMissing,
		Detail:  "it does not exist",
		Fix: fmt.Sprintf("create it compacted (kafka-topics.sh --bootstrap-server <broker> --create --topic %s --partitions 25 "+
			"--replication-factor <n> --config cleanup.policy=compact) or set offsets.storage.topic / offset.storage.topic to an existing compacted topic", topic),
	}
}

// CreateTopic creates a compacted offsets topic, or verifies an existing
// one (same checks as VerifyTopic, the partition count included).
func CreateTopic(ctx context.Context, admin *kafka.AdminClient, spec TopicSpec) error {
	cfg := map[string]string{}
	for k, v := range spec.Config {
		cfg[k] = v
	}
	cfg["cleanup.policy"] = "compact"
	parts, rf := spec.Partitions, spec.ReplicationFactor
	if parts <= 0 {
		parts = -1
	}
	if rf <= 0 {
		rf = -1
	}
	if err := kafkaadmin.Reachable(ctx, admin); err != nil {
		return fmt.Errorf("offsets topic %q: %w", spec.Name, err)
	}
	res, err := admin.CreateTopics(ctx, []kafka.TopicSpecification{{
		Topic: spec.Name, NumPartitions: parts, ReplicationFactor: rf, Config: cfg,
	}})
	if err != nil {
		return fmt.Errorf("create offsets topic %q: %w", spec.Name, err)
	}
	switch c := res[0].Error.Code(); c {
	case kafka.ErrNoError, kafka.ErrTopicAlreadyExists:
	default:
		return fmt.Errorf("create offsets topic %q: %w", spec.Name, res[0].Error)
	}
	// A new topic's metadata reaches the broker's cache shortly after
	// CreateTopics returns.
	deadline := time.Now().Add(30 * time.Second)
	for wait := 20 * time.Millisecond; ; wait = min(2*wait, time.Second) {
		err := VerifyTopic(ctx, admin, spec.Name, spec.Partitions)
		if !errors.Is(err, ErrTopicMissing) || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(wait):
		}
	}
}

// timeoutMs bounds a librdkafka call that takes a millisecond timeout
// instead of a context.
func timeoutMs(ctx context.Context, def int) int {
	if dl, ok := ctx.Deadline(); ok {
		ms := int(time.Until(dl).Milliseconds())
		if ms < 1 {
			ms = 1
		}
		return min(ms, def)
	}
	return def
}
