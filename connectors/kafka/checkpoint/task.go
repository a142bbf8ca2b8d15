package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	ckafka "github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"github.com/connectd/connectd/connectors/kafka/mirrorformat"
	"github.com/connectd/connectd/connectors/kafka/replpolicy"
	"github.com/connectd/connectd/framework/data"
	"github.com/connectd/connectd/framework/sdk"
	"github.com/connectd/connectd/internal/kafkaadmin"
)

// ErrUnreachable is wrapped by the error that fails the task when the
// source cluster does not answer for source.unreachable.timeout.ms.
var ErrUnreachable = errors.New("source cluster unreachable")

const adminTimeout = 10 * time.Second

// cpKey names one checkpoint: a group's position in a remote partition.
type cpKey struct {
	group     string
	topic     string // remote topic
	partition int32
}

// Task reads the offset syncs, and at its intervals lists the source's
// groups, translates their offsets, returns checkpoints and syncs the
// target's groups.
type Task struct {
	cfg   *Config
	log   *slog.Logger
	src   *ckafka.AdminClient
	dst   *ckafka.AdminClient
	syncs *ckafka.Consumer
	store *syncStore
	bytes *data.Schema

	pollMu   sync.Mutex
	caughtUp bool // the syncs topic was read to its end once
	groups   []string
	// latest holds each group's last translated offsets (checkpoints
	// emitted), what the group sync commits.
	latest map[string]map[cpKey]mirrorformat.Checkpoint
	// emitted is the last checkpoint returned per key, to skip repeats.
	emitted map[cpKey]mirrorformat.Checkpoint

	nextRefresh, nextEmit, nextSync time.Time
	unreachableSince                time.Time
	lastWarn                        map[string]time.Time
}

var _ sdk.SourceTask = (*Task)(nil)

// Start implements sdk.SourceTask.
func (t *Task) Start(ctx context.Context, tctx sdk.SourceTaskContext, props map[string]string) error {
	cfg, err := ParseConfig(props)
	if err != nil {
		return err
	}
	t.cfg, t.log = cfg, tctx.Logger()
	t.store = newSyncStore()
	t.bytes = &data.Schema{Type: data.Bytes, Optional: true}
	t.latest = map[string]map[cpKey]mirrorformat.Checkpoint{}
	t.emitted = map[cpKey]mirrorformat.Checkpoint{}
	t.lastWarn = map[string]time.Time{}
	id := fmt.Sprintf("connectd-checkpoint-%s-%d", tctx.Connector(), tctx.TaskID())
	if t.src, err = newAdmin(cfg.SourceBootstrap, cfg.SourceAdmin, id); err != nil {
		return err
	}
	if t.dst, err = newAdmin(cfg.TargetBootstrap, cfg.TargetAdmin, id); err != nil {
		t.close()
		return err
	}
	if err := ensureTopic(ctx, t.dst, cfg.CheckpointsTopic(), cfg.CheckpointsRF); err != nil {
		t.close()
		return err
	}
	// The syncs topic may not exist yet (no replication ran): create it as
	// the replication task would, so that the consumer can wait on it.
	if err := ensureTopic(ctx, t.dst, cfg.OffsetSyncsTopic(), cfg.CheckpointsRF); err != nil {
		t.close()
		return err
	}
	cm := ckafka.ConfigMap{}
	for k, v := range cfg.TargetAdmin {
		cm[k] = v
	}
	cm["bootstrap.servers"] = cfg.TargetBootstrap
	cm["group.id"] = id // never joined nor committed: manual assignment
	cm["client.id"] = id
	// Only syncs of committed replication transactions are true pairs.
	cm["isolation.level"] = "read_committed"
	cm["enable.auto.commit"] = false
	cm["enable.partition.eof"] = true
	cm["auto.offset.reset"] = "earliest"
	cm["log.connection.close"] = false
	if t.syncs, err = ckafka.NewConsumer(&cm); err != nil {
		t.close()
		return fmt.Errorf("offset-syncs consumer: %w", err)
	}
	topic := cfg.OffsetSyncsTopic()
	if err := t.syncs.Assign([]ckafka.TopicPartition{{Topic: &topic, Partition: 0, Offset: ckafka.OffsetBeginning}}); err != nil {
		t.close()
		return fmt.Errorf("reading %s: %w", topic, err)
	}
	t.log.Info("checkpoint task started", "checkpoints_topic", cfg.CheckpointsTopic(), "offset_syncs_topic", topic,
		"sync_group_offsets", cfg.SyncGroups)
	return nil
}

