package worker

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"github.com/connectd/connectd/framework/chain"
	"github.com/connectd/connectd/framework/sdk"
	"github.com/connectd/connectd/internal/kafkalog"
	"github.com/connectd/connectd/offsets"
	"github.com/connectd/connectd/plugins/host"
)

// Back-pressure bounds of a sink task (see applyPause): at most
// pauseBatches batches or pauseBytes wait for the plugin.
const (
	pauseBatches  = 10
	resumeBatches = 2
	pauseBytes    = 64 << 20
	slowPut       = time.Second

	// defaultStatsInterval is the sink consumer's statistics.interval.ms
	// unless consumer.statistics.interval.ms sets another.
	defaultStatsInterval = 5000
)

// Retry backoff of sink puts: Kafka Connect starts at 300 ms and doubles up
// to errors.retry.delay.max.ms.
const retryBackoffInitial = 300 * time.Millisecond

// sinkRunner runs a sink task: a read_committed consumer in group
// connect-<connector> with cooperative-sticky assignment, puts in offset
// order, and consumer commits of exactly the offsets the task's Flush
// returns, after the dead-letter records they cover are acknowledged.
type sinkRunner struct {
	w      *Worker
	t      *taskRuntime
	id     TaskID
	props  map[string]string
	policy errorPolicy
	eh     *errorHandler
	topics []string // names, or one "^regex"
}

func newSinkRunner(w *Worker, t *taskRuntime) (runner, error) {
	props := clone(t.connProps)
	for k, v := range t.taskProps {
		props[k] = v
	}
	policy, err := parseErrorPolicy(props)
	if err != nil {
		return nil, err
	}
	r := &sinkRunner{w: w, t: t, id: t.id, props: props, policy: policy}
	r.eh = &errorHandler{policy: policy, id: t.id, log: t.log, tm: t.tm}
	list, regex := strings.TrimSpace(props["topics"]), strings.TrimSpace(props["topics.regex"])
	switch {
	case list != "" && regex != "":
		return nil, &ConfigError{Key: "topics", Message: "set exactly one of topics and topics.regex, not both"}
	case list != "":
		for _, tp := range strings.Split(list, ",") {
			if tp = strings.TrimSpace(tp); tp != "" {
				if tp == policy.DLQTopic {
					return nil, &ConfigError{Key: "errors.deadletterqueue.topic.name", Message: fmt.Sprintf("the dead-letter topic %q is also in topics: it would consume its own failures", tp)}
				}
				r.topics = append(r.topics, tp)
			}
		}
	case regex != "":
		// librdkafka subscribes by regex when the name starts with ^.
		if !strings.HasPrefix(regex, "^") {
			regex = "^" + regex
		}
		r.topics = []string{regex}
	}
	if len(r.topics) == 0 {
		return nil, &ConfigError{Key: "topics", Message: "a sink connector needs topics or topics.regex"}
	}
	return r, nil
}

// sinkTask is one sink incarnation's state. Everything but the DLQ
// delivery counters belongs to the goroutine running loop (librdkafka
// calls rebalance callbacks from Poll, on that goroutine).
type sinkTask struct {
	r      *sinkRunner
	topics topicReporter
	hard   context.Context
	c      *kafka.Consumer
	st     *host.SinkTask
	dlq    *kafka.Producer

	dlqMu  sync.Mutex
	dlqErr error

	assigned      map[sdk.TopicPartition]bool
	positions     map[sdk.TopicPartition]int64 // next offset after what is applied (or dead-lettered)
	committed     map[sdk.TopicPartition]int64
	pending       []chain.Raw // consumed, not yet put
	pendingBytes  int
	inflight      *putCall
	inflightSince time.Time
	results       chan putResult
	retry         *putCall // waiting for its backoff
	retryAt       time.Time

	target     TargetState
	bpPaused   bool // paused by back-pressure
	closing    bool
	lastCommit time.Time
	fatal      error
}

