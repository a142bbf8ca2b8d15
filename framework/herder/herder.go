package herder

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/connectd/connectd/framework/configprovider"
	"github.com/connectd/connectd/framework/convert"
	"github.com/connectd/connectd/framework/herder/membership"
)

// Config is the herder's configuration, built by framework/workerconfig
// from worker.properties. Durations of zero take the documented default.
type Config struct {
	// GroupID is the cluster's group.id: the consumer group the workers
	// join, and the prefix of transactional ids.
	GroupID string
	// Converters are the converter classes listed by GET /connector-plugins
	// besides the built-ins (nil: built-ins only).
	Converters *convert.Set
	// BootstrapServers is bootstrap.servers.
	BootstrapServers string
	// ClientProps are librdkafka settings for the internal clients (the
	// worker's unprefixed security.protocol, ssl.*, sasl.* ...).
	ClientProps map[string]string

	// ConfigTopic, StatusTopic and OffsetsTopic are the internal topics
	// (config.storage.topic, status.storage.topic, offset.storage.topic).
	ConfigTopic, StatusTopic, OffsetsTopic string

	// WorkerURL is this worker's advertised REST URL, e.g.
	// http://10.0.0.5:8083. Other workers forward requests to it; its
	// host:port is the worker_id in statuses.
	WorkerURL string

	// SessionTimeout (session.timeout.ms, default 10 s) bounds how long a
	// dead worker keeps its work; HeartbeatInterval
	// (heartbeat.interval.ms, default 1 s in workerconfig) bounds how late
	// the other workers learn that a rebalance started; RebalanceTimeout
	// (rebalance.timeout.ms, default 60 s).
	SessionTimeout, HeartbeatInterval, RebalanceTimeout time.Duration
	// ScheduledRebalanceMaxDelay (scheduled.rebalance.max.delay.ms) keeps
	// a departed worker's work unassigned that long in case it returns.
	// connectd's default is 0: reassign at once.
	ScheduledRebalanceMaxDelay time.Duration
	// TaskShutdownTimeout is task.shutdown.graceful.timeout.ms (default
	// 5 s); the leader waits about twice that for a worker to release
	// work it moves elsewhere.
	TaskShutdownTimeout time.Duration
	// MembershipPoll is how often the leader lists the group's members
	// (default 1 s).
	MembershipPoll time.Duration
	// StaticMembership (cluster.static.membership, default true in
	// workerconfig) joins the group with group.instance.id = the worker
	// id. The coordinator then recognises a rejoining worker by that id:
	// a restart within the session timeout, or the whole cluster rejoining
	// after a coordinator restart, needs no wait for previous sessions to
	// expire. Graceful shutdown still leaves at once (Unsubscribe sends
	// LeaveGroup for static members too). Two live workers with the same
	// id fence each other: the older one fails (see Failed).
	StaticMembership bool
	// SessionKeyTTL is inter.worker.key.ttl.ms (default 1 h).
	SessionKeyTTL time.Duration

	// ExactlyOnceSource is exactly.once.source.support=enabled: source
	// tasks are transactional and a new task generation fences the old.
	ExactlyOnceSource bool

	// Limits are the admission limits (connector.tasks.max.limit,
	// connector.config.max.bytes, worker.tasks.max); zero values take the
	// defaults. The leader's apply to writes, each worker's to what it
	// runs.
	Limits Limits

	// TopicTracking is topic.tracking.enable (default true in
	// workerconfig); TopicTrackingAllowReset is topic.tracking.allow.reset.
	TopicTracking, TopicTrackingAllowReset bool

	// Resolver resolves ${provider:...} placeholders in connector configs
	// on the worker that runs them (nil: no resolution).
	Resolver *configprovider.Resolver

	// Plugins is the plugin catalog (plugin.path): connector types and
	// GET /connector-plugins.
	Plugins Catalog

	// Version and Commit are reported by GET /.
	Version, Commit string

	// LogLevels, when set, receives the cluster-wide log levels
	// (PUT /admin/loggers/{ns}?scope=cluster, logger-cluster-<ns> records):
	// each worker applies every such record it reads, including those
	// written before it started, so a worker that joins later logs like
	// the rest. Without it scope=cluster is refused.
	LogLevels LogLevelSetter

	Logger *slog.Logger
	// Metrics receives the worker and rebalance metrics (prefix
	// connectd_worker_); nil registers them nowhere.
	Metrics prometheus.Registerer
}

func (c *Config) setDefaults() {
	def := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	def(&c.SessionTimeout, 10*time.Second)
	def(&c.HeartbeatInterval, time.Second)
	def(&c.RebalanceTimeout, 60*time.Second)
	def(&c.TaskShutdownTimeout, 5*time.Second)
	def(&c.MembershipPoll, time.Second)
	def(&c.SessionKeyTTL, time.Hour)
	c.Limits.setDefaults()
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
}