func newAdmin(bootstrap string, extra map[string]string, clientID string) (*ckafka.AdminClient, error) {
	cm := ckafka.ConfigMap{}
	for k, v := range extra {
		cm[k] = v
	}
	cm["bootstrap.servers"] = bootstrap
	if _, ok := cm["client.id"]; !ok {
		cm["client.id"] = clientID
	}
	cm["log.connection.close"] = false
	a, err := ckafka.NewAdminClient(&cm)
	if err != nil {
		return nil, fmt.Errorf("admin client for %s: %w", bootstrap, err)
	}
	return a, nil
}

// ensureTopic creates a one-partition compacted topic (MM2's layout for
// its internal topics) unless it exists.
func ensureTopic(ctx context.Context, a *ckafka.AdminClient, topic string, rf int16) error {
	ctx, cancel := context.WithTimeout(ctx, adminTimeout)
	defer cancel()
	if err := kafkaadmin.Reachable(ctx, a); err != nil {
		return fmt.Errorf("creating %s on the target: %w", topic, err)
	}
	res, err := a.CreateTopics(ctx, []ckafka.TopicSpecification{{
		Topic: topic, NumPartitions: 1, ReplicationFactor: int(rf),
		Config: map[string]string{"cleanup.policy": "compact"},
	}})
	if err != nil {
		return fmt.Errorf("creating %s on the target: %w", topic, err)
	}
	for _, r := range res {
		if c := r.Error.Code(); c != ckafka.ErrNoError && c != ckafka.ErrTopicAlreadyExists {
			return fmt.Errorf("creating %s on the target: %w", topic, r.Error)
		}
	}
	return nil
}

// Poll implements sdk.SourceTask.
func (t *Task) Poll(ctx context.Context) ([]*sdk.SourceRecord, error) {
	t.pollMu.Lock()
	defer t.pollMu.Unlock()
	if t.syncs == nil {
		return nil, errors.New("poll after stop")
	}
	if err := t.readSyncs(500 * time.Millisecond); err != nil {
		return nil, err
	}
	if !t.caughtUp {
		return nil, nil // translating with a partial view would be looser than needed
	}
	now := time.Now()
	if !now.Before(t.nextRefresh) {
		if err := t.refreshGroups(ctx); err != nil {
			return nil, t.sourceFailed(err)
		}
		t.nextRefresh = now.Add(t.cfg.RefreshGroups)
	}
	var out []*sdk.SourceRecord
	if !now.Before(t.nextEmit) {
		recs, err := t.checkpoints(ctx)
		if err != nil {
			return nil, t.sourceFailed(err)
		}
		out = recs
		t.nextEmit = now.Add(t.cfg.EmitInterval)
	}
	t.unreachableSince = time.Time{}
	if t.cfg.SyncGroups && !now.Before(t.nextSync) {
		t.syncGroupOffsets(ctx)
		t.nextSync = now.Add(t.cfg.SyncInterval)
	}
	return out, nil
}