// putCall is one Put of a batch, or a retry of some of its records.
type putCall struct {
	batch   []chain.Raw
	advance map[sdk.TopicPartition]int64 // positions reached once the call is resolved
	attempt int
	first   time.Time // first failure of a retried record (errors.retry.timeout)
}

type putResult struct {
	call *putCall
	res  host.PutResult
	err  error
	dur  time.Duration
}

func (r *sinkRunner) run(ctx context.Context, ctl *taskControl) error {
	hard := ctl.hard
	s := &sinkTask{
		r: r, hard: hard, target: ctl.initial, topics: newTopicReporter(r.w.status, r.id),
		assigned: map[sdk.TopicPartition]bool{}, positions: map[sdk.TopicPartition]int64{},
		committed: map[sdk.TopicPartition]int64{}, results: make(chan putResult, 1),
	}
	if r.policy.DLQTopic != "" {
		admin, err := r.w.newAdmin(r.t.connProps)
		if err != nil {
			return err
		}
		err = ensureDLQTopic(ctx, admin.AdminClient, r.policy.DLQTopic, r.policy.DLQReplicationFactor)
		admin.Close()
		if err != nil {
			return err
		}
		cm, err := r.w.clientConfig(producerClient, r.t.connProps, map[string]any{
			"acks": "all", "enable.idempotence": true,
			"client.id":                 fmt.Sprintf("connector-dlq-producer-%s-%d", r.id.Connector, r.id.Task),
			"go.delivery.report.fields": "none",
			// Small Go-side channels (see sourceRunner's producer): the
			// events are drained continuously and ProduceChannel is unused.
			"go.produce.channel.size": 0,
			"go.events.channel.size":  10000,
		})
		if err != nil {
			return err
		}
		if s.dlq, err = kafkalog.NewProducer(r.t.log, cm); err != nil {
			return fmt.Errorf("dead-letter producer: %w", err)
		}
		defer s.dlq.Close()
		go drainEvents(s.dlq, func(m *kafka.Message) {
			if m.TopicPartition.Error != nil {
				s.setDLQErr(fmt.Errorf("dead-letter write to %s failed: %w", r.policy.DLQTopic, m.TopicPartition.Error))
			}
		}, func(ke kafka.Error) {
			if ke.IsFatal() {
				s.setDLQErr(fmt.Errorf("dead-letter producer: %w", ke))
			}
		})
	}

	cm, err := r.w.clientConfig(consumerClient, r.t.connProps, map[string]any{
		"group.id":                      offsets.SinkGroup(r.id.Connector),
		"enable.auto.commit":            false,
		"enable.auto.offset.store":      false,
		"isolation.level":               "read_committed",
		"partition.assignment.strategy": "cooperative-sticky",
		"client.id":                     fmt.Sprintf("connector-consumer-%s-%d", r.id.Connector, r.id.Task),
	})
	if err != nil {
		return err
	}
	if _, ok := cm["auto.offset.reset"]; !ok {
		cm["auto.offset.reset"] = "earliest"
	}
	if _, ok := cm["statistics.interval.ms"]; !ok {
		// The consumer lag gauge (connectd_sink_lag_records) comes from
		// librdkafka's statistics.
		cm["statistics.interval.ms"] = defaultStatsInterval
	}
	p, _, release, err := r.w.acquireProcess(ctx, r.id.Connector, r.props)
	if err != nil {
		return err
	}
	defer release()
	s.st, err = p.StartSinkTask(ctx, host.SinkTaskStart{Connector: r.id.Connector, Task: r.id.Task, Props: r.props, Defaults: r.w.cfg.ConverterDefaults})
	if err != nil {
		return err
	}
	defer func() {
		sctx, cancel := context.WithTimeout(hard, 30*time.Second)
		defer cancel()
		_ = s.st.Stop(sctx)
	}()
	if s.c, err = kafkalog.NewConsumer(r.t.log, cm); err != nil {
		return fmt.Errorf("consumer: %w", err)
	}
	defer func() {
		s.closing = true
		// Unsubscribe before Close: librdkafka (2.11) sends no LeaveGroup
		// when a cooperative-sticky member holding no partitions closes,
		// and the group would keep the dead member for a session timeout,
		// stalling the connector's other tasks at their next rebalance.
		// Unsubscribing leaves in every case (once the revoked partitions,
		// if any, are unassigned inside Close).
		if err := s.c.Unsubscribe(); err != nil {
			r.t.log.Warn("leaving the sink consumer group failed", "error", err)
		}
		_ = s.c.Close()
	}()
	if err := s.c.SubscribeTopics(r.topics, s.rebalance); err != nil {
		return fmt.Errorf("subscribe %v: %w", r.topics, err)
	}
	if s.target == TargetPaused {
		ctl.report(StatePaused)
	} else {
		ctl.report(StateRunning)
	}
	s.lastCommit = time.Now()
	return s.loop(ctx, ctl)
}

