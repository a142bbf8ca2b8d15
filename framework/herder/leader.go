package herder

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"github.com/connectd/connectd/framework/herder/assignment"
	"github.com/connectd/connectd/framework/herder/clusterstate"
	"github.com/connectd/connectd/framework/rest/api"
)

// sessionKeyAlgorithm is the inter-worker signing algorithm (Kafka's default).
const sessionKeyAlgorithm = "HmacSHA256"

// leader is the leader role of this worker. It is active only while this
// worker's group member owns partition 0 and its transactional producer
// (transactional.id connect-cluster-${group.id}) has been initialised: that
// InitTransactions fences any previous leader, so at most one leader's
// config-topic writes can commit. A leader that finds itself fenced steps
// down and rejoins the group.
type leader struct {
	h   *Herder
	log *slog.Logger

	// mu serialises transactions and guards the fields below.
	mu       sync.Mutex
	producer *kafka.Producer
	wg       sync.WaitGroup
	fencedAt int64 // membership epoch when fenced; -1 when not fenced
	// plan remembers the moves in progress and the departed workers
	// between two assignments.
	plan *assignment.Planner
	// pendingSince: when the leader first saw each exactly-once
	// connector's task generation waiting to be fenced.
	pendingSince map[string]time.Time
	members      []string
	membersAt    time.Time
	membersEp    int64
	// settled is what the last assignment computation that changed
	// nothing was computed from. While the config topic and the members
	// stay the same and no move or departure waits on time, computing
	// again would give the same answer: reconcile skips that O(work)
	// computation on every membership poll.
	settled *settledInputs

	active atomic.Bool
	// wake is signalled when a leader-side request changed something the
	// loop should look at.
	wake chan struct{}
}

func newLeader(h *Herder) *leader {
	return &leader{
		h:            h,
		log:          h.log.With("component", "leader"),
		fencedAt:     -1,
		plan:         assignment.NewPlanner(),
		pendingSince: map[string]time.Time{},
		wake:         make(chan struct{}, 1),
	}
}

func (l *leader) poke() {
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// run is the leader loop: it claims leadership when the membership says
// so, and keeps the assignment and session key up to date while leading.
func (l *leader) run(ctx context.Context) {
	m := l.h.member
	tick := time.NewTicker(l.h.cfg.MembershipPoll)
	defer tick.Stop()
	var retry <-chan time.Time
	for ctx.Err() == nil {
		memCh := m.Changed()
		cfgCh := l.h.configs.changed.C()
		var stCh <-chan struct{}
		l.mu.Lock()
		if len(l.plan.Revoking) > 0 || len(l.pendingSince) > 0 {
			stCh = l.h.statuses.changed.C()
		}
		l.mu.Unlock()

		if err := l.step(ctx); err != nil && ctx.Err() == nil {
			l.log.Warn("leader step failed; retrying", "err", err)
			retry = time.After(500 * time.Millisecond)
		}
		select {
		case <-ctx.Done():
		case <-memCh:
		case <-cfgCh:
		case <-stCh:
		case <-tick.C:
		case <-retry:
		case <-l.wake:
		}
	}
	l.stepDown("worker stopping")
}

func (l *leader) step(ctx context.Context) error {
	m := l.h.member
	if !m.Leads() {
		if l.active.Load() {
			l.stepDown("the coordination partition moved to another worker")
		}
		return nil
	}
	if !l.active.Load() {
		l.mu.Lock()
		fenced := l.fencedAt >= 0 && l.fencedAt == m.Epoch()
		l.mu.Unlock()
		if fenced {
			// Our view of the group is stale; wait for the rejoin.
			return nil
		}
		if err := l.claim(ctx); err != nil {
			return err
		}
	}
	return l.reconcile(ctx)
}

// claim initialises the transactional producer (fencing any previous
// leader) and reads the config topic to its end.
func (l *leader) claim(ctx context.Context) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	start := time.Now()
	p, err := kafka.NewProducer(l.h.producerConfig(l.h.cfg.GroupID+"-configs-leader", kafka.ConfigMap{
		"transactional.id":       TransactionalID(l.h.cfg.GroupID),
		"enable.idempotence":     true,
		"acks":                   "all",
		"linger.ms":              0,
		"transaction.timeout.ms": 15000,
	}))
	if err != nil {
		return fmt.Errorf("leader producer: %w", err)
	}
	drainLogs(l.log, p.Logs(), &l.wg)
	ictx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := p.InitTransactions(ictx); err != nil {
		p.Close()
		return fmt.Errorf("claiming the config topic (InitTransactions %s): %w", TransactionalID(l.h.cfg.GroupID), err)
	}
	if _, err := l.h.configs.readToEnd(ictx); err != nil {
		p.Close()
		return err
	}
	l.producer = p
	l.fencedAt = -1
	l.plan = assignment.NewPlanner()
	l.settled = nil
	l.pendingSince = map[string]time.Time{}
	l.membersAt = time.Time{}
	l.active.Store(true)
	l.log.Info("leading the cluster", "group", l.h.cfg.GroupID, "claimed_in", time.Since(start).Round(time.Millisecond))
	return nil
}

