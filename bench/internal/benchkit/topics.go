package benchkit

import (
	"context"
	"fmt"
	"slices"
	"time"

	ckafka "github.com/confluentinc/confluent-kafka-go/v2/kafka"
)

// Admin is an admin client of the cluster at bootstrap; the caller closes it.
func Admin(bootstrap string) (*ckafka.AdminClient, error) {
	return ckafka.NewAdminClient(&ckafka.ConfigMap{"bootstrap.servers": bootstrap})
}

// CreateTopic creates a topic with replication factor 1.
func CreateTopic(ctx context.Context, bootstrap, topic string, partitions int) error {
	a, err := Admin(bootstrap)
	if err != nil {
		return err
	}
	defer a.Close()
	res, err := a.CreateTopics(ctx, []ckafka.TopicSpecification{{Topic: topic, NumPartitions: partitions, ReplicationFactor: 1}})
	if err != nil {
		return err
	}
	if c := res[0].Error.Code(); c != ckafka.ErrNoError {
		return fmt.Errorf("create topic %s: %w", topic, res[0].Error)
	}
	return nil
}

// DeleteTopics deletes topics; one that does not exist is fine.
func DeleteTopics(ctx context.Context, bootstrap string, topics ...string) error {
	a, err := Admin(bootstrap)
	if err != nil {
		return err
	}
	defer a.Close()
	res, err := a.DeleteTopics(ctx, topics)
	if err != nil {
		return err
	}
	for _, r := range res {
		if c := r.Error.Code(); c != ckafka.ErrNoError && c != ckafka.ErrUnknownTopicOrPart {
			return fmt.Errorf("delete topic %s: %w", r.Topic, r.Error)
		}
	}
	return nil
}

// ListTopics returns the topic names starting with prefix.
func ListTopics(bootstrap, prefix string) ([]string, error) {
	a, err := Admin(bootstrap)
	if err != nil {
		return nil, err
	}
	defer a.Close()
	md, err := a.GetMetadata(nil, true, 10000)
	if err != nil {
		return nil, err
	}
	var out []string
	for t := range md.Topics {
		if len(t) >= len(prefix) && t[:len(prefix)] == prefix {
			out = append(out, t)
		}
	}
	return out, nil
}

// WaitTopicGone waits until a deleted topic has left the cluster's
// metadata, so that creating it again does not fail.
func WaitTopicGone(ctx context.Context, bootstrap, topic string) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		names, err := ListTopics(bootstrap, topic)
		if err == nil && !slices.Contains(names, topic) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("topic %s still exists 30s after its deletion", topic)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}
