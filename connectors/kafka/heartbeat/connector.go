package heartbeat

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"strings"
	"time"

	ckafka "github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"github.com/connectd/connectd/framework/sdk"
	"github.com/connectd/connectd/internal/kafkaadmin"
	"github.com/connectd/connectd/internal/kafkalog"
)

// Class and Version of the connector.
const (
	Class   = "KafkaHeartbeatSource"
	Version = "0.1.0"
)

// createTimeout bounds the topic creation in Start: an unreachable target
// fails the connector with a trace instead of hanging it.
const createTimeout = 30 * time.Second

// Connector is KafkaHeartbeatSource.
type Connector struct {
	cfg   *Config
	props map[string]string
}

// NewConnector returns the connector.
func NewConnector() *Connector { return &Connector{} }

var _ sdk.SourceConnector = (*Connector)(nil)

// Spec implements sdk.Connector.
func (c *Connector) Spec() sdk.Spec {
	return sdk.Spec{
		Class: Class, Version: Version, Type: sdk.Source,
		Summary: "Emits MirrorMaker 2 heartbeats to the target's heartbeats topic, for replication monitoring (MirrorHeartbeatConnector).",
		Config:  configDef(),
		// One task owns the one source partition, and the position (always
		// {"offset":0}, as MM2's) lives in the framework's offsets.
		ExactlyOnce: true,
		// Keys and values are MM2's binary format already: the worker's
		// default converters must not wrap them.
		RawBytes: true,
	}
}

// Validate implements sdk.Connector.
func (c *Connector) Validate(_ context.Context, props map[string]string) []sdk.FieldError {
	return crossKeyErrors(props)
}

// Start implements sdk.Connector: it creates the heartbeats topic, so that a
// target that cannot take it fails here with a clear trace.
func (c *Connector) Start(ctx context.Context, cctx sdk.ConnectorContext, props map[string]string) error {
	cfg, err := ParseConfig(props)
	if err != nil {
		return err
	}
	c.cfg, c.props = cfg, maps.Clone(props)
	ctx, cancel := context.WithTimeout(ctx, createTimeout)
	defer cancel()
	return ensureTopic(ctx, cfg, cctx.Logger())
}

// ensureTopic creates the heartbeats topic like MM2 (one partition,
// compacted) unless it exists; an existing topic is used as it is, with a
// warning when it differs from what MM2 would have created.
func ensureTopic(ctx context.Context, cfg *Config, log *slog.Logger) error {
	cm := ckafka.ConfigMap{}
	cm["client.id"] = "connectd-heartbeat-target-admin"
	for k, v := range cfg.TargetAdmin {
		cm[k] = v
	}
	cm["bootstrap.servers"] = cfg.TargetBootstrap
	a, err := kafkalog.NewAdmin(log, cm)
	if err != nil {
		return fmt.Errorf("admin client for %s: %w", cfg.TargetBootstrap, err)
	}
	defer a.Close()
	spec := ckafka.TopicSpecification{Topic: cfg.Topic, NumPartitions: 1, ReplicationFactor: int(cfg.ReplicationFactor),
		Config: map[string]string{"cleanup.policy": "compact"}}
	if err := kafkaadmin.Reachable(ctx, a); err != nil {
		return sdk.Retriable(fmt.Errorf("creating heartbeats topic %s on target %s: %w", cfg.Topic, cfg.TargetBootstrap, err))
	}
	res, err := a.CreateTopics(ctx, []ckafka.TopicSpecification{spec}, ckafka.SetAdminOperationTimeout(createTimeout))
	if err != nil {
		return sdk.Retriable(fmt.Errorf("creating heartbeats topic %s on target %s: %w", cfg.Topic, cfg.TargetBootstrap, err))
	}
	switch code := res[0].Error.Code(); code {
	case ckafka.ErrNoError:
		log.Info("created heartbeats topic", "topic", cfg.Topic, "replication_factor", cfg.ReplicationFactor)
		return nil
	case ckafka.ErrTopicAlreadyExists:
		return checkExisting(ctx, a, cfg.Topic, log)
	case ckafka.ErrTopicAuthorizationFailed, ckafka.ErrClusterAuthorizationFailed:
		// MM2 then assumes the topic exists or is auto-created; so do we,
		// and the first write says whether it does.
		log.Warn("not authorized to create the heartbeats topic; assuming it exists", "topic", cfg.Topic, "error", res[0].Error)
		return nil
	case ckafka.ErrInvalidReplicationFactor:
		return fmt.Errorf("creating heartbeats topic %s on target %s: %w (set %s to at most the number of brokers, or -1 for the broker default)",
			cfg.Topic, cfg.TargetBootstrap, res[0].Error, KeyReplicationFactor)
	default:
		err := fmt.Errorf("creating heartbeats topic %s on target %s: %w", cfg.Topic, cfg.TargetBootstrap, res[0].Error)
		if res[0].Error.IsRetriable() || code == ckafka.ErrTimedOut || code == ckafka.ErrTransport {
			return sdk.Retriable(err)
		}
		return err
	}
}

// checkExisting warns about a heartbeats topic MM2 would not have created:
// it still works (heartbeats go to partition 0), but without compaction it
// keeps every beat until retention removes it.
func checkExisting(ctx context.Context, a *kafkalog.Admin, topic string, log *slog.Logger) error {
	res, err := a.DescribeConfigs(ctx, []ckafka.ConfigResource{{Type: ckafka.ResourceTopic, Name: topic}})
	if err != nil || len(res) != 1 || res[0].Error.Code() != ckafka.ErrNoError {
		log.Warn("heartbeats topic exists; could not read its configuration", "topic", topic, "error", errors.Join(err, errOf(res)))
		return nil
	}
	if p := res[0].Config["cleanup.policy"].Value; !strings.Contains(p, "compact") {
		log.Warn("heartbeats topic exists with cleanup.policy="+p+", not compact as MM2 creates it: "+
			"every heartbeat is kept until retention deletes it", "topic", topic)
	}
	return nil
}

func errOf(res []ckafka.ConfigResourceResult) error {
	if len(res) == 1 && res[0].Error.Code() != ckafka.ErrNoError {
		return res[0].Error
	}
	return nil
}

// TaskConfigs implements sdk.Connector: one task, or none when heartbeats
// are disabled (as MM2).
func (c *Connector) TaskConfigs(context.Context, int) ([]map[string]string, error) {
	if c.cfg == nil || !c.cfg.Enabled {
		return nil, nil
	}
	return []map[string]string{maps.Clone(c.props)}, nil
}

// Stop implements sdk.Connector.
func (c *Connector) Stop(context.Context) error { return nil }

// NewTask implements sdk.SourceConnector.
func (c *Connector) NewTask() sdk.SourceTask { return &Task{} }
