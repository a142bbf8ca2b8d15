package herder

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"
)

// TopicSpec describes an internal topic (config, offsets or status).
type TopicSpec struct {
	// Purpose names the topic in messages: "config", "offsets", "status".
	Purpose string
	// Key is the worker property naming the topic, e.g.
	// config.storage.topic, for messages that say what to change.
	Key  string
	Name string
	// Partitions and ReplicationFactor for creation; -1 takes the broker's
	// default.
	Partitions        int
	ReplicationFactor int
	// Configs are extra topic configs for creation (the worker's
	// <prefix>.* settings). cleanup.policy is always compact.
	Configs map[string]string
	// ExactPartitions, when > 0, is the partition count an existing topic
	// must have (the config topic needs exactly 1).
	ExactPartitions int
}

// TopicError says what is wrong with an internal topic and what to change.
type TopicError struct {
	Topic string
	Msg   string
}

func (e *TopicError) Error() string { return e.Msg }

// EnsureTopics creates the internal topics that are missing (compacted,
// with the given partitions and replication factor) and verifies the ones
// that exist: every internal topic must be compacted and only compacted,
// and the config topic must have exactly one partition, or the worker
// refuses to start with a *TopicError saying what to change.
func EnsureTopics(ctx context.Context, admin *kafka.AdminClient, log *slog.Logger, specs ...TopicSpec) error {
	for _, s := range specs {
		created, err := ensureTopic(ctx, admin, s)
		if err != nil {
			return err
		}
		if created {
			log.Info("created internal topic", "purpose", s.Purpose, "topic", s.Name, "partitions", s.Partitions, "replication_factor", s.ReplicationFactor)
		}
	}
	return nil
}

func ensureTopic(ctx context.Context, admin *kafka.AdminClient, s TopicSpec) (bool, error) {
	parts, exists, err := topicPartitions(admin, s.Name)
	if err != nil {
		return false, err
	}
	created := false
	if !exists {
		cfg := map[string]string{}
		for k, v := range s.Configs {
			cfg[k] = v
		}
		cfg["cleanup.policy"] = "compact"
		cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		res, err := admin.CreateTopics(cctx, []kafka.TopicSpecification{{
			Topic:             s.Name,
			NumPartitions:     s.Partitions,
			ReplicationFactor: s.ReplicationFactor,
			Config:            cfg,
		}}, kafka.SetAdminOperationTimeout(20*time.Second))
		cancel()
		if err != nil {
			return false, fmt.Errorf("creating the %s topic %s: %w", s.Purpose, s.Name, err)
		}
		switch code := res[0].Error.Code(); code {
		case kafka.ErrNoError:
			created = true
		case kafka.ErrTopicAlreadyExists:
			// Another worker created it meanwhile: verify it below.
		default:
			return false, &TopicError{Topic: s.Name, Msg: fmt.Sprintf("cannot create the %s topic %s: %v (check %s, its replication factor and partitions, and the worker's ACLs)",
				s.Purpose, s.Name, res[0].Error, s.Key)}
		}
		if parts, err = waitForTopic(ctx, admin, s.Name); err != nil {
			return false, err
		}
	}
	if s.ExactPartitions > 0 && parts != s.ExactPartitions {
		return false, &TopicError{Topic: s.Name, Msg: fmt.Sprintf(
			"the %s topic %s has %d partitions but must have exactly %d: set %s to a new topic name (connectd creates it) or recreate %s with %d partition",
			s.Purpose, s.Name, parts, s.ExactPartitions, s.Key, s.Name, s.ExactPartitions)}
	}
	policy, err := cleanupPolicy(ctx, admin, s.Name)
	if err != nil {
		return false, err
	}
	if policy != "compact" {
		return false, &TopicError{Topic: s.Name, Msg: fmt.Sprintf(
			"the %s topic %s has cleanup.policy=%s but must be compacted only: run `kafka-configs.sh --alter --entity-type topics --entity-name %s --add-config cleanup.policy=compact`, or set %s to another topic",
			s.Purpose, s.Name, policy, s.Name, s.Key)}
	}
	return created, nil
}

func topicPartitions(admin *kafka.AdminClient, topic string) (int, bool, error) {
	md, err := admin.GetMetadata(&topic, false, 10000)
	if err != nil {
		return 0, false, fmt.Errorf("reading metadata of topic %s: %w", topic, err)
	}
	tm, ok := md.Topics[topic]
	if !ok || tm.Error.Code() == kafka.ErrUnknownTopicOrPart || tm.Error.Code() == kafka.ErrUnknownTopic {
		return 0, false, nil
	}
	if tm.Error.Code() != kafka.ErrNoError {
		return 0, false, fmt.Errorf("reading metadata of topic %s: %w", topic, tm.Error)
	}
	return len(tm.Partitions), true, nil
}

func waitForTopic(ctx context.Context, admin *kafka.AdminClient, topic string) (int, error) {
	deadline := time.Now().Add(30 * time.Second)
	for {
		n, ok, err := topicPartitions(admin, topic)
		if err == nil && ok && n > 0 {
			return n, nil
		}
		if time.Now().After(deadline) {
			return 0, fmt.Errorf("topic %s did not appear after creation: %v", topic, err)
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func cleanupPolicy(ctx context.Context, admin *kafka.AdminClient, topic string) (string, error) {
	cctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	res, err := admin.DescribeConfigs(cctx, []kafka.ConfigResource{{Type: kafka.ResourceTopic, Name: topic}})
	if err != nil {
		return "", fmt.Errorf("describing topic %s: %w", topic, err)
	}
	if len(res) != 1 {
		return "", errors.New("describing topic " + topic + ": no result")
	}
	if res[0].Error.Code() != kafka.ErrNoError {
		return "", fmt.Errorf("describing topic %s: %w", topic, res[0].Error)
	}
	e, ok := res[0].Config["cleanup.policy"]
	if !ok {
		return "delete", nil // the broker default
	}
	return strings.ReplaceAll(e.Value, " ", ""), nil
}