func (s *sinkTask) setDLQErr(err error) {
	s.dlqMu.Lock()
	defer s.dlqMu.Unlock()
	if s.dlqErr == nil {
		s.dlqErr = err
	}
}

func (s *sinkTask) loop(ctx context.Context, ctl *taskControl) error {
	limit := s.r.w.cfg.SinkBatchRecords
	for {
		if s.fatal != nil {
			return s.fatal
		}
		select {
		case <-ctx.Done():
			return s.shutdown()
		case t := <-ctl.targets:
			s.target = t
			if err := s.applyPause(); err != nil {
				return err
			}
			if t == TargetPaused {
				ctl.report(StatePaused)
			} else {
				ctl.report(StateRunning)
			}
		case res := <-s.results:
			if err := s.handleResult(res); err != nil {
				return err
			}
		default:
		}
		// Launch the next put: a retry when its backoff is over, else the
		// pending records.
		if s.inflight == nil {
			if s.retry != nil {
				if !time.Now().Before(s.retryAt) {
					call := s.retry
					s.retry = nil
					s.launch(call)
				}
			} else if len(s.pending) > 0 {
				n := min(len(s.pending), limit)
				batch := make([]chain.Raw, n)
				copy(batch, s.pending[:n])
				s.pending = append(s.pending[:0], s.pending[n:]...)
				s.pendingBytes -= rawBytes(batch)
				s.launch(&putCall{batch: batch, advance: advanceOf(batch)})
			}
		}
		if err := s.applyPause(); err != nil {
			return err
		}
		if time.Since(s.lastCommit) >= s.r.w.cfg.OffsetFlushInterval {
			if err := s.commit(nil); errors.Is(err, errCommitRefused) {
				s.r.t.log.Info("offset commit refused during a rebalance; committing again next time", "error", err)
			} else if err != nil {
				return err
			}
		}
		// Enough records wait and the put in flight is quick: wait for it
		// instead of polling (librdkafka stops fetching when its bounded
		// prefetch queue is full). A slow put gets the partitions paused
		// instead (applyPause), so that polling, and with it rebalances,
		// go on.
		if s.full() && s.inflight != nil && !s.slowPut() {
			wait := time.NewTimer(max(time.Until(s.inflightSince.Add(slowPut)), time.Millisecond))
			select {
			case res := <-s.results:
				wait.Stop()
				if err := s.handleResult(res); err != nil {
					return err
				}
			case <-wait.C:
			case <-ctx.Done():
				wait.Stop()
			}
			continue
		}
		// Poll: briefly when work is waiting, otherwise up to 100 ms.
		timeout := 100
		if s.inflight != nil || s.retry != nil || len(s.pending) > 0 {
			timeout = 5
		}
		if err := s.poll(timeout, pauseBatches*limit-len(s.pending)); err != nil {
			return err
		}
	}
}