// readSyncs drains the offset-syncs consumer for up to wait.
func (t *Task) readSyncs(wait time.Duration) error {
	deadline := time.Now().Add(wait)
	for {
		left := time.Until(deadline)
		if left <= 0 {
			return nil
		}
		ev := t.syncs.Poll(int(min(left, 100*time.Millisecond).Milliseconds()) + 1)
		switch e := ev.(type) {
		case nil:
			if t.caughtUp {
				return nil
			}
		case *ckafka.Message:
			if e.TopicPartition.Error != nil {
				t.warn("syncs-read", "cannot read the offset-syncs topic; retrying", "err", e.TopicPartition.Error)
				continue
			}
			s, err := mirrorformat.DecodeOffsetSync(e.Key, e.Value)
			if err != nil {
				t.warn("syncs-decode", "skipping a record of the offset-syncs topic that is not an offset sync",
					"offset", e.TopicPartition.Offset, "err", err)
				continue
			}
			t.store.add(s)
		case ckafka.PartitionEOF:
			if !t.caughtUp {
				t.log.Info("offset syncs read to the end; checkpointing starts")
			}
			t.caughtUp = true
			return nil
		case ckafka.Error:
			if e.IsFatal() {
				return fmt.Errorf("offset-syncs consumer: %w", e)
			}
			t.warn("syncs-error:"+e.Code().String(), "offset-syncs consumer error", "err", e)
		}
	}
}

// refreshGroups lists the source's consumer groups and keeps the selected
// ones. A group that disappeared is forgotten: no more checkpoints, no more
// target offset syncs (MM2 does the same).
func (t *Task) refreshGroups(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, adminTimeout)
	defer cancel()
	if err := kafkaadmin.Reachable(ctx, t.src); err != nil {
		return fmt.Errorf("listing consumer groups: %w", err)
	}
	res, err := t.src.ListConsumerGroups(ctx)
	if err != nil {
		return fmt.Errorf("listing consumer groups: %w", err)
	}
	var groups []string
	for _, g := range res.Valid {
		if t.cfg.Selected(g.GroupID) {
			groups = append(groups, g.GroupID)
		}
	}
	slices.Sort(groups)
	for _, g := range t.groups {
		if _, still := slices.BinarySearch(groups, g); !still {
			t.log.Info("consumer group is gone from the source; its checkpoints stop", "group", g)
			delete(t.latest, g)
			for k := range t.emitted {
				if k.group == g {
					delete(t.emitted, k)
				}
			}
		}
	}
	t.groups = groups
	return nil
}

// checkpoints translates every selected group's committed offsets and
// returns the checkpoints that changed.
func (t *Task) checkpoints(ctx context.Context) ([]*sdk.SourceRecord, error) {
	var out []*sdk.SourceRecord
	for _, g := range t.groups {
		offs, err := t.committed(ctx, t.src, g)
		if err != nil {
			return nil, err
		}
		cur := map[cpKey]mirrorformat.Checkpoint{}
		for tp, o := range offs {
			if replpolicy.IsCycle(t.cfg.Policy, tp.topic, t.cfg.TargetAlias) || t.cfg.Policy.IsInternalTopic(tp.topic) {
				continue
			}
			down, ok := t.store.translate(tp.topic, tp.partition, o.offset)
			if !ok {
				continue
			}
			cp := mirrorformat.Checkpoint{Group: g, Topic: t.cfg.Policy.RemoteTopic(t.cfg.SourceAlias, tp.topic),
				Partition: tp.partition, UpstreamOffset: o.offset, DownstreamOffset: down, Metadata: o.metadata}
			k := cpKey{g, cp.Topic, cp.Partition}
			cur[k] = cp
			if t.emitted[k] == cp {
				continue
			}
			rec, err := t.record(cp)
			if err != nil {
				t.warn("encode:"+g, "cannot encode a checkpoint", "group", g, "err", err)
				continue
			}
			out = append(out, rec)
			t.emitted[k] = cp
		}
		t.latest[g] = cur
	}
	return out, nil
}

type committedOffset struct {
	offset   int64
	metadata string
}

