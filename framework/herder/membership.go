package herder

import (
	"context"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"
)

// membership keeps this worker in the cluster's consumer group. The group
// is subscribed to the one-partition config topic with fetching paused: it
// exists only so that Kafka's group coordinator tracks which workers are
// alive (session timeout) and picks one of them, the owner of partition 0,
// as the leader. The member's client.id is the worker's REST URL, which the
// leader reads back with DescribeConsumerGroups.
type membership struct {
	log      *slog.Logger
	group    string
	topic    string
	url      string
	consumer *kafka.Consumer
	admin    *kafka.AdminClient

	// owner: this member currently holds partition 0.
	owner atomic.Bool
	// epoch counts assignment changes; the leader re-claims only after a
	// fresh one (see leader.run).
	epoch   atomic.Int64
	joined  atomic.Bool
	changed *broadcast
	rejoin  chan struct{}
	// onChange is told of every membership change (rebalance metrics).
	onChange func()
	// onFatal is told of a fatal member error; the poll loop then ends.
	onFatal func(error)
	// fatal: the consumer hit a fatal error and must not be closed (see
	// close).
	fatal atomic.Bool

	wg       sync.WaitGroup
	running  bool
	pollDone chan struct{}
}

func (h *Herder) newMembership() (*membership, error) {
	own := kafka.ConfigMap{
		"group.id":                      h.cfg.GroupID,
		"partition.assignment.strategy": "cooperative-sticky",
		"session.timeout.ms":            int(h.cfg.SessionTimeout.Milliseconds()),
		"heartbeat.interval.ms":         int(h.cfg.HeartbeatInterval.Milliseconds()),
		// librdkafka uses max.poll.interval.ms as the JoinGroup rebalance
		// timeout; this member polls every 100 ms.
		"max.poll.interval.ms":     int(h.cfg.RebalanceTimeout.Milliseconds()),
		"enable.auto.commit":       false,
		"enable.auto.offset.store": false,
		"auto.offset.reset":        "latest",
	}
	if h.cfg.StaticMembership {
		own["group.instance.id"] = h.workerID
	}
	cons, err := kafka.NewConsumer(h.clientConfig(h.cfg.WorkerURL, own))
	if err != nil {
		return nil, fmt.Errorf("group member: %w", err)
	}
	// The admin client shares the member's connection and log channel.
	admin, err := kafka.NewAdminClientFromConsumer(cons)
	if err != nil {
		cons.Close()
		return nil, fmt.Errorf("admin client: %w", err)
	}
	m := &membership{
		log:      h.log.With("component", "membership"),
		group:    h.cfg.GroupID,
		topic:    h.cfg.ConfigTopic,
		url:      h.cfg.WorkerURL,
		consumer: cons,
		admin:    admin,
		changed:  newBroadcast(),
		rejoin:   make(chan struct{}, 1),
		onChange: h.rebal.membershipChanged,
		onFatal:  h.fail,
		pollDone: make(chan struct{}),
	}
	drainLogs(m.log, cons.Logs(), &m.wg)
	return m, nil
}

func (m *membership) subscribe() error {
	return m.consumer.Subscribe(m.topic, m.rebalanced)
}

// rebalanced runs inside Poll on membership changes.
func (m *membership) rebalanced(c *kafka.Consumer, ev kafka.Event) error {
	switch e := ev.(type) {
	case kafka.AssignedPartitions:
		if err := c.IncrementalAssign(e.Partitions); err != nil {
			m.log.Error("incremental assign failed", "err", err)
		}
		// Fetching stays paused: the group is for membership only.
		if len(e.Partitions) > 0 {
			if err := c.Pause(e.Partitions); err != nil {
				m.log.Error("pause failed", "err", err)
			}
		}
		m.joined.Store(true)
		if owns(e.Partitions) {
			m.owner.Store(true)
			m.log.Info("this worker now owns the coordination partition and will lead")
		}
	case kafka.RevokedPartitions:
		lost := c.AssignmentLost()
		if err := c.IncrementalUnassign(e.Partitions); err != nil {
			m.log.Error("incremental unassign failed", "err", err)
		}
		if owns(e.Partitions) {
			m.owner.Store(false)
			m.log.Info("this worker no longer owns the coordination partition", "membership_lost", lost)
		}
		if lost {
			m.joined.Store(false)
		}
	}
	m.epoch.Add(1)
	m.onChange()
	m.changed.Notify()
	return nil
}

func owns(tps []kafka.TopicPartition) bool {
	for _, tp := range tps {
		if tp.Partition == 0 {
			return true
		}
	}
	return false
}