// full reports that enough consumed records wait for the plugin.
func (s *sinkTask) full() bool {
	return len(s.pending) >= pauseBatches*s.r.w.cfg.SinkBatchRecords || s.pendingBytes >= pauseBytes
}

// slowPut reports a put in flight for longer than slowPut.
func (s *sinkTask) slowPut() bool {
	return s.inflight != nil && time.Since(s.inflightSince) >= slowPut
}

// poll consumes up to room records; rebalance callbacks run inside.
func (s *sinkTask) poll(timeoutMs, room int) error {
	for i := 0; i < max(room, 1); i++ {
		ev := s.c.Poll(timeoutMs)
		if ev == nil {
			return nil
		}
		timeoutMs = 0
		switch e := ev.(type) {
		case *kafka.Message:
			if e.TopicPartition.Error != nil {
				return fmt.Errorf("consume: %w", e.TopicPartition.Error)
			}
			s.r.t.tm.sinkRead.Inc()
			s.r.t.tm.sinkBytes.Add(float64(len(e.Key) + len(e.Value)))
			s.pending = append(s.pending, rawOf(e))
			s.pendingBytes += len(e.Key) + len(e.Value)
		case kafka.Error:
			if e.IsFatal() {
				return fmt.Errorf("consumer: %w", e)
			}
			s.r.t.log.Warn("consumer error", "error", e)
		case *kafka.Stats:
			if lag, ok := maxConsumerLag(e.String(), func(topic string, p int32) bool {
				return s.assigned[sdk.TopicPartition{Topic: topic, Partition: p}]
			}); ok {
				s.r.t.tm.setLag(lag)
			}
		}
		if s.fatal != nil {
			return s.fatal
		}
	}
	return nil
}

func rawOf(m *kafka.Message) chain.Raw {
	r := chain.Raw{
		Topic: *m.TopicPartition.Topic, Partition: m.TopicPartition.Partition, Offset: int64(m.TopicPartition.Offset),
		Key: m.Key, Value: m.Value,
	}
	if m.TimestampType != kafka.TimestampNotAvailable {
		r.Timestamp = m.Timestamp
	}
	if len(m.Headers) > 0 {
		r.Headers = make([]sdk.Header, len(m.Headers))
		for i, h := range m.Headers {
			r.Headers[i] = sdk.Header{Key: h.Key, Value: h.Value}
		}
	}
	return r
}

func rawBytes(recs []chain.Raw) int {
	n := 0
	for i := range recs {
		n += len(recs[i].Key) + len(recs[i].Value)
	}
	return n
}

func advanceOf(batch []chain.Raw) map[sdk.TopicPartition]int64 {
	adv := map[sdk.TopicPartition]int64{}
	for i := range batch {
		tp := sdk.TopicPartition{Topic: batch[i].Topic, Partition: batch[i].Partition}
		if o := batch[i].Offset + 1; o > adv[tp] {
			adv[tp] = o
		}
	}
	return adv
}

// launch starts a Put in the background; the loop keeps polling (and the
// consumer keeps its group membership) while the plugin works.
func (s *sinkTask) launch(call *putCall) {
	s.topics.batch()
	for tp := range call.advance {
		s.topics.record(tp.Topic)
	}
	s.inflight, s.inflightSince = call, time.Now()
	go func() {
		start := time.Now()
		res, err := s.st.Put(s.hard, call.batch)
		s.results <- putResult{call: call, res: res, err: err, dur: time.Since(start)}
	}()
}

// wait blocks for the in-flight put (before a commit or a revocation).
func (s *sinkTask) wait() error {
	if s.inflight == nil {
		return nil
	}
	return s.handleResult(<-s.results)
}

