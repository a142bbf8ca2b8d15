package kafka

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"strconv"
	"sync"
	"time"

	ckafka "github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"github.com/connectd/connectd/framework/data"
	"github.com/connectd/connectd/framework/sdk"
)

// Source partition and offset field names (MirrorMaker 2 uses the same).
const (
	fieldCluster   = "cluster"
	fieldTopic     = "topic"
	fieldPartition = "partition"
	fieldOffset    = "offset"
)

// Task copies the records of its assigned source partitions. It reads with
// a read_committed consumer using manual assignment, starting right after
// the offsets the framework committed.
type Task struct {
	cfg      *Config
	log      *slog.Logger
	consumer *ckafka.Consumer
	cluster  string
	parts    map[topicPartition]*partition
	order    []*partition // stable order, for lag metrics
	bytes    *data.Schema // optional BYTES: what ByteArrayConverter expects
	metrics  *taskMetrics
	syncs    *syncer // nil when offset syncs are off

	// mu guards the per-partition commit bookkeeping, which Poll and
	// Commit (called concurrently by the framework) both touch, and
	// t.consumer against Stop while metrics read it.
	mu sync.Mutex
	// drained is closed (and replaced) by each Commit; guarded by mu.
	drained chan struct{}
	// pollMu is held by Poll, so that Stop never closes the consumer under
	// a running Poll.
	pollMu sync.Mutex

	// Poll-goroutine state.
	last             *partition // the partition of the previous message: messages come in runs
	gen              uint64     // Poll generation, to reset per-partition batch marks lazily
	touched          []*partition
	unreachableSince time.Time
	lastProbe        time.Time
	lastWarn         map[string]time.Time

	// The previous Poll result's memory, reused by the next Poll: the
	// framework is done with a result when it calls Poll again
	// (sdk.SourceTask). At 100-byte records a fresh offset map per record
	// was a third of the plugin's allocations.
	recs       []sdk.SourceRecord // length: the previous result's, cleared before reuse
	out        []*sdk.SourceRecord
	offsetMaps []map[string]any // SourceOffset of recs[i], updated in place
	headerSlab []sdk.Header
	offsetSlab []byte // provenance offset header values
}

// partition is one assigned source partition.
type partition struct {
	tp     topicPartition
	source map[string]any // SourcePartition shared by all its records (never mutated)
	target string
	// targetCount is the target topic's partition count (key-hash only).
	targetCount int
	// provenance holds the cluster/topic/partition headers (shared values).
	provenance [3]sdk.Header

	// Batch mark of the Poll in progress (valid when gen == Task.gen).
	gen uint64
	cur batchMark
	// sync is the offset-sync bookkeeping (Poll goroutine only).
	sync syncState

	// Guarded by Task.mu.
	committed     int64       // next offset after the last committed record; -1 until known
	inflight      []batchMark // polled, not yet committed, oldest first
	lastCommitted time.Time   // when the partition last committed (or the task started)
}

// batchMark summarises one Poll's records of one partition.
type batchMark struct {
	last    int64 // offset of the last record
	records int
	bytes   int
	firstTS time.Time // timestamp of the first record
}

var _ sdk.SourceTask = (*Task)(nil)

