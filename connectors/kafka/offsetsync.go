package kafka

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	ckafka "github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"github.com/connectd/connectd/connectors/kafka/mirrorformat"
	"github.com/connectd/connectd/connectors/kafka/replpolicy"
	"github.com/connectd/connectd/framework/configdef"
	"github.com/connectd/connectd/framework/data"
	"github.com/connectd/connectd/framework/sdk"
	"github.com/connectd/connectd/internal/kafkaadmin"
)

// Offset-sync keys of KafkaReplicationSource (MirrorMaker 2's names).
const (
	KeyEmitOffsetSyncs     = "emit.offset-syncs.enabled"
	KeyOffsetLagMax        = "offset.lag.max"
	KeyOffsetSyncsLocation = "offset-syncs.topic.location"
	// The policy keys are shared with the policy's own configuration; the
	// offset syncs only need them to name their topic.
	keyPolicyClass     = "replication.policy.class"
	keyPolicySeparator = "replication.policy.separator"
)

// fieldOffsetSync marks the source position of a sync record.
const fieldOffsetSync = "offset-sync"

// defineOffsetSyncKeys adds the offset-sync keys to the connector's
// definition.
func defineOffsetSyncKeys(d *configdef.Def) *configdef.Def {
	const g = "Offset syncs"
	return d.
		Define(configdef.Key{
			Name: KeyEmitOffsetSyncs, Type: configdef.Boolean, Default: true, Importance: configdef.Medium,
			Group: g, OrderInGroup: 1, DisplayName: "Emit offset syncs",
			Documentation: "Write MirrorMaker 2 offset syncs (source offset ↔ target offset pairs) to the " +
				"offset-syncs topic on the target, in the same transaction as the records they describe. " +
				"KafkaCheckpointSource translates consumer-group offsets with them.",
		}).
		Define(configdef.Key{
			Name: KeyOffsetLagMax, Type: configdef.Long, Default: int64(100), Importance: configdef.Low,
			Validator: configdef.AtLeast(int64(1)), Group: g, OrderInGroup: 2, DisplayName: "Max offset lag",
			Documentation: "A sync is written at least every offset.lag.max records of a partition, so that a " +
				"consumer group failing over to the target re-reads at most about that many records per partition.",
		}).
		Define(configdef.Key{
			Name: KeyOffsetSyncsLocation, Type: configdef.String, Default: "target", Importance: configdef.Low,
			Validator: configdef.Func("target", func(key string, v any) error {
				if s, _ := v.(string); s != "target" {
					return configdef.Invalid(key, v, "only target is supported: the syncs are written in the task's "+
						"transaction, which runs on the target cluster (MM2's source location cannot be exactly-once)")
				}
				return nil
			}),
			Group: g, OrderInGroup: 3, DisplayName: "Offset-syncs topic location",
			Documentation: "Where the offset-syncs topic lives. connectd supports target only: the syncs are part " +
				"of the task's transaction on the target cluster.",
		})
}

// syncConfig is what a task needs to write offset syncs.
type syncConfig struct {
	enabled bool
	lagMax  int64
	topic   string
	// countable is true when every record the task returns for a source
	// partition lands in the same-numbered partition of its target topic:
	// partition.mapping=preserve and no transforms that could drop or
	// reroute records. Only then may one batch carry several syncs per
	// partition (see syncer).
	countable bool
}

// parseSyncConfig reads the offset-sync keys. cluster is the source
// cluster's name (source.cluster.alias, or its ID when that is unset).
func parseSyncConfig(props map[string]string, cfg *Config, cluster string) (syncConfig, error) {
	sc := syncConfig{enabled: true, lagMax: 100}
	if v, ok := props[KeyEmitOffsetSyncs]; ok {
		b, err := strconv.ParseBool(strings.TrimSpace(v))
		if err != nil {
			return sc, fmt.Errorf("%s: %w", KeyEmitOffsetSyncs, err)
		}
		sc.enabled = b
	}
	if v, ok := props[KeyOffsetLagMax]; ok {
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil || n < 1 {
			return sc, fmt.Errorf("%s must be a positive integer, got %q", KeyOffsetLagMax, v)
		}
		sc.lagMax = n
	}
	if v, ok := props[KeyOffsetSyncsLocation]; ok && strings.TrimSpace(v) != "target" {
		return sc, fmt.Errorf("%s=%q is not supported: offset syncs are written in the task's transaction on the target cluster", KeyOffsetSyncsLocation, v)
	}
	if cfg.Mapping != MappingPreserve {
		// MM2 always preserves partitions; with key-hash a target
		// partition mixes source partitions and a sync pair means nothing.
		sc.enabled = false
	}
	class := props[keyPolicyClass]
	if class == "" {
		class = replpolicy.DefaultClass
	}
	sep := props[keyPolicySeparator]
	if sep == "" {
		sep = replpolicy.DefaultSeparator
	}
	pol, err := replpolicy.New(class, sep, props[KeySourceClusterAlias])
	if err != nil {
		return sc, err
	}
	// MM2 names the syncs topic after the cluster it does not live on:
	// on the target, mm2-offset-syncs.<source alias>.internal
	// (MirrorSourceConfig.offsetSyncsTopic), which is where
	// MirrorCheckpointConnector and KafkaCheckpointSource look for it.
	sc.topic = pol.OffsetSyncsTopic(cluster)
	sc.countable = strings.TrimSpace(props["transforms"]) == ""
	return sc, nil
}