func (c *Config) validate() error {
	switch {
	case c.GroupID == "":
		return errors.New("herder: GroupID (group.id) is required")
	case c.BootstrapServers == "":
		return errors.New("herder: BootstrapServers is required")
	case c.ConfigTopic == "" || c.StatusTopic == "" || c.OffsetsTopic == "":
		return errors.New("herder: the config, status and offsets topics are required")
	}
	return nil
}

// LogLevelSetter applies a log level to a logger namespace;
// *logging.Levels implements it.
type LogLevelSetter interface {
	Set(name, level string) ([]string, error)
}

// LeaderClient sends the internal inter-worker requests to the leader,
// signed with the current session key (the daemon wires
// framework/rest/client's signed POST /connectors/{c}/tasks).
type LeaderClient interface {
	PutTaskConfigs(ctx context.Context, leaderURL, connector string, configs []map[string]string) error
}

// Herder runs this worker's part of the cluster. It implements the
// interface framework/rest serves, and framework/worker's StatusListener.
type Herder struct {
	cfg      Config
	log      *slog.Logger
	rt       Runtime
	client   LeaderClient
	workerID string

	configs  *configLog
	statuses *statusStore
	member   *membership.Member
	leader   *leader
	local    *local

	started  atomic.Bool
	stopping atomic.Bool
	// readyOnce: Health has found this worker ready at least once, so a
	// later failed check is "unhealthy" rather than "starting".
	readyOnce atomic.Bool
	// freshFailed is when (UnixNano) a REST call last failed to read the
	// config topic to its end; 0 after a success (see snapshot).
	freshFailed atomic.Int64
	// types caches the connector classes' plugin types.
	types     pluginTypes
	stage     atomic.Pointer[string]
	clusterID atomic.Pointer[string]

	// secrets maps, per connector, resolved placeholder values to their
	// placeholders (resolveFor), to scrub status traces.
	secretsMu sync.Mutex
	secrets   map[string]map[string]string

	rebal *rebalanceMetrics

	// failed receives the error that ends this worker's membership for
	// good (see Failed); buffered so the member's poll loop never blocks.
	failed chan error

	stopOnce sync.Once
	cancel   context.CancelFunc
	loops    sync.WaitGroup
	localCtx context.Context
	stopLoc  context.CancelFunc
	localEnd chan struct{}
}

// New builds a herder; it does no I/O until Start. client reaches the
// leader from other workers. The herder is the runtime's StatusListener,
// so it exists before the runtime, which Start receives.
func New(cfg Config, client LeaderClient) (*Herder, error) {
	cfg.setDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	h := &Herder{cfg: cfg, log: cfg.Logger, client: client, failed: make(chan error, 1)}
	if err := h.registerMetrics(cfg.Metrics); err != nil {
		return nil, err
	}
	h.setStage("the herder has not started")
	return h, nil
}

// Failed delivers, at most once, an error after which this worker can no
// longer be a member of the cluster: another live worker joined with the
// same group.instance.id (the same advertised URL), or the group member hit
// another fatal error. The worker should then Stop and exit; its work has
// already been given to the group.
func (h *Herder) Failed() <-chan error { return h.failed }

func (h *Herder) fail(err error) {
	select {
	case h.failed <- err:
	default:
	}
}

// SetWorkerURL sets the advertised REST URL when it is only known after the
// REST listener bound its port. It must be called before Start.
func (h *Herder) SetWorkerURL(u string) { h.cfg.WorkerURL = u }

// WorkerID is the worker_id Kafka Connect reports for a worker URL: its
// host:port.
func WorkerID(workerURL string) string {
	u, err := url.Parse(workerURL)
	if err != nil || u.Host == "" {
		return workerURL
	}
	host, port := u.Hostname(), u.Port()
	if port == "" {
		if u.Scheme == "https" {
			port = "443"
		} else {
			port = "80"
		}
	}
	return net.JoinHostPort(host, port)
}

func (h *Herder) setStage(s string) { h.stage.Store(&s) }