// Start implements sdk.SourceTask.
func (t *Task) Start(ctx context.Context, tctx sdk.SourceTaskContext, props map[string]string) error {
	cfg, err := ParseConfig(props)
	if err != nil {
		return err
	}
	assigned, err := decodePartitions(props[taskKeyPartitions])
	if err != nil {
		return err
	}
	t.cluster = props[taskKeySourceCluster]
	if t.cluster == "" && len(assigned) > 0 {
		return fmt.Errorf("task configuration lacks %s (it is computed by the connector)", taskKeySourceCluster)
	}
	var targetCounts map[string]int
	if cfg.Mapping == MappingKeyHash {
		if targetCounts, err = decodeCounts(props[taskKeyTargetPartitions]); err != nil {
			return err
		}
	}
	t.cfg = cfg
	t.log = tctx.Logger()
	t.bytes = &data.Schema{Type: data.Bytes, Optional: true}
	t.parts = make(map[topicPartition]*partition, len(assigned))
	t.lastWarn = map[string]time.Time{}
	now := time.Now()
	for _, tp := range assigned {
		p := &partition{
			tp:            tp,
			source:        map[string]any{fieldCluster: t.cluster, fieldTopic: tp.Topic, fieldPartition: int(tp.Partition)},
			target:        cfg.TargetTopic(tp.Topic),
			committed:     -1,
			lastCommitted: now,
			sync:          syncState{next: -1},
			provenance: [3]sdk.Header{
				{Key: HeaderSourceCluster, Value: []byte(t.cluster)},
				{Key: HeaderSourceTopic, Value: []byte(tp.Topic)},
				{Key: HeaderSourcePartition, Value: strconv.AppendInt(nil, int64(tp.Partition), 10)},
			},
		}
		if cfg.Mapping == MappingKeyHash {
			if p.targetCount = targetCounts[p.target]; p.targetCount < 1 {
				return fmt.Errorf("task configuration lacks the partition count of target topic %q", p.target)
			}
		}
		t.parts[tp] = p
		t.order = append(t.order, p)
	}

	t.consumer, err = ckafka.NewConsumer(t.consumerConfig(tctx))
	if err != nil {
		return fmt.Errorf("source consumer: %w", err)
	}
	assignment := make([]ckafka.TopicPartition, 0, len(t.order))
	for _, p := range t.order {
		start := ckafka.OffsetBeginning
		if cfg.StartAtEnd {
			start = ckafka.OffsetEnd
		}
		if off := tctx.Offset(p.source); off != nil {
			n, err := offsetValue(off[fieldOffset])
			if err != nil {
				t.consumer.Close()
				return fmt.Errorf("committed offset of %s: %w", p.tp, err)
			}
			start = ckafka.Offset(n + 1)
			p.committed = n + 1
		}
		topic := p.tp.Topic
		assignment = append(assignment, ckafka.TopicPartition{Topic: &topic, Partition: p.tp.Partition, Offset: start})
	}
	if err := t.consumer.Assign(assignment); err != nil {
		t.consumer.Close()
		return fmt.Errorf("assigning source partitions: %w", err)
	}
	if err := t.startSyncs(ctx, tctx, props); err != nil {
		t.consumer.Close()
		return err
	}
	t.metrics = newTaskMetrics(t)
	if err := t.metrics.register(tctx.Metrics()); err != nil {
		t.closeSyncs()
		t.consumer.Close()
		return err
	}
	t.log.Info("task started", "partitions", encodePartitions(assigned), "source_cluster", t.cluster)
	return nil
}

// consumerConfig builds the upstream consumer's configuration: defaults,
// then source.consumer.*, then what exactly-once needs (forced).
func (t *Task) consumerConfig(tctx sdk.SourceTaskContext) *ckafka.ConfigMap {
	prefetchKBytes := leanPrefetchKBytes
	if t.cfg.PollIsTransaction {
		prefetchKBytes = pollBoundaryPrefetchKBytes
	}
	cm := ckafka.ConfigMap{
		// librdkafka wants a group.id; with manual assignment and no commits
		// the group is never joined nor written.
		"group.id":          "connectd-replication-" + tctx.Connector(),
		"client.id":         fmt.Sprintf("connectd-replication-%s-%d", tctx.Connector(), tctx.TaskID()),
		"auto.offset.reset": "earliest",
		// librdkafka's default prefetch (64 MiB or 100 000 messages per
		// partition) times several tasks per process costs memory without
		// adding throughput: a poll takes at most poll.max.bytes or
		// poll.max.records (2000) from it. Small records cost librdkafka
		// far more than their payload, hence the message-count limit too.
		"queued.max.messages.kbytes": prefetchKBytes,
		"queued.min.messages":        10000,
		// With a queue that small, librdkafka's default
		// fetch.queue.backoff.ms (1 s) starves the task: the queue fills
		// while the worker commits a transaction (Poll waits for credits),
		// librdkafka then postpones the partition's next fetch by a whole
		// second, and the polls that drain the queue find it empty long
		// before that second is over (librdkafka's CONFIGURATION.md: "may
		// need to be decreased if the queue thresholds are set low").
		"fetch.queue.backoff.ms": 10,
	}
	for k, v := range t.cfg.SourceConsumer {
		cm[k] = v
	}
	cm["bootstrap.servers"] = t.cfg.SourceBootstrap
	cm["isolation.level"] = "read_committed"
	cm["enable.auto.commit"] = false
	cm["enable.auto.offset.store"] = false
	cm["enable.partition.eof"] = false
	cm["log.connection.close"] = false
	return &cm
}

