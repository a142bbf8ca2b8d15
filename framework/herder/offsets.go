package herder

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"github.com/connectd/connectd/framework/herder/clusterstate"
	"github.com/connectd/connectd/framework/rest/api"
	"github.com/connectd/connectd/framework/sdk"
	"github.com/connectd/connectd/offsets"
)

// Offsets REST operations (KIP-875). Source offsets live on the
// connector's offsets topic (offsets.storage.topic, else the worker's);
// sink offsets are the committed offsets of consumer group
// connect-<connector>, shown in Kafka Connect's form:
// {"partition":{"kafka_topic":t,"kafka_partition":p},"offset":{"kafka_offset":o}}.

const (
	sinkTopicKey     = "kafka_topic"
	sinkPartitionKey = "kafka_partition"
	sinkOffsetKey    = "kafka_offset"

	msgAltered = "The Connect framework-managed offsets for this connector have been altered successfully. However, if this connector manages offsets externally, they will need to be manually altered in the system that the connector uses."
	msgReset   = "The Connect framework-managed offsets for this connector have been reset successfully. However, if this connector manages offsets externally, they will need to be manually reset in the system that the connector uses."
)

func (h *Herder) offsetStore(cfg map[string]string) (*offsets.Store, error) {
	topic := strings.TrimSpace(cfg["offsets.storage.topic"])
	if topic == "" {
		topic = h.cfg.OffsetsTopic
	}
	client := map[string]string{"bootstrap.servers": h.cfg.BootstrapServers}
	for k, v := range h.cfg.ClientProps {
		client[k] = v
	}
	return offsets.NewStore(offsets.Config{Topic: topic, Client: client, Logger: h.log})
}

// typed returns the connector's config and type, or an error when the
// connector or its plugin is unknown.
func (h *Herder) typed(snap *clusterstate.Snapshot, name string) (map[string]string, api.ConnectorType, error) {
	cfg, ok := snap.ConnectorConfig(name)
	if !ok {
		return nil, "", connectorNotFound(name)
	}
	t := h.connectorType(cfg)
	if t == api.TypeUnknown {
		return nil, "", &BadRequestError{Msg: fmt.Sprintf("Cannot determine whether connector %s is a source or a sink: its connector.class %q is not installed on this worker", name, cfg["connector.class"])}
	}
	return cfg, t, nil
}

// Offsets is GET /connectors/{c}/offsets.
func (h *Herder) Offsets(ctx context.Context, name string) (api.ConnectorOffsets, error) {
	snap, err := h.snapshot(ctx)
	if err != nil {
		return api.ConnectorOffsets{}, err
	}
	cfg, t, err := h.typed(snap, name)
	if err != nil {
		return api.ConnectorOffsets{}, err
	}
	out := api.ConnectorOffsets{Offsets: []api.ConnectorOffset{}}
	if t == api.TypeSink {
		if h.member == nil {
			return out, h.notStarted()
		}
		list, err := offsets.SinkOffsets(ctx, h.member.Admin(), name)
		if err != nil {
			return out, transient(ctx, err)
		}
		for _, o := range list {
			out.Offsets = append(out.Offsets, api.ConnectorOffset{
				Partition: map[string]any{sinkTopicKey: o.Topic, sinkPartitionKey: o.Partition},
				Offset:    map[string]any{sinkOffsetKey: o.Offset},
			})
		}
		return out, nil
	}
	store, err := h.offsetStore(cfg)
	if err != nil {
		return out, err
	}
	list, err := store.Read(ctx, name)
	if err != nil {
		return out, transient(ctx, err)
	}
	for _, o := range list {
		var p, v map[string]any
		if err := json.Unmarshal(o.Partition, &p); err != nil {
			return out, fmt.Errorf("source partition %s: %w", o.Partition, err)
		}
		if err := json.Unmarshal(o.Offset, &v); err != nil {
			return out, fmt.Errorf("source offset %s: %w", o.Offset, err)
		}
		out.Offsets = append(out.Offsets, api.ConnectorOffset{Partition: p, Offset: v})
	}
	return out, nil
}

// modifyOffsets runs an offsets change on the leader, after Kafka
// Connect's checks: the connector exists and is STOPPED with no tasks.
func (h *Herder) modifyOffsets(ctx context.Context, name string, change func(cfg map[string]string, t api.ConnectorType, snap *clusterstate.Snapshot) error) error {
	_, err := h.asLeader(ctx, func(s *clusterstate.Snapshot) ([]*kafka.Message, error) {
		cfg, t, err := h.typed(s, name)
		if err != nil {
			return nil, err
		}
		if s.Target(name) != clusterstate.TargetStopped || s.TaskCount(name) != 0 {
			return nil, &BadRequestError{Msg: fmt.Sprintf("Connectors must be in the STOPPED state before their offsets can be modified. This can be done for the specified connector by issuing a 'PUT' request to the '/connectors/%s/stop' endpoint", name)}
		}
		return nil, change(cfg, t, s)
	})
	return err
}