// syncState is a partition's offset-sync bookkeeping (Poll goroutine only).
//
// # Why the pairs are safe
//
// A checkpoint translates a group's committed source offset c with the
// latest sync (u, d) such that u ≤ c, to d (c == u) or d+1 (c > u). That
// loses no record as long as d ≤ the true target offset of u's copy:
// resuming at d re-reads from at or before u's copy, and d+1 ≤ true(u)+1 ≤
// true(c), because c's copy is appended after u's to the same partition.
// A sync that overstates d would skip records; one that understates it only
// re-reads some.
//
// The worker writes records after Poll returns them and reports no target
// offsets back (the transactional producer runs without delivery reports),
// so a task cannot know true(u) — but it can know a lower bound, which is
// all the argument above needs:
//
//   - the target partition's high watermark E, read before a batch is
//     returned, is ≤ the offset of every record of the batch: they are all
//     appended after it was read;
//   - each record appended to a partition takes at least one offset, so if
//     the k-th record of a partition the task hands over lands at ≥ L, the
//     (k+1)-th lands at ≥ L+1, whatever else (transaction markers, other
//     producers) comes in between. This needs every record returned for
//     the partition to land in it: countable (no transforms, preserve).
//
// next is that bound for the next record: max(E, previous bound + records
// counted). The sync record is returned in the same Poll as u, so it
// commits or aborts with it, and read_committed readers of the syncs topic
// never see a sync of an aborted copy.
//
// # Why the pairs are tight
//
// The bound is exact when E is read while nothing of the partition is in
// flight (every record handed over is committed: Commit reported it) and
// the task is the partition's only writer — up to the last commit marker,
// which Kafka writes just after CommitTransaction returns. Counting from
// there misses one marker per transaction, so the bound drifts low by at
// most one per batch. A due sync therefore waits (up to a poll timeout) for
// the partition's earlier batches to commit and reads a fresh, exact E once
// budget-1 batches went by since the last exact one; and syncs are written
// every lagMax-budget records. A group translated with a sync then re-reads
// at most (lagMax-budget) + budget = lagMax records: MM2's offset.lag.max
// bound, kept under load at the price of one unpipelined poll in budget.
type syncState struct {
	next      int64 // lower bound of the next record's target offset; -1 unknown
	synced    bool  // a sync was written in this task's lifetime
	sinceSync int64 // records handed over since the last sync
	// sinceExact counts batches of the partition since E was last read
	// with nothing in flight: what the bound may have drifted by.
	sinceExact int64
}

// syncer adds offset syncs to Poll results.
type syncer struct {
	cfg   syncConfig
	admin *ckafka.AdminClient
	log   func(key, msg string, args ...any)
	// waitIdle waits, at most until the deadline, for the partitions to
	// have nothing in flight, and reports those that have none.
	waitIdle func(ctx context.Context, ps []*partition, deadline time.Time) map[*partition]bool
	maxWait  time.Duration
	// noWaitUntil pauses the waits for idle partitions after one timed out.
	noWaitUntil time.Time
	// bytes is the optional BYTES schema of the task's records: syncs are
	// raw bytes like the copies.
	bytes *data.Schema
}

// budget is the drift allowance: syncs come every lagMax-budget records
// and an exact watermark at least every budget batches.
func (s *syncer) budget() int64 { return max(1, s.cfg.lagMax/4) }

// cadence is the most records between two syncs of a partition.
func (s *syncer) cadence() int64 { return max(1, s.cfg.lagMax-s.budget()) }