// run polls the group member until ctx ends.
func (m *membership) run(ctx context.Context) error {
	if err := m.subscribe(); err != nil {
		return fmt.Errorf("join group %s: %w", m.group, err)
	}
	m.running = true
	go func() {
		defer close(m.pollDone)
		for ctx.Err() == nil {
			select {
			case <-m.rejoin:
				m.rejoinGroup(ctx)
			default:
			}
			switch e := m.consumer.Poll(100).(type) {
			case kafka.Error:
				if e.IsFatal() {
					// FENCED_INSTANCE_ID: a newer process joined with this
					// worker's group.instance.id. The consumer is unusable.
					m.log.Error("group member failed; this worker can no longer take part in the cluster", "err", e, "code", e.Code())
					m.fatal.Store(true)
					m.owner.Store(false)
					m.joined.Store(false)
					m.changed.Notify()
					m.onFatal(fmt.Errorf("cluster membership of group %s: %w (another live worker may use the same advertised URL, hence the same group.instance.id)", m.group, e))
					return
				}
				m.log.Warn("group member error", "err", e, "code", e.Code())
			case *kafka.Message:
				// Paused; nothing should arrive.
			}
		}
	}()
	return nil
}

// rejoinGroup leaves the group and joins it again as a new member. It
// lets librdkafka finish the revocation (served by Poll) before it
// subscribes again, rather than changing the subscription while the leave
// is still in progress.
func (m *membership) rejoinGroup(ctx context.Context) {
	m.log.Info("rejoining the group")
	m.owner.Store(false)
	if err := m.consumer.Unsubscribe(); err != nil {
		m.log.Warn("unsubscribe failed", "err", err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for ctx.Err() == nil && time.Now().Before(deadline) {
		m.consumer.Poll(50)
		if a, err := m.consumer.Assignment(); err == nil && len(a) == 0 {
			break
		}
	}
	if err := m.subscribe(); err != nil {
		m.log.Error("resubscribe failed", "err", err)
	}
	m.epoch.Add(1)
	m.onChange()
	m.changed.Notify()
}

// requestRejoin makes the member leave and rejoin the group, so that a
// worker whose view of the group is stale gets a fresh one.
func (m *membership) requestRejoin() {
	select {
	case m.rejoin <- struct{}{}:
	default:
	}
}

// listed reports whether the group still lists this worker.
func (m *membership) listed() bool {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	urls, err := m.members(ctx)
	if err != nil {
		return true
	}
	for _, u := range urls {
		if u == m.url {
			return true
		}
	}
	return false
}

// members lists the REST URLs of the group's live members, sorted and
// deduplicated (a restarted worker may briefly appear twice until the
// coordinator expires its previous incarnation).
func (m *membership) members(ctx context.Context) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	res, err := m.admin.DescribeConsumerGroups(ctx, []string{m.group})
	if err != nil {
		return nil, fmt.Errorf("describe group %s: %w", m.group, err)
	}
	if len(res.ConsumerGroupDescriptions) != 1 {
		return nil, fmt.Errorf("describe group %s: %d descriptions", m.group, len(res.ConsumerGroupDescriptions))
	}
	g := res.ConsumerGroupDescriptions[0]
	if g.Error.Code() != kafka.ErrNoError {
		return nil, fmt.Errorf("describe group %s: %w", m.group, g.Error)
	}
	seen := map[string]bool{}
	var urls []string
	for _, mem := range g.Members {
		if mem.ClientID == "" || seen[mem.ClientID] {
			continue
		}
		seen[mem.ClientID] = true
		urls = append(urls, mem.ClientID)
	}
	sort.Strings(urls)
	return urls, nil
}

// close leaves the group (the coordinator hands partition 0 to another
// worker at once) and closes the clients. librdkafka's Close alone does
// not always send LeaveGroup, which would leave the worker listed until
// its session expires; Unsubscribe does, so close unsubscribes and polls
// until the group no longer lists this worker (at most 2 s).
func (m *membership) close() {
	if m.running {
		<-m.pollDone
	}
	if m.fatal.Load() {
		// confluent-kafka-go v2.11.1's Close polls forever on a consumer
		// in a fatal state (it ignores rd_kafka_consumer_close_queue's
		// error; confluent-kafka-go#1588). A fenced member cannot leave
		// anyway, and the worker exits next: leave the handle to the
		// process exit.
		m.admin.Close()
		m.log.Warn("not closing the fenced group member (its client would hang); it ends with the process")
		return
	}
	if m.running {
		if err := m.consumer.Unsubscribe(); err != nil {
			m.log.Warn("leaving the group failed", "err", err)
		}
		deadline := time.Now().Add(2 * time.Second)
		for time.Now().Before(deadline) {
			for range 4 {
				m.consumer.Poll(50)
			}
			if !m.listed() {
				break
			}
		}
	}
	m.admin.Close()
	if err := m.consumer.Close(); err != nil {
		m.log.Warn("leaving the group failed", "err", err)
	}
	m.wg.Wait()
}