// Poll implements sdk.SourceTask: it waits up to poll.timeout.ms for the
// first record, then drains what the consumer has buffered, up to
// poll.max.records and poll.max.bytes.
func (t *Task) Poll(ctx context.Context) ([]*sdk.SourceRecord, error) {
	t.pollMu.Lock()
	defer t.pollMu.Unlock()
	if t.consumer == nil {
		return nil, errors.New("poll after stop")
	}
	t.gen++
	t.touched = t.touched[:0]
	deadline := time.Now().Add(t.cfg.PollTimeout)
	// Drop the previous result's keys, values and headers.
	clear(t.recs)
	clear(t.headerSlab)
	var (
		recs    = t.recs[:0]
		size    int
		headers = t.headerSlab[:0] // slab for this batch's headers
		offsets = t.offsetSlab[:0] // slab for provenance offset values
	)
	for len(recs) < t.cfg.PollMaxRecords && size < t.cfg.PollMaxBytes {
		timeout := 0
		if len(recs) == 0 {
			if ctx.Err() != nil {
				break
			}
			left := time.Until(deadline)
			if left <= 0 {
				break
			}
			timeout = int(min(left, 100*time.Millisecond).Milliseconds()) + 1
		}
		ev := t.consumer.Poll(timeout)
		if ev == nil {
			if len(recs) > 0 {
				break // buffer drained
			}
			continue
		}
		switch e := ev.(type) {
		case *ckafka.Message:
			if e.TopicPartition.Error != nil {
				t.warnPartition(e.TopicPartition, e.TopicPartition.Error)
				continue
			}
			t.unreachableSince = time.Time{}
			if recs == nil {
				recs = make([]sdk.SourceRecord, 0, min(t.cfg.PollMaxRecords, 4096))
			}
			var n int
			recs, headers, offsets, n = t.appendRecord(recs, headers, offsets, e)
			size += n
		case ckafka.Error:
			if err := t.handleError(e); err != nil {
				return nil, err
			}
		}
	}
	if len(recs) == 0 {
		return nil, t.checkReachable()
	}
	t.recs, t.headerSlab, t.offsetSlab = recs, headers, offsets
	out := t.out[:0]
	for i := range recs {
		out = append(out, &recs[i])
	}
	if t.syncs != nil {
		// Before the batch joins the in-flight marks: the syncer may wait
		// for the earlier batches to commit.
		out = t.syncs.add(ctx, out, recs, t.touched)
	}
	t.mu.Lock()
	for _, p := range t.touched {
		p.inflight = append(p.inflight, p.cur)
	}
	t.mu.Unlock()
	t.out = out
	return out, nil
}