func (l *leader) stepDown(why string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.stepDownLocked(why)
}

func (l *leader) stepDownLocked(why string) {
	if l.producer == nil {
		return
	}
	l.active.Store(false)
	l.log.Info("stepping down as leader", "reason", why)
	// Nothing queued may still commit (a fenced producer could not
	// anyway), and Close must not wait for messages to time out.
	_ = l.producer.Purge(kafka.PurgeQueue | kafka.PurgeInFlight | kafka.PurgeNonBlocking)
	l.producer.Close()
	l.producer = nil
	l.plan.Revoking = map[assignment.Item]assignment.Revocation{}
}

// fenced handles a fenced producer: step down, and rejoin the group so
// that this worker learns who leads now.
func (l *leader) fencedLocked(err error) {
	l.log.Warn("this worker was fenced from the config topic by a newer leader", "err", err)
	l.fencedAt = l.h.member.Epoch()
	// Rejoin first: the group can hand the coordination partition to
	// another worker while this one is still closing its producer.
	l.h.member.RequestRejoin()
	l.stepDownLocked("fenced by a newer leader")
}

// errNotLeading: the leader role is not active (any more).
var errNotLeading = errors.New("not leading")

// write commits msgs in one transaction and waits until this worker has
// read them back. The caller holds l.mu.
func (l *leader) writeLocked(ctx context.Context, msgs []*kafka.Message) (*clusterstate.Snapshot, error) {
	if l.producer == nil {
		return nil, errNotLeading
	}
	topic := l.h.cfg.ConfigTopic
	for _, m := range msgs {
		m.TopicPartition = kafka.TopicPartition{Topic: &topic, Partition: 0}
	}
	p := l.producer
	if err := p.BeginTransaction(); err != nil {
		if isFenced(err) {
			l.fencedLocked(err)
			return nil, errNotLeading
		}
		return nil, fmt.Errorf("begin transaction: %w", err)
	}
	last, err := produceAll(ctx, p, msgs)
	if err == nil {
		err = p.CommitTransaction(ctx)
	}
	if err != nil {
		if isFenced(err) {
			l.fencedLocked(err)
			return nil, errNotLeading
		}
		actx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if aerr := p.AbortTransaction(actx); aerr != nil {
			if isFenced(aerr) {
				l.fencedLocked(aerr)
				return nil, errNotLeading
			}
			// The producer is in an unknown state: start over.
			l.log.Warn("abort failed; re-claiming", "err", aerr)
			l.stepDownLocked("transaction could not be aborted")
		}
		return nil, fmt.Errorf("config topic transaction: %w", err)
	}
	return l.h.configs.waitFor(ctx, last+1)
}

// privileged runs a leader-only change: under the transaction lock, with
// the config topic read to its end, build computes the records from the
// current snapshot (and may refuse with a typed error); they are written in
// one transaction.
func (l *leader) privileged(ctx context.Context, build func(s *clusterstate.Snapshot) ([]*kafka.Message, error)) (*clusterstate.Snapshot, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.active.Load() {
		return nil, errNotLeading
	}
	snap, err := l.h.configs.readToEnd(ctx)
	if err != nil {
		return nil, err
	}
	msgs, err := build(snap)
	if err != nil || len(msgs) == 0 {
		return snap, err
	}
	msgs, next := l.withAssignmentLocked(ctx, snap, msgs)
	snap, err = l.writeLocked(ctx, msgs)
	if err != nil {
		return snap, err
	}
	if next != nil {
		l.assignmentWrittenLocked(next)
	}
	l.poke()
	return snap, nil
}