func (s *sinkTask) handleResult(res putResult) error {
	s.inflight = nil
	call := res.call
	tm := s.r.t.tm
	tm.putDuration.Observe(res.dur.Seconds())
	tm.sinkBatch.Observe(float64(len(call.batch)))
	if res.err != nil {
		if !sdk.IsRetriable(res.err) {
			return fmt.Errorf("put: %w", res.err)
		}
		// Retriable batch failure: pause, back off, deliver the same batch
		// again (Kafka Connect retries these until they succeed).
		tm.retry(string(sdk.StageTaskPut))
		d := backoff(retryBackoffInitial, max(s.r.policy.RetryDelayMax, retryBackoffInitial), call.attempt)
		s.r.t.log.Warn("put failed with a retriable error; redelivering the batch after backoff", "error", res.err, "backoff", d, "records", len(call.batch))
		call.attempt++
		s.retry, s.retryAt = call, time.Now().Add(d)
		return nil
	}
	var again []chain.Raw
	failed := map[int]bool{}
	for _, f := range res.res.Failures {
		failed[f.Index] = true
		rec := call.batch[f.Index]
		if f.Retriable && s.withinRetryTimeout(call) {
			tm.retry(string(f.Stage))
			again = append(again, rec)
			continue
		}
		rf := &recordFailure{
			Stage: f.Stage, Class: f.Class, Message: f.Message, Trace: f.Trace,
			Topic: rec.Topic, Partition: rec.Partition, Offset: rec.Offset,
			Key: rec.Key, Value: rec.Value, Headers: rec.Headers, Timestamp: rec.Timestamp,
		}
		dlq, err := s.r.eh.handle(rf)
		if err != nil {
			return err
		}
		if dlq != nil {
			if err := produce(s.hard, s.dlq, dlq); err != nil {
				tm.dlqFailed.Inc()
				return fmt.Errorf("produce to dead-letter topic %s: %w", s.r.policy.DLQTopic, err)
			}
			tm.dlqOK.Inc()
		}
	}
	tm.sinkSent.Add(float64(len(call.batch) - len(failed)))
	if len(again) > 0 {
		if call.first.IsZero() {
			call.first = time.Now()
		}
		d := backoff(retryBackoffInitial, max(s.r.policy.RetryDelayMax, retryBackoffInitial), call.attempt)
		s.retry = &putCall{batch: again, advance: call.advance, attempt: call.attempt + 1, first: call.first}
		s.retryAt = time.Now().Add(d)
		return nil
	}
	for tp, o := range call.advance {
		if s.assigned[tp] && o > s.positions[tp] {
			s.positions[tp] = o
		}
	}
	return nil
}

// withinRetryTimeout: errors.retry.timeout 0 means no retries, -1 forever.
func (s *sinkTask) withinRetryTimeout(call *putCall) bool {
	rt := s.r.policy.RetryTimeout
	switch {
	case rt < 0:
		return true
	case rt == 0:
		return false
	case call.first.IsZero():
		return true
	}
	return time.Since(call.first) < rt
}

// applyPause pauses or resumes the assigned partitions: paused while the
// target is PAUSED, while a retriable put failure backs off, and while
// enough records wait behind a slow put (back-pressure: the consumer
// keeps polling for rebalances but fetches nothing). Resuming waits until
// few records are left: librdkafka drops its prefetched records on pause
// and fetches them again on resume (measured: a few hundred ms each time),
// which is also why a quick put is waited for rather than paused for.
func (s *sinkTask) applyPause() error {
	want := s.target == TargetPaused || s.retry != nil
	switch {
	case s.full() && s.slowPut():
		want = true
	case s.bpPaused && len(s.pending) > resumeBatches*s.r.w.cfg.SinkBatchRecords:
		want = true
	}
	if want == s.bpPaused {
		return nil
	}
	parts := s.assignedList()
	if len(parts) > 0 {
		var err error
		if want {
			err = s.c.Pause(parts)
		} else {
			err = s.c.Resume(parts)
		}
		if err != nil {
			return fmt.Errorf("pause/resume partitions: %w", err)
		}
	}
	s.bpPaused = want
	return nil
}