// AlterOffsets is PATCH /connectors/{c}/offsets.
func (h *Herder) AlterOffsets(ctx context.Context, name string, body api.ConnectorOffsets) (string, error) {
	if len(body.Offsets) == 0 {
		return "", &BadRequestError{Msg: "Partitions / offsets need to be provided for an alter offsets request"}
	}
	err := h.modifyOffsets(ctx, name, func(cfg map[string]string, t api.ConnectorType, s *clusterstate.Snapshot) error {
		if t == api.TypeSink {
			changes, err := sinkChanges(body)
			if err != nil {
				return err
			}
			return offsets.AlterSinkOffsets(ctx, h.member.Admin(), name, changes)
		}
		list := make([]offsets.Offset, 0, len(body.Offsets))
		for i, o := range body.Offsets {
			if o.Partition == nil {
				return &BadRequestError{Msg: fmt.Sprintf("offsets[%d]: the source partition must be a JSON object", i)}
			}
			entry := offsets.Offset{Partition: mustJSON(o.Partition)}
			if o.Offset != nil {
				entry.Offset = mustJSON(o.Offset)
			}
			list = append(list, entry)
		}
		store, err := h.offsetStore(cfg)
		if err != nil {
			return err
		}
		opts, err := h.offsetWriteOptions(ctx, s, name)
		if err != nil {
			return err
		}
		if err := store.Alter(ctx, name, list, opts); err != nil {
			if errors.Is(err, offsets.ErrFormat) {
				return &BadRequestError{Msg: err.Error()}
			}
			return err
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	return msgAltered, nil
}

// ResetOffsets is DELETE /connectors/{c}/offsets.
func (h *Herder) ResetOffsets(ctx context.Context, name string) (string, error) {
	err := h.modifyOffsets(ctx, name, func(cfg map[string]string, t api.ConnectorType, s *clusterstate.Snapshot) error {
		if t == api.TypeSink {
			return offsets.ResetSinkOffsets(ctx, h.member.Admin(), name)
		}
		store, err := h.offsetStore(cfg)
		if err != nil {
			return err
		}
		opts, err := h.offsetWriteOptions(ctx, s, name)
		if err != nil {
			return err
		}
		return store.Reset(ctx, name, opts)
	})
	if err != nil {
		return "", err
	}
	return msgReset, nil
}

// offsetWriteOptions: with exactly-once source support the change is
// transactional (transactional.id ${group.id}-${connector}, KIP-875), after
// fencing the task producers of the connector's last generation.
func (h *Herder) offsetWriteOptions(ctx context.Context, s *clusterstate.Snapshot, name string) (offsets.WriteOptions, error) {
	if !h.exactlyOnce(s, name) {
		return offsets.WriteOptions{}, nil
	}
	if n, ok := s.Fencing(name); ok && n > 0 {
		if err := h.rt.FenceZombies(ctx, name, n); err != nil {
			return offsets.WriteOptions{}, fmt.Errorf("fencing the tasks of connector %s before changing its offsets: %w", name, err)
		}
	}
	return offsets.WriteOptions{TransactionalID: h.cfg.GroupID + "-" + name}, nil
}

// sinkChanges parses sink offsets in Kafka Connect's form, naming the
// field that is wrong.
func sinkChanges(body api.ConnectorOffsets) ([]offsets.SinkChange, error) {
	out := make([]offsets.SinkChange, 0, len(body.Offsets))
	for i, o := range body.Offsets {
		topic, ok := o.Partition[sinkTopicKey].(string)
		if !ok || topic == "" {
			return nil, &BadRequestError{Msg: fmt.Sprintf("offsets[%d].partition: %q must be a non-empty string (the topic name)", i, sinkTopicKey)}
		}
		part, ok := wholeNumber(o.Partition[sinkPartitionKey])
		if !ok || part < 0 || part > 1<<31-1 {
			return nil, &BadRequestError{Msg: fmt.Sprintf("offsets[%d].partition: %q must be a non-negative integer", i, sinkPartitionKey)}
		}
		if len(o.Partition) != 2 {
			return nil, &BadRequestError{Msg: fmt.Sprintf("offsets[%d].partition: only %q and %q are allowed", i, sinkTopicKey, sinkPartitionKey)}
		}
		c := offsets.SinkChange{TopicPartition: sdk.TopicPartition{Topic: topic, Partition: int32(part)}}
		if o.Offset != nil {
			off, ok := wholeNumber(o.Offset[sinkOffsetKey])
			if !ok || off < 0 || len(o.Offset) != 1 {
				return nil, &BadRequestError{Msg: fmt.Sprintf("offsets[%d].offset: must be {%q: <non-negative integer>} or null", i, sinkOffsetKey)}
			}
			c.Offset = &off
		}
		out = append(out, c)
	}
	return out, nil
}

func wholeNumber(v any) (int64, bool) {
	switch n := v.(type) {
	case float64:
		if n != float64(int64(n)) {
			return 0, false
		}
		return int64(n), true
	case json.Number:
		i, err := n.Int64()
		return i, err == nil
	case int64:
		return n, true
	case int:
		return int64(n), true
	case int32:
		return int64(n), true
	}
	return 0, false
}