// withAssignmentLocked appends to msgs the assignment they make necessary
// (a new connector's, a new task generation's), so that a change of work
// and its assignment commit in one config-topic transaction. Transactions
// are serial, so this halves the ones between a POST and a running task
// (from four to two). Without a membership answer the
// assignment is left to reconcile, which would write the same one.
func (l *leader) withAssignmentLocked(ctx context.Context, snap *clusterstate.Snapshot, msgs []*kafka.Message) ([]*kafka.Message, *clusterstate.Assignment) {
	live, err := l.liveMembersLocked(ctx)
	if err != nil {
		return msgs, nil
	}
	// The computation below may start moves that this write then fails
	// to record: let reconcile compute again.
	l.settled = nil
	after := snap.Clone()
	for i, m := range msgs {
		after.Apply(l.log, string(m.Key), m.Value, snap.Offset+int64(i))
	}
	next, changed := l.computeLocked(after, live, time.Now())
	if !changed {
		return msgs, nil
	}
	return append(msgs, record(clusterstate.AssignmentRecord(next))), next
}

func (l *leader) assignmentWrittenLocked(a *clusterstate.Assignment) {
	l.log.Info("assignment written", "generation", a.Generation, "workers", len(a.Workers), "revoking", len(l.plan.Revoking))
}

// liveMembers returns the group's members, refreshed at most every poll
// interval unless the membership changed.
func (l *leader) liveMembersLocked(ctx context.Context) ([]string, error) {
	ep := l.h.member.Epoch()
	if l.members != nil && ep == l.membersEp && time.Since(l.membersAt) < l.h.cfg.MembershipPoll {
		return l.members, nil
	}
	urls, err := l.h.member.Members(ctx)
	if err != nil {
		return nil, err
	}
	self := l.h.cfg.WorkerURL
	found := false
	for _, u := range urls {
		found = found || u == self
	}
	if !found {
		// The coordinator may not list a member that is mid-rejoin;
		// the leader is alive by definition.
		urls = append(urls, self)
	}
	sort.Strings(urls)
	l.members, l.membersAt, l.membersEp = urls, time.Now(), ep
	return urls, nil
}

// reconcile writes a new session key when needed and a new assignment when
// the work or the members changed.
func (l *leader) reconcile(ctx context.Context) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.active.Load() {
		return nil
	}
	snap := l.h.configs.Snapshot()
	now := time.Now()
	var msgs []*kafka.Message
	if k := snap.SessionKey(); k == nil || now.Sub(time.UnixMilli(k.Created)) >= l.h.cfg.SessionKeyTTL {
		key := make([]byte, 32)
		if _, err := rand.Read(key); err != nil {
			return fmt.Errorf("session key: %w", err)
		}
		msgs = append(msgs, record(clusterstate.SessionKeyRecord(clusterstate.SessionKey{Key: key, Algorithm: sessionKeyAlgorithm, Created: now.UnixMilli()})))
	}
	live, err := l.liveMembersLocked(ctx)
	if err != nil {
		return err
	}
	var next *clusterstate.Assignment
	changed := false
	if !l.settled.same(snap, live) {
		next, changed = l.computeLocked(snap, live, now)
		l.settled = nil
		if !changed && len(l.plan.Revoking) == 0 && len(l.plan.DepartedAt) == 0 {
			l.settled = &settledInputs{configOffset: snap.Offset, live: live}
		}
	}
	if changed {
		msgs = append(msgs, record(clusterstate.AssignmentRecord(next)))
	}
	if len(msgs) > 0 {
		if _, err := l.writeLocked(ctx, msgs); err != nil {
			if errors.Is(err, errNotLeading) {
				return nil
			}
			return err
		}
		if changed {
			l.assignmentWrittenLocked(next)
		}
	}
	return l.fencePendingLocked(ctx, live, now)
}