func (s *sinkTask) assignedList() []kafka.TopicPartition {
	out := make([]kafka.TopicPartition, 0, len(s.assigned))
	for tp := range s.assigned {
		topic := tp.Topic
		out = append(out, kafka.TopicPartition{Topic: &topic, Partition: tp.Partition})
	}
	return out
}

func toTPs(parts []kafka.TopicPartition) []sdk.TopicPartition {
	out := make([]sdk.TopicPartition, len(parts))
	for i, p := range parts {
		out[i] = sdk.TopicPartition{Topic: *p.Topic, Partition: p.Partition}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Topic != out[j].Topic {
			return out[i].Topic < out[j].Topic
		}
		return out[i].Partition < out[j].Partition
	})
	return out
}

// rebalance runs inside Poll. On revocation it finishes the put in flight,
// flushes and commits the revoked partitions, and closes them in the task
// before they are given up.
func (s *sinkTask) rebalance(c *kafka.Consumer, ev kafka.Event) error {
	if s.closing || s.fatal != nil {
		return nil
	}
	switch e := ev.(type) {
	case kafka.AssignedPartitions:
		if err := c.IncrementalAssign(e.Partitions); err != nil {
			s.fatal = fmt.Errorf("assign: %w", err)
			return nil
		}
		tps := toTPs(e.Partitions)
		for _, tp := range tps {
			s.assigned[tp] = true
		}
		if s.bpPaused {
			if err := c.Pause(e.Partitions); err != nil {
				s.fatal = fmt.Errorf("pause: %w", err)
				return nil
			}
		}
		s.r.t.tm.sinkPartitions.Set(float64(len(s.assigned)))
		if err := s.st.Open(s.hard, tps); err != nil {
			s.fatal = fmt.Errorf("open %v: %w", tps, err)
		}
	case kafka.RevokedPartitions:
		tps := toTPs(e.Partitions)
		revoked := map[sdk.TopicPartition]bool{}
		for _, tp := range tps {
			revoked[tp] = true
		}
		if err := s.wait(); err != nil {
			s.fatal = err
			return nil
		}
		s.pending = dropPartitions(s.pending, revoked)
		s.pendingBytes = rawBytes(s.pending)
		if s.retry != nil {
			s.retry.batch = dropPartitions(s.retry.batch, revoked)
			if len(s.retry.batch) == 0 {
				s.retry = nil
			}
		}
		if !c.AssignmentLost() {
			if err := s.commit(revoked); errors.Is(err, errCommitRefused) {
				// The new owner resumes from the last commit: records are
				// delivered again, none is lost.
				s.r.t.log.Warn("commit of revoked partitions refused; their records since the last commit will be delivered again", "error", err)
			} else if err != nil {
				s.fatal = err
				return nil
			}
		}
		if err := s.st.Close(s.hard, tps); err != nil {
			s.fatal = fmt.Errorf("close %v: %w", tps, err)
		}
		for _, tp := range tps {
			delete(s.assigned, tp)
			delete(s.positions, tp)
			delete(s.committed, tp)
		}
		s.r.t.tm.sinkPartitions.Set(float64(len(s.assigned)))
		if err := c.IncrementalUnassign(e.Partitions); err != nil && s.fatal == nil {
			s.fatal = fmt.Errorf("unassign: %w", err)
		}
	}
	return nil
}

func dropPartitions(recs []chain.Raw, drop map[sdk.TopicPartition]bool) []chain.Raw {
	out := recs[:0]
	for _, r := range recs {
		if !drop[sdk.TopicPartition{Topic: r.Topic, Partition: r.Partition}] {
			out = append(out, r)
		}
	}
	return out
}