// ensureSyncTopic creates the offset-syncs topic as MM2 does (one
// partition, compacted) when it is missing.
func ensureSyncTopic(ctx context.Context, a *ckafka.AdminClient, topic string, rf int16) error {
	ctx, cancel := context.WithTimeout(ctx, discoveryTimeout)
	defer cancel()
	if err := kafkaadmin.Reachable(ctx, a); err != nil {
		return fmt.Errorf("offset-syncs topic %s: %w", topic, err)
	}
	res, err := a.CreateTopics(ctx, []ckafka.TopicSpecification{{
		Topic: topic, NumPartitions: 1, ReplicationFactor: int(rf),
		Config: map[string]string{"cleanup.policy": "compact"},
	}})
	if err != nil {
		return fmt.Errorf("creating offset-syncs topic %s: %w", topic, err)
	}
	for _, r := range res {
		if r.Error.Code() != ckafka.ErrNoError && r.Error.Code() != ckafka.ErrTopicAlreadyExists {
			return fmt.Errorf("creating offset-syncs topic %s: %w", topic, r.Error)
		}
	}
	return nil
}

// due reports whether a batch of n records of p needs a sync.
func (s *syncer) due(st *syncState, n int) bool {
	return !st.synced || st.sinceSync+int64(n) >= s.cadence()
}