// committed lists a group's committed offsets on one cluster.
func (t *Task) committed(ctx context.Context, a *ckafka.AdminClient, group string) (map[sourcePartition]committedOffset, error) {
	ctx, cancel := context.WithTimeout(ctx, adminTimeout)
	defer cancel()
	if err := kafkaadmin.Reachable(ctx, a); err != nil {
		return nil, fmt.Errorf("offsets of group %s: %w", group, err)
	}
	res, err := a.ListConsumerGroupOffsets(ctx, []ckafka.ConsumerGroupTopicPartitions{{Group: group}})
	if err != nil {
		return nil, fmt.Errorf("offsets of group %s: %w", group, err)
	}
	out := map[sourcePartition]committedOffset{}
	for _, g := range res.ConsumerGroupsTopicPartitions {
		for _, tp := range g.Partitions {
			if tp.Error != nil || tp.Topic == nil || tp.Offset < 0 {
				continue
			}
			var md string
			if tp.Metadata != nil {
				md = *tp.Metadata
			}
			out[sourcePartition{*tp.Topic, tp.Partition}] = committedOffset{int64(tp.Offset), md}
		}
	}
	return out, nil
}

func (t *Task) record(cp mirrorformat.Checkpoint) (*sdk.SourceRecord, error) {
	key, err := cp.Key()
	if err != nil {
		return nil, err
	}
	value, err := cp.Value()
	if err != nil {
		return nil, err
	}
	return &sdk.SourceRecord{
		// One source partition per connector: the checkpoints themselves
		// are the state, the offset only records when they were emitted.
		SourcePartition: map[string]any{"checkpoints": t.cfg.SourceAlias},
		SourceOffset:    map[string]any{"emitted": time.Now().UnixMilli()},
		Topic:           t.cfg.CheckpointsTopic(),
		KeySchema:       t.bytes,
		Key:             key,
		ValueSchema:     t.bytes,
		Value:           value,
	}, nil
}

// sourceFailed turns a source error into a retry (logged) or, once the
// source has not answered for source.unreachable.timeout.ms, a task
// failure whose trace says so.
func (t *Task) sourceFailed(err error) error {
	if t.unreachableSince.IsZero() {
		t.unreachableSince = time.Now()
	}
	d := time.Since(t.unreachableSince)
	if t.cfg.UnreachableTimeout > 0 && d >= t.cfg.UnreachableTimeout {
		return fmt.Errorf("%w: the source cluster at %s did not answer for %s (%s=%d): %w",
			ErrUnreachable, t.cfg.SourceBootstrap, d.Round(time.Second), KeyUnreachableTimeout, t.cfg.UnreachableTimeout.Milliseconds(), err)
	}
	t.warn("source", "cannot read consumer groups from the source cluster; retrying", "bootstrap", t.cfg.SourceBootstrap, "err", err)
	return nil
}

// warn logs at most once a minute per key.
func (t *Task) warn(key, msg string, args ...any) {
	if last, ok := t.lastWarn[key]; ok && time.Since(last) < time.Minute {
		return
	}
	t.lastWarn[key] = time.Now()
	t.log.Warn(msg, args...)
}

// Commit implements sdk.SourceTask: checkpoints need no acknowledgement.
func (t *Task) Commit(ctx context.Context, offsets []sdk.SourceOffset) error { return nil }

// Stop implements sdk.SourceTask.
func (t *Task) Stop(ctx context.Context) error {
	done := make(chan struct{})
	go func() {
		t.pollMu.Lock()
		defer t.pollMu.Unlock()
		t.close()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("stopping the checkpoint task: %w", ctx.Err())
	}
}

func (t *Task) close() {
	if t.syncs != nil {
		_ = t.syncs.Close()
		t.syncs = nil
	}
	if t.src != nil {
		t.src.Close()
		t.src = nil
	}
	if t.dst != nil {
		t.dst.Close()
		t.dst = nil
	}
}