// commit flushes the task and commits the offsets it returns (only those of
// partitions still assigned, never beyond what was put), after the
// dead-letter records produced so far are acknowledged. only restricts it
// to some partitions (a revocation).
func (s *sinkTask) commit(only map[sdk.TopicPartition]bool) error {
	s.lastCommit = time.Now()
	if err := s.wait(); err != nil {
		return err
	}
	want := map[sdk.TopicPartition]int64{}
	for tp, o := range s.positions {
		if only == nil || only[tp] {
			want[tp] = o
		}
	}
	if len(want) == 0 {
		return nil
	}
	start := time.Now()
	if err := s.flushDLQ(); err != nil {
		return err
	}
	safe, err := s.st.Flush(s.hard, want)
	if err != nil {
		s.r.t.tm.commitFailed.Inc()
		if sdk.IsRetriable(err) {
			s.r.t.log.Warn("flush failed with a retriable error; offsets not committed this time", "error", err)
			return nil
		}
		return fmt.Errorf("flush: %w", err)
	}
	var list []kafka.TopicPartition
	for tp, o := range safe {
		if !s.assigned[tp] || (only != nil && !only[tp]) {
			continue
		}
		if o > want[tp] {
			// A task may not claim more than it was given.
			o = want[tp]
		}
		if o <= s.committed[tp] {
			continue
		}
		topic := tp.Topic
		list = append(list, kafka.TopicPartition{Topic: &topic, Partition: tp.Partition, Offset: kafka.Offset(o)})
	}
	if len(list) == 0 {
		return nil
	}
	if _, err := s.c.CommitOffsets(list); err != nil {
		s.r.t.tm.commitFailed.Inc()
		var ke kafka.Error
		if errors.As(err, &ke) && (ke.Code() == kafka.ErrRebalanceInProgress || ke.Code() == kafka.ErrIllegalGeneration || ke.Code() == kafka.ErrUnknownMemberID) {
			return fmt.Errorf("%w: %v", errCommitRefused, err)
		}
		return fmt.Errorf("commit offsets: %w", err)
	}
	for _, tp := range list {
		s.committed[sdk.TopicPartition{Topic: *tp.Topic, Partition: tp.Partition}] = int64(tp.Offset)
	}
	s.r.t.tm.commitOK.Inc()
	s.r.t.tm.commitDuration.Observe(time.Since(start).Seconds())
	return nil
}

// errCommitRefused: the group coordinator refused a commit because a
// rebalance is in progress. Periodic commits try again next time;
// shutdown polls (which completes the rebalance) and retries.
var errCommitRefused = errors.New("offset commit refused during a rebalance")

// flushDLQ waits until every dead-letter record produced so far is
// acknowledged: their offsets may be committed only then.
func (s *sinkTask) flushDLQ() error {
	if s.dlq == nil {
		return nil
	}
	for s.dlq.Len() > 0 {
		if s.hard.Err() != nil {
			return fmt.Errorf("dead-letter records not acknowledged: %w", s.hard.Err())
		}
		s.dlq.Flush(100)
	}
	s.dlqMu.Lock()
	defer s.dlqMu.Unlock()
	if s.dlqErr != nil {
		s.r.t.tm.dlqFailed.Inc()
		return s.dlqErr
	}
	return nil
}

// shutdown finishes the put in flight, commits, and closes the partitions
// in the task.
func (s *sinkTask) shutdown() error {
	for attempt := 0; ; attempt++ {
		err := s.commit(nil)
		if !errors.Is(err, errCommitRefused) {
			if err != nil {
				return err
			}
			break
		}
		if attempt >= 50 || s.hard.Err() != nil {
			s.r.t.log.Warn("final offset commit refused during a rebalance; the records will be delivered again", "error", err)
			break
		}
		// Another member joined or left: let the rebalance complete (its
		// callbacks run inside Poll), then commit what is still ours.
		s.c.Poll(100)
		if s.fatal != nil {
			return s.fatal
		}
	}
	if tps := s.assignedList(); len(tps) > 0 {
		if err := s.st.Close(s.hard, toTPs(tps)); err != nil {
			s.r.t.log.Warn("closing partitions in the task failed", "error", err)
		}
	}
	s.closing = true
	return nil
}