// appendRecord converts one consumed message. Keys, values, headers and
// the timestamp are copied as they are; null stays null.
func (t *Task) appendRecord(recs []sdk.SourceRecord, hs []sdk.Header, offs []byte, m *ckafka.Message) ([]sdk.SourceRecord, []sdk.Header, []byte, int) {
	tp := topicPartition{*m.TopicPartition.Topic, m.TopicPartition.Partition}
	p := t.last
	if p == nil || p.tp != tp {
		if p = t.parts[tp]; p == nil {
			// Not ours (cannot happen with manual assignment); never copy it.
			t.warn("unassigned:"+tp.String(), "ignoring a record of a partition this task does not own", "partition", tp.String())
			return recs, hs, offs, 0
		}
		t.last = p
	}
	off := int64(m.TopicPartition.Offset)
	size := len(m.Key) + len(m.Value)
	var headers []sdk.Header
	if n := len(m.Headers) + t.provenanceCount(); n > 0 {
		if cap(hs)-len(hs) < n {
			hs = make([]sdk.Header, 0, max(n*256, 1024))
		}
		start := len(hs)
		for _, h := range m.Headers {
			hs = append(hs, sdk.Header{Key: h.Key, Value: h.Value})
			size += len(h.Key) + len(h.Value)
		}
		if t.cfg.Provenance {
			if cap(offs)-len(offs) < 20 {
				offs = make([]byte, 0, 16<<10)
			}
			o := len(offs)
			offs = strconv.AppendInt(offs, off, 10)
			hs = append(hs, p.provenance[0], p.provenance[1], p.provenance[2],
				sdk.Header{Key: HeaderSourceOffset, Value: offs[o:len(offs):len(offs)]})
		}
		headers = hs[start:len(hs):len(hs)]
	}
	recs = append(recs, sdk.SourceRecord{
		SourcePartition: p.source,
		SourceOffset:    t.offsetMap(len(recs), off),
		Topic:           p.target,
		Partition:       tp.Partition,
		KeySchema:       t.bytes,
		ValueSchema:     t.bytes,
		Headers:         headers,
	})
	r := &recs[len(recs)-1]
	if m.Key != nil {
		r.Key = m.Key
	}
	if m.Value != nil {
		r.Value = m.Value
	}
	if m.TimestampType != ckafka.TimestampNotAvailable {
		r.Timestamp = m.Timestamp
	}
	if t.cfg.Mapping == MappingKeyHash {
		r.Partition = keyHashPartition(m.Key, tp.Partition, p.targetCount)
	}
	if p.gen != t.gen {
		p.gen = t.gen
		p.cur = batchMark{firstTS: r.Timestamp}
		t.touched = append(t.touched, p)
	}
	p.cur.last = off
	p.cur.records++
	p.cur.bytes += size
	return recs, hs, offs, size
}

// offsetMap is the SourceOffset of the i-th record of the Poll in
// progress: the map the previous results used at that index, updated.
func (t *Task) offsetMap(i int, off int64) map[string]any {
	if i < len(t.offsetMaps) {
		m := t.offsetMaps[i]
		m[fieldOffset] = off
		return m
	}
	m := map[string]any{fieldOffset: off}
	t.offsetMaps = append(t.offsetMaps, m)
	return m
}

func (t *Task) provenanceCount() int {
	if t.cfg.Provenance {
		return 4
	}
	return 0
}

// handleError deals with a consumer error event. Fatal errors fail the
// task; losing every broker starts the unreachable clock; the rest is
// logged (librdkafka retries by itself).
func (t *Task) handleError(e ckafka.Error) error {
	if e.IsFatal() {
		return fmt.Errorf("source consumer: fatal error: %w", e)
	}
	if e.Code() == ckafka.ErrAllBrokersDown {
		if t.unreachableSince.IsZero() {
			t.unreachableSince = time.Now()
			t.lastProbe = time.Now()
		}
		t.warn("all-brokers-down", "source cluster unreachable; waiting for it", "bootstrap", t.cfg.SourceBootstrap, "err", e)
		return nil
	}
	t.warn("error:"+e.Code().String(), "source consumer error", "err", e)
	return nil
}

// checkReachable runs after an empty poll while the source cluster is
// unreachable: it probes the cluster now and then, and fails the task once
// source.unreachable.timeout.ms has passed.
func (t *Task) checkReachable() error {
	if t.unreachableSince.IsZero() {
		return nil
	}
	if time.Since(t.lastProbe) >= 2*time.Second {
		t.lastProbe = time.Now()
		if _, err := t.consumer.GetMetadata(nil, false, 1000); err == nil {
			t.log.Info("source cluster reachable again", "bootstrap", t.cfg.SourceBootstrap)
			t.unreachableSince = time.Time{}
			return nil
		}
	}
	if d := time.Since(t.unreachableSince); t.cfg.UnreachableTimeout > 0 && d >= t.cfg.UnreachableTimeout {
		return fmt.Errorf("%w: no broker of the source cluster at %s answered for %s (%s=%d); the task fails so that the framework restarts it with backoff",
			ErrUnreachable, t.cfg.SourceBootstrap, d.Round(time.Second), KeyUnreachableTimeout, t.cfg.UnreachableTimeout.Milliseconds())
	}
	return nil
}