// fencePendingLocked lets waiting exactly-once task generations start:
// once the previous generation's tasks are reported stopped (or a timeout
// passed, or their workers left), their producers are fenced and
// tasks-fencing-<c> is written.
func (l *leader) fencePendingLocked(ctx context.Context, live []string, now time.Time) error {
	snap := l.h.configs.Snapshot()
	alive := map[string]bool{}
	for _, u := range live {
		alive[WorkerID(u)] = true
	}
	for c := range l.pendingSince {
		if !l.h.fencingPending(snap, c) {
			delete(l.pendingSince, c)
		}
	}
	for _, c := range snap.Connectors() {
		if !l.h.fencingPending(snap, c) {
			continue
		}
		since, ok := l.pendingSince[c]
		if !ok {
			since = now
			l.pendingSince[c] = now
		}
		prev, _ := snap.Fencing(c)
		running := 0
		for i := 0; i < prev; i++ {
			st, ok := l.h.statuses.task(api.ConnectorTaskID{Connector: c, Task: i})
			if ok && alive[st.WorkerID] && (st.State == StateRunning || st.State == StatePaused || st.State == StateRestarting) {
				running++
			}
		}
		if running > 0 && now.Sub(since) < l.h.releaseTimeout() {
			continue
		}
		if running > 0 {
			l.log.Warn("previous exactly-once tasks not reported stopped in time; fencing them anyway", "connector", c, "still_running", running)
		}
		msgs, err := l.h.fenceLocked(ctx, snap, c)
		if err != nil {
			return err
		}
		if _, err := l.writeLocked(ctx, msgs); err != nil {
			if errors.Is(err, errNotLeading) {
				return nil
			}
			return err
		}
		delete(l.pendingSince, c)
		snap = l.h.configs.Snapshot()
		l.log.Info("previous task generation fenced; the new one may start", "connector", c, "fenced_tasks", prev, "tasks", snap.TaskCount(c), "waited", now.Sub(since).Round(time.Millisecond))
	}
	return nil
}

// settledInputs are the inputs of an assignment computation that left the
// assignment as it was.
type settledInputs struct {
	configOffset int64
	live         []string
}

func (in *settledInputs) same(snap *clusterstate.Snapshot, live []string) bool {
	return in != nil && in.configOffset == snap.Offset && slices.Equal(in.live, live)
}

// computeLocked derives the next assignment from the current one (see
// assignment.Planner). It returns changed=false when the assignment would
// stay the same.
func (l *leader) computeLocked(snap *clusterstate.Snapshot, live []string, now time.Time) (*clusterstate.Assignment, bool) {
	next, changed, forced := l.plan.Next(assignment.Input{
		Current:        snap.Assignment(),
		Items:          l.h.cfg.Limits.assignableItems(snap, assignment.Items(snap)),
		Live:           live,
		Leader:         l.h.cfg.WorkerURL,
		Now:            now,
		MaxDelay:       l.h.cfg.ScheduledRebalanceMaxDelay,
		ReleaseTimeout: l.h.releaseTimeout(),
		Released:       l.released,
	})
	for _, f := range forced {
		l.log.Warn("worker did not report a revoked item stopped in time; reassigning it anyway",
			"item", assignment.String(f.Item), "from", f.From, "to", f.To)
	}
	return next, changed
}

// released reports whether the item's previous owner has stopped it: its
// status, written by that worker at the revoking generation or later, says
// UNASSIGNED.
func (l *leader) released(it assignment.Item, rv assignment.Revocation) bool {
	var st Status
	var ok bool
	if assignment.IsConnector(it) {
		st, ok = l.h.statuses.connector(it.Connector)
	} else {
		st, ok = l.h.statuses.task(it)
	}
	return ok && st.WorkerID == WorkerID(rv.From) && st.Generation >= rv.Gen && st.State == StateUnassigned
}

// TransactionalID is the leader's config-topic transactional.id, as Kafka
// Connect names it.
func TransactionalID(groupID string) string { return "connect-cluster-" + groupID }