// watermarks reads the high watermarks of the target partitions of due.
// A failure is logged and yields no bounds: the batch then carries only
// syncs its counted bounds allow.
func (s *syncer) watermarks(ctx context.Context, due map[topicPartition]*partition) map[topicPartition]int64 {
	req := make(map[ckafka.TopicPartition]ckafka.OffsetSpec, len(due))
	for tp := range due {
		topic := tp.Topic
		req[ckafka.TopicPartition{Topic: &topic, Partition: tp.Partition}] = ckafka.LatestOffsetSpec
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := kafkaadmin.Reachable(ctx, s.admin); err != nil {
		s.log("sync-watermarks", "cannot read target watermarks; offset syncs wait", "err", err)
		return nil
	}
	res, err := s.admin.ListOffsets(ctx, req, ckafka.SetAdminIsolationLevel(ckafka.IsolationLevelReadUncommitted))
	if err != nil {
		s.log("sync-watermarks", "cannot read target watermarks; offset syncs wait", "err", err)
		return nil
	}
	out := make(map[topicPartition]int64, len(res.ResultInfos))
	for tp, info := range res.ResultInfos {
		if info.Error.Code() != ckafka.ErrNoError || tp.Topic == nil {
			continue
		}
		out[topicPartition{*tp.Topic, tp.Partition}] = int64(info.Offset)
	}
	return out
}

// add appends the batch's offset syncs to out. recs are the batch's
// records, touched the partitions they belong to (with their batch marks);
// the batch is not in flight yet.
func (s *syncer) add(ctx context.Context, out []*sdk.SourceRecord, recs []sdk.SourceRecord, touched []*partition) []*sdk.SourceRecord {
	var due map[topicPartition]*partition
	var stale []*partition
	for _, p := range touched {
		if s.due(&p.sync, p.cur.records) {
			if due == nil {
				due = map[topicPartition]*partition{}
			}
			due[topicPartition{p.target, p.tp.Partition}] = p
			if p.sync.next < 0 || p.sync.sinceExact >= s.budget()-1 {
				stale = append(stale, p)
			}
		}
	}
	if len(due) > 0 {
		var idle map[*partition]bool
		if len(stale) > 0 && time.Now().After(s.noWaitUntil) {
			idle = s.waitIdle(ctx, stale, time.Now().Add(s.maxWait))
			if len(idle) < len(stale) {
				// The worker does not commit between polls (an interval or
				// connector boundary, or at-least-once offset flushes, where
				// there are no markers to drift by): stop stalling polls for
				// a while; the bounds stay safe, only less tight.
				s.noWaitUntil = time.Now().Add(time.Minute)
			}
		}
		marks := s.watermarks(ctx, due)
		for tp, p := range due {
			e, ok := marks[tp]
			if !ok {
				continue
			}
			if e > p.sync.next {
				p.sync.next = e
			}
			if idle[p] {
				p.sync.sinceExact = 0
			}
		}
		out = s.walk(out, recs, due)
	}
	for _, p := range touched {
		st := &p.sync
		if _, walked := due[topicPartition{p.target, p.tp.Partition}]; !walked {
			st.sinceSync += int64(p.cur.records)
			if st.next >= 0 {
				st.next += int64(p.cur.records)
			}
		}
		st.sinceExact++
		if !s.cfg.countable {
			st.next = -1 // only a fresh watermark bounds the next batch
		}
	}
	return out
}

// walk goes through the records of the due partitions in order, giving
// each its bound and emitting a sync where one is due: on the first record
// of the task's lifetime, then once cadence-1 records went by without one.
func (s *syncer) walk(out []*sdk.SourceRecord, recs []sdk.SourceRecord, due map[topicPartition]*partition) []*sdk.SourceRecord {
	seen := make(map[*partition]bool, len(due))
	for i := range recs {
		r := &recs[i]
		p := due[topicPartition{r.Topic, r.Partition}]
		if p == nil {
			continue
		}
		st := &p.sync
		first := !seen[p]
		seen[p] = true
		wanted := !st.synced || st.sinceSync >= s.cadence()-1
		if wanted && st.next >= 0 && (s.cfg.countable || first) {
			up, _ := r.SourceOffset[fieldOffset].(int64)
			if rec := s.record(p, up, st.next); rec != nil {
				out = append(out, rec)
				st.synced = true
				st.sinceSync = 0
			}
		} else {
			st.sinceSync++
		}
		if st.next >= 0 {
			st.next++
		}
	}
	return out
}

// record builds the sync record. Its source position is the batch's last
// offset of the partition, so that the offset the worker commits with it
// (the sync comes after the batch's records) never goes backwards; the
// extra field (the synced upstream offset) keeps it distinct from the
// positions of that record and of the batch's other syncs, since a
// source position names one record.
func (s *syncer) record(p *partition, upstream, downstream int64) *sdk.SourceRecord {
	sync := mirrorformat.OffsetSync{Topic: p.tp.Topic, Partition: p.tp.Partition, UpstreamOffset: upstream, DownstreamOffset: downstream}
	key, err := sync.Key()
	if err != nil {
		s.log("sync-key:"+p.tp.String(), "cannot encode an offset sync", "partition", p.tp.String(), "err", err)
		return nil
	}
	return &sdk.SourceRecord{
		SourcePartition: p.source,
		SourceOffset:    map[string]any{fieldOffset: p.cur.last, fieldOffsetSync: upstream},
		Topic:           s.cfg.topic,
		Partition:       0,
		KeySchema:       s.bytes,
		Key:             key,
		ValueSchema:     s.bytes,
		Value:           sync.Value(),
	}
}

// startSyncs sets up offset syncs for a starting task: the offset-syncs
// topic and the target admin client that reads watermarks.
func (t *Task) startSyncs(ctx context.Context, tctx sdk.SourceTaskContext, props map[string]string) error {
	sc, err := parseSyncConfig(props, t.cfg, t.cluster)
	if err != nil || !sc.enabled || len(t.order) == 0 {
		return err
	}
	a, err := newAdmin(t.cfg.TargetBootstrap, t.cfg.TargetAdmin, fmt.Sprintf("connectd-replication-%s-%d-syncs", tctx.Connector(), tctx.TaskID()))
	if err != nil {
		return err
	}
	if err := ensureSyncTopic(ctx, a, sc.topic, t.cfg.TargetReplication); err != nil {
		a.Close()
		return err
	}
	t.syncs = &syncer{cfg: sc, admin: a, log: t.warn, waitIdle: t.waitIdle, maxWait: t.cfg.PollTimeout, bytes: t.bytes}
	t.mu.Lock()
	t.drained = make(chan struct{})
	t.mu.Unlock()
	t.log.Info("writing offset syncs", "topic", sc.topic, KeyOffsetLagMax, sc.lagMax, "exact_counting", sc.countable)
	return nil
}

func (t *Task) closeSyncs() {
	if t.syncs != nil && t.syncs.admin != nil {
		t.syncs.admin.Close()
		t.syncs.admin = nil
	}
}

// waitIdle waits until none of ps has records in flight (all committed), or
// the deadline, and reports the idle ones. Commit closes t.drained.
func (t *Task) waitIdle(ctx context.Context, ps []*partition, deadline time.Time) map[*partition]bool {
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	for {
		t.mu.Lock()
		idle := make(map[*partition]bool, len(ps))
		for _, p := range ps {
			if len(p.inflight) == 0 {
				idle[p] = true
			}
		}
		ch := t.drained
		t.mu.Unlock()
		if len(idle) == len(ps) {
			return idle
		}
		select {
		case <-ch:
		case <-timer.C:
			return idle
		case <-ctx.Done():
			return idle
		}
	}
}