func (t *Task) warnPartition(tp ckafka.TopicPartition, err error) {
	name := "?"
	if tp.Topic != nil {
		name = *tp.Topic
	}
	t.warn("partition:"+name+":"+strconv.Itoa(int(tp.Partition)), "cannot read source partition; librdkafka retries",
		"topic", name, "partition", tp.Partition, "err", err)
}

// warn logs at most once per minute per key, so a long outage does not
// flood the log.
func (t *Task) warn(key, msg string, args ...any) {
	if last, ok := t.lastWarn[key]; ok && time.Since(last) < time.Minute {
		return
	}
	t.lastWarn[key] = time.Now()
	t.log.Warn(msg, args...)
}

// Commit implements sdk.SourceTask. Nothing upstream needs acknowledging
// (positions live only in the framework's offsets); it updates the lag and
// copy metrics.
func (t *Task) Commit(ctx context.Context, offsets []sdk.SourceOffset) error {
	var records, bytes int
	now := time.Now()
	t.mu.Lock()
	for _, o := range offsets {
		p := t.lookup(o.Partition)
		if p == nil {
			continue
		}
		n, err := offsetValue(o.Offset[fieldOffset])
		if err != nil {
			continue
		}
		p.committed = max(p.committed, n+1)
		p.lastCommitted = now
		i := 0
		for ; i < len(p.inflight) && p.inflight[i].last <= n; i++ {
			records += p.inflight[i].records
			bytes += p.inflight[i].bytes
		}
		p.inflight = slices.Delete(p.inflight, 0, i)
	}
	if t.drained != nil {
		close(t.drained) // wake a Poll waiting for partitions to go idle
		t.drained = make(chan struct{})
	}
	t.mu.Unlock()
	t.metrics.records.Add(float64(records))
	t.metrics.bytes.Add(float64(bytes))
	return nil
}

// lookup finds the partition a committed source partition names.
func (t *Task) lookup(sp map[string]any) *partition {
	topic, _ := sp[fieldTopic].(string)
	cluster, _ := sp[fieldCluster].(string)
	pn, err := offsetValue(sp[fieldPartition])
	if err != nil || cluster != t.cluster || pn < 0 || pn > math.MaxInt32 {
		return nil
	}
	return t.parts[topicPartition{topic, int32(pn)}]
}

// Stop implements sdk.SourceTask. It waits for a running Poll (which
// returns within poll.timeout.ms) before closing the consumer.
func (t *Task) Stop(ctx context.Context) error {
	if t.metrics != nil {
		t.metrics.unregister()
	}
	done := make(chan error, 1)
	go func() {
		t.pollMu.Lock()
		defer t.pollMu.Unlock()
		t.closeSyncs()
		t.mu.Lock()
		c := t.consumer
		t.consumer = nil
		t.mu.Unlock()
		if c == nil {
			done <- nil
			return
		}
		done <- c.Close()
	}()
	select {
	case err := <-done:
		if err != nil {
			return fmt.Errorf("closing the source consumer: %w", err)
		}
		return nil
	case <-ctx.Done():
		return fmt.Errorf("closing the source consumer: %w", ctx.Err())
	}
}

// offsetValue reads an integer offset as the framework may hand it back:
// as this task wrote it, or decoded from JSON.
func offsetValue(v any) (int64, error) {
	switch n := v.(type) {
	case int64:
		return n, nil
	case int:
		return int64(n), nil
	case int32:
		return int64(n), nil
	case float64:
		if n != math.Trunc(n) || math.Abs(n) > 1<<53 {
			return 0, fmt.Errorf("offset %v is not an integer", n)
		}
		return int64(n), nil
	case json.Number:
		return n.Int64()
	case string:
		return strconv.ParseInt(n, 10, 64)
	case nil:
		return 0, errors.New("offset is missing")
	}
	return 0, fmt.Errorf("offset has unexpected type %T", v)
}