// Start connects to Kafka, reads the config and status topics, joins the
// cluster and starts applying assignments to rt. It returns once the
// worker is a member of the group; work starts when the leader assigns it.
func (h *Herder) Start(ctx context.Context, rt Runtime) error {
	if rt == nil {
		return errors.New("herder: a runtime is required")
	}
	h.rt = rt
	if h.cfg.WorkerURL == "" {
		return errors.New("herder: the worker URL is not set")
	}
	if _, err := url.Parse(h.cfg.WorkerURL); err != nil {
		return fmt.Errorf("herder: worker URL %q: %w", h.cfg.WorkerURL, err)
	}
	h.workerID = WorkerID(h.cfg.WorkerURL)
	h.log = h.cfg.Logger.With("worker_id", h.workerID)
	runCtx, cancel := context.WithCancel(context.Background())
	h.cancel = cancel
	fail := func(err error) error {
		cancel()
		h.closeClients()
		h.cancel = nil // nothing left for Stop to do
		return err
	}
	var err error
	if h.configs, err = h.newConfigLog(); err != nil {
		return fail(err)
	}
	if h.statuses, err = h.newStatusStore(); err != nil {
		return fail(err)
	}
	if h.member, err = h.newMembership(); err != nil {
		return fail(err)
	}
	h.leader = newLeader(h)
	h.local = newLocal(h)

	h.setStage("reading the config topic")
	if err := h.configs.run(runCtx); err != nil {
		return fail(err)
	}
	snap, err := h.configs.readToEnd(ctx)
	if err != nil {
		return fail(fmt.Errorf("reading the config topic %s: %w", h.cfg.ConfigTopic, err))
	}
	h.setStage("reading the status topic")
	if err := h.statuses.run(runCtx); err != nil {
		return fail(err)
	}
	if err := h.statuses.readToEnd(ctx); err != nil {
		return fail(fmt.Errorf("reading the status topic %s: %w", h.cfg.StatusTopic, err))
	}
	h.setStage("joining the cluster")
	if err := h.member.Run(runCtx); err != nil {
		return fail(err)
	}
	h.loops.Add(1)
	go func() {
		defer h.loops.Done()
		h.leader.run(runCtx)
	}()
	h.localCtx, h.stopLoc = context.WithCancel(runCtx)
	h.localEnd = make(chan struct{})
	go func() {
		defer close(h.localEnd)
		h.local.run(h.localCtx, snap)
	}()
	h.log.Info("joined the cluster", "group", h.cfg.GroupID, "url", h.cfg.WorkerURL,
		"config_topic", h.cfg.ConfigTopic, "config_offset", snap.Offset, "connectors", len(snap.Connectors()))
	h.setStage("")
	h.started.Store(true)
	return nil
}

// Stop shuts this worker down gracefully: it stops every connector and
// task it runs (within the runtime's graceful timeout), writes their
// statuses, leaves the group so the leader reassigns the work at once, and
// closes its Kafka clients. ctx bounds the whole shutdown.
func (h *Herder) Stop(ctx context.Context) error {
	var err error
	h.stopOnce.Do(func() {
		if h.cancel == nil {
			return
		}
		h.stopping.Store(true)
		h.started.Store(false)
		h.setStage("stopping")
		// Stop applying assignments, then stop the work.
		h.stopLoc()
		select {
		case <-h.localEnd:
		case <-ctx.Done():
			err = fmt.Errorf("herder: the assignment loop did not stop: %w", ctx.Err())
		}
		if err == nil {
			h.local.stopAll(ctx)
		}
		h.statuses.flush(2 * time.Second)
		h.cancel()
		h.loops.Wait()
		h.closeClients()
		h.log.Info("left the cluster")
	})
	return err
}

// newMembership creates this worker's group member (see
// framework/herder/membership).
func (h *Herder) newMembership() (*membership.Member, error) {
	instanceID := ""
	if h.cfg.StaticMembership {
		instanceID = h.workerID
	}
	return membership.New(membership.Config{
		Group:             h.cfg.GroupID,
		Topic:             h.cfg.ConfigTopic,
		URL:               h.cfg.WorkerURL,
		InstanceID:        instanceID,
		SessionTimeout:    h.cfg.SessionTimeout,
		HeartbeatInterval: h.cfg.HeartbeatInterval,
		RebalanceTimeout:  h.cfg.RebalanceTimeout,
		Client:            *h.clientConfig(h.cfg.WorkerURL, nil),
		Logger:            h.log.With("component", "membership"),
		OnChange:          h.rebal.membershipChanged,
		OnFatal:           h.fail,
	})
}

func (h *Herder) closeClients() {
	// The membership first: leaving the group hands our work over.
	if h.member != nil {
		h.member.Close()
	}
	if h.leader != nil {
		h.leader.stepDown("worker stopping")
		h.leader.wg.Wait()
	}
	if h.statuses != nil {
		h.statuses.close()
	}
	if h.configs != nil {
		h.configs.close()
	}
}

// releaseTimeout is how long the leader waits for a worker to stop work it
// moves elsewhere before assigning it anyway.
func (h *Herder) releaseTimeout() time.Duration {
	return 2*h.cfg.TaskShutdownTimeout + 2*time.Second
}

// IsLeader reports whether this worker currently leads the cluster.
func (h *Herder) IsLeader() bool { return h.leader != nil && h.leader.active.Load() }

// Generation is the generation of the assignment this worker applied last.
func (h *Herder) Generation() int32 {
	if h.local == nil {
		return 0
	}
	return h.local.gen.Load()
}

// sendTaskConfigs hands task configs to the leader: in-process when this
// worker leads, else over the signed internal endpoint.
func (h *Herder) sendTaskConfigs(ctx context.Context, name string, configs []map[string]string) error {
	err := h.PutTaskConfigs(ctx, name, configs)
	var nl *NotLeaderError
	if !errors.As(err, &nl) {
		return err
	}
	if h.client == nil {
		return errors.New("no leader client configured to reach the leader")
	}
	if h.configs.Snapshot().SessionKey() == nil {
		return errors.New("no session key yet to sign the request to the leader")
	}
	return h.client.PutTaskConfigs(ctx, nl.LeaderURL, name, configs)
}
