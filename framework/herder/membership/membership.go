// Package membership keeps a connectd worker in its cluster's consumer
// group and says whether it leads. The group (${group.id}) is subscribed
// to the one-partition config topic with fetching paused: it exists only
// so that Kafka's group coordinator tracks which workers are alive
// (session timeout) and picks one of them, the owner of partition 0, as
// the leader. The member's client.id is the worker's REST URL, which the
// leader reads back (Members) to know whom to assign work; its
// group.instance.id is the worker id unless static membership is off.
//
// What this package must not do: read the config topic, decide or write
// assignments (the herder's leader does, framework/herder/assignment
// computes them), or act on a change itself: it counts changes (Epoch),
// signals them (Changed, Config.OnChange) and reports a fatal member error
// (Config.OnFatal); the herder decides what follows.
package membership

import (
	"context"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"github.com/connectd/connectd/framework/herder/internal/notify"
	"github.com/connectd/connectd/internal/kafkaadmin"
	"github.com/connectd/connectd/internal/kafkalog"
)

// Config is a member's configuration; the herder builds it from its own.
type Config struct {
	// Group is group.id, Topic the config topic the group subscribes to,
	// URL this worker's advertised REST URL (the member's client.id).
	Group, Topic, URL string
	// InstanceID is group.instance.id (static membership); "" joins as a
	// dynamic member.
	InstanceID string
	// SessionTimeout, HeartbeatInterval and RebalanceTimeout are the
	// group's session.timeout.ms, heartbeat.interval.ms and
	// rebalance.timeout.ms.
	SessionTimeout, HeartbeatInterval, RebalanceTimeout time.Duration
	// Client is the librdkafka configuration of the member's connection
	// (bootstrap servers, security, client.id, log channel); the member
	// adds its group settings, which win.
	Client kafka.ConfigMap
	Logger *slog.Logger
	// OnChange is told of every membership change (rebalance metrics).
	OnChange func()
	// OnFatal is told of a fatal member error; the poll loop then ends.
	OnFatal func(error)
}

// Member is this worker's membership of the group.
type Member struct {
	log      *slog.Logger
	group    string
	topic    string
	url      string
	consumer *kafka.Consumer
	admin    *kafka.AdminClient

	// owner: this member currently holds partition 0.
	owner atomic.Bool
	// epoch counts assignment changes; the leader re-claims only after a
	// fresh one.
	epoch    atomic.Int64
	joined   atomic.Bool
	changed  *notify.Broadcast
	rejoin   chan struct{}
	onChange func()
	onFatal  func(error)
	// fatal: the consumer hit a fatal error and must not be closed (see
	// Close).
	fatal atomic.Bool

	wg       sync.WaitGroup
	running  bool
	pollDone chan struct{}
}

// New creates the member's clients; it joins the group at Run.
func New(cfg Config) (*Member, error) {
	conf := kafka.ConfigMap{}
	for k, v := range cfg.Client {
		conf[k] = v
	}
	for k, v := range (kafka.ConfigMap{
		"group.id":                      cfg.Group,
		"partition.assignment.strategy": "cooperative-sticky",
		"session.timeout.ms":            int(cfg.SessionTimeout.Milliseconds()),
		"heartbeat.interval.ms":         int(cfg.HeartbeatInterval.Milliseconds()),
		// librdkafka uses max.poll.interval.ms as the JoinGroup rebalance
		// timeout; this member polls every 100 ms.
		"max.poll.interval.ms":     int(cfg.RebalanceTimeout.Milliseconds()),
		"enable.auto.commit":       false,
		"enable.auto.offset.store": false,
		"auto.offset.reset":        "latest",
	}) {
		conf[k] = v
	}
	if cfg.InstanceID != "" {
		conf["group.instance.id"] = cfg.InstanceID
	}
	cons, err := kafka.NewConsumer(&conf)
	if err != nil {
		return nil, fmt.Errorf("group member: %w", err)
	}
	// The admin client shares the member's connection and log channel.
	admin, err := kafka.NewAdminClientFromConsumer(cons)
	if err != nil {
		cons.Close()
		return nil, fmt.Errorf("admin client: %w", err)
	}
	m := &Member{
		log:      cfg.Logger,
		group:    cfg.Group,
		topic:    cfg.Topic,
		url:      cfg.URL,
		consumer: cons,
		admin:    admin,
		changed:  notify.New(),
		rejoin:   make(chan struct{}, 1),
		onChange: cfg.OnChange,
		onFatal:  cfg.OnFatal,
		pollDone: make(chan struct{}),
	}
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		kafkalog.Drain(m.log, cons.Logs())
	}()
	return m, nil
}

// Leads reports whether this member holds partition 0, which makes this
// worker the leader.
func (m *Member) Leads() bool { return m.owner.Load() }

// Epoch counts membership changes (and rejoins); the leader re-claims
// leadership only after a fresh one once it was fenced.
func (m *Member) Epoch() int64 { return m.epoch.Load() }

// Joined reports whether the member holds an assignment of the group.
func (m *Member) Joined() bool { return m.joined.Load() }

// Changed returns a channel closed at the next membership change.
func (m *Member) Changed() <-chan struct{} { return m.changed.C() }

// Admin is an admin client on the member's connection (the Kafka cluster
// id, sink connectors' consumer-group offsets).
func (m *Member) Admin() *kafka.AdminClient { return m.admin }

func (m *Member) subscribe() error {
	return m.consumer.Subscribe(m.topic, m.rebalanced)
}

// rebalanced runs inside Poll on membership changes.
func (m *Member) rebalanced(c *kafka.Consumer, ev kafka.Event) error {
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

// Run joins the group and polls the member until ctx ends.
func (m *Member) Run(ctx context.Context) error {
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
func (m *Member) rejoinGroup(ctx context.Context) {
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

// RequestRejoin makes the member leave and rejoin the group, so that a
// worker whose view of the group is stale gets a fresh one.
func (m *Member) RequestRejoin() {
	select {
	case m.rejoin <- struct{}{}:
	default:
	}
}

// listed reports whether the group still lists this worker.
func (m *Member) listed() bool {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	urls, err := m.Members(ctx)
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

// Members lists the REST URLs of the group's live members, sorted and
// deduplicated (a restarted worker may briefly appear twice until the
// coordinator expires its previous incarnation).
func (m *Member) Members(ctx context.Context) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := kafkaadmin.Reachable(ctx, m.admin); err != nil {
		return nil, fmt.Errorf("describe group %s: %w", m.group, err)
	}
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

// Close leaves the group (the coordinator hands partition 0 to another
// worker at once) and closes the clients. librdkafka's Close alone does
// not always send LeaveGroup, which would leave the worker listed until
// its session expires; Unsubscribe does, so close unsubscribes and polls
// until the group no longer lists this worker (at most 2 s).
func (m *Member) Close() {
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
