package worker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/connectd/connectd/framework/chain"
	"github.com/connectd/connectd/framework/connconfig"
	"github.com/connectd/connectd/plugins/host"
)

// Config configures a Worker. framework/workerconfig builds it from
// worker.properties; zero values take the documented defaults.
type Config struct {
	// WorkerID is this worker's advertised host:port (the status topic's
	// worker_id).
	WorkerID string
	// GroupID is the Connect cluster's group.id. It prefixes the
	// exactly-once task producers' transactional.id
	// (${group.id}-${connector}-${task}); required when ExactlyOnceSource.
	GroupID string
	// BootstrapServers is the Kafka cluster (bootstrap.servers).
	BootstrapServers string
	// ExactlyOnceSource is exactly.once.source.support=enabled: source tasks
	// write records and offsets in one transaction. Otherwise they run
	// at-least-once with an idempotent producer.
	ExactlyOnceSource bool

	// OffsetsTopic is offset.storage.topic, used by source connectors
	// without their own offsets.storage.topic.
	OffsetsTopic string
	// OffsetsPartitions is offset.storage.partitions: the partition count
	// OffsetsTopic must have (0 = do not check). A mismatch refuses to
	// start, because a changed partition count moves offset keys.
	OffsetsPartitions int
	// OffsetFlushInterval is offset.flush.interval.ms (default 60 s): how
	// often at-least-once source tasks write offsets and sink tasks commit,
	// and the default transaction.boundary.interval.ms.
	OffsetFlushInterval time.Duration
	// TaskShutdownTimeout is task.shutdown.graceful.timeout.ms (default
	// 5 s), the total time StopTasks waits before abandoning tasks.
	TaskShutdownTimeout time.Duration

	// CommonProps are unprefixed librdkafka settings (security.protocol,
	// sasl.*, ssl.*) used by every client the worker creates, including the
	// offsets-topic clients. bootstrap.servers is taken from
	// BootstrapServers.
	CommonProps map[string]string
	// ProducerProps, ConsumerProps and AdminProps are the worker's
	// producer.*, consumer.* and admin.* settings (prefix stripped), passed
	// to the connector clients.
	ProducerProps, ConsumerProps, AdminProps map[string]string
	// OverridePolicy is connector.client.config.override.policy: "All"
	// (default, Kafka Connect's), "Principal" (only credentials), or "None"
	// (producer.override.*, consumer.override.* and admin.override.* are
	// refused).
	OverridePolicy string

	// ConverterDefaults are the worker's key.converter, value.converter,
	// header.converter settings, for connectors that set none.
	ConverterDefaults chain.Defaults

	// RestartBackoffInitial and RestartBackoffMax bound the exponential
	// backoff of automatic restarts of failed tasks and connectors
	// (defaults 1 s and 60 s). Kafka Connect never restarts them itself.
	RestartBackoffInitial, RestartBackoffMax time.Duration
	// DisableAutoRestart turns automatic restarts off: a failed task stays
	// FAILED until RestartTask.
	DisableAutoRestart bool
	// OwnsTask, when set, is asked after an exactly-once task's producer
	// was fenced or failed fatally: true means the cluster's latest
	// assignment (read to the end of the config topic) still gives the
	// task to this worker, so no successor exists — the transaction
	// coordinator aborted a transaction that outlived
	// transaction.timeout.ms (a broker outage), or an abort after a plugin
	// crash failed fatally — and the task is restarted automatically like
	// any failure, with a new producer. Without it, or when it says false
	// or fails, the task stays FAILED: it is a zombie and must not fight
	// its successor. The herder provides it.
	OwnsTask func(ctx context.Context, id TaskID) (bool, error)

	// DisableTopicCreation is topic.creation.enable=false: source tasks
	// never create the topics they write to, whatever the connector's
	// topic.creation.* settings say.
	DisableTopicCreation bool

	// SinkBatchRecords bounds the records of one sink Put (default 1000).
	SinkBatchRecords int

	// Plugins is the plugin catalog (plugin.path); PluginLaunch configures
	// the processes.
	Plugins      *host.Catalog
	PluginLaunch host.LaunchOptions
	// PluginIsolation is plugin.isolation, the default of the connector
	// key of that name: "plugin" (the default) runs every connector and
	// task of a plugin binary on this worker in one process, "connector"
	// gives each connector a process of its own.
	PluginIsolation string
	// MaxPluginProcesses is worker.plugin.processes.max (default 100):
	// the most plugin processes running on this worker at once. A
	// connector or task that would launch one more fails with a
	// *ProcessLimitError (FAILED with a trace, restarted with backoff).
	// The short-lived processes of config validation are not counted.
	MaxPluginProcesses int
	// StartConcurrency is worker.start.concurrency (0 or less:
	// DefaultStartConcurrency): the most connector instances and task
	// incarnations starting at once on this worker, each from before its
	// plugin process launches until it runs or fails. The others wait
	// their turn (in the order the scheduler picks), so that a restart,
	// rebalance or failover that assigns hundreds at once does not launch
	// hundreds of processes together.
	StartConcurrency int

	// Logger is the base logger (default slog.Default()); every task log
	// line carries connector and task attributes.
	Logger *slog.Logger
	// Metrics receives the worker's and tasks' metrics (prefix connectd_).
	// Nil registers them nowhere.
	Metrics prometheus.Registerer
}

// DefaultMaxPluginProcesses is the default of Config.MaxPluginProcesses.
const DefaultMaxPluginProcesses = 100

// DefaultStartConcurrency is the default of Config.StartConcurrency: two
// starts per CPU keep the CPUs busy while starts wait on Kafka and plugin
// handshakes, without starving the worker's REST API and heartbeats.
func DefaultStartConcurrency() int { return 2 * runtime.NumCPU() }

// KeyStartConcurrency is the worker property of Config.StartConcurrency.
const KeyStartConcurrency = "worker.start.concurrency"

// KeyMaxPluginProcesses is the worker property of Config.MaxPluginProcesses.
const KeyMaxPluginProcesses = "worker.plugin.processes.max"

// KeyPluginIsolation is the worker property of Config.PluginIsolation, and
// the connector key that overrides it.
const KeyPluginIsolation = connconfig.KeyPluginIsolation

const (
	overrideAll       = "All"
	overridePrincipal = "Principal"
	overrideNone      = "None"
)

func (c *Config) setDefaults() error {
	if c.BootstrapServers == "" {
		return errors.New("worker: BootstrapServers (bootstrap.servers) is required")
	}
	if c.ExactlyOnceSource && c.GroupID == "" {
		return errors.New("worker: GroupID (group.id) is required with exactly-once source support: it prefixes the task transactional ids")
	}
	if c.Plugins == nil {
		return errors.New("worker: Plugins (the plugin catalog) is required")
	}
	if c.OffsetFlushInterval <= 0 {
		c.OffsetFlushInterval = time.Minute
	}
	if c.TaskShutdownTimeout <= 0 {
		c.TaskShutdownTimeout = 5 * time.Second
	}
	switch c.OverridePolicy {
	case "":
		c.OverridePolicy = overrideAll
	case overrideAll, overridePrincipal, overrideNone:
	default:
		return fmt.Errorf("worker: connector.client.config.override.policy %q is not one of None, Principal, All", c.OverridePolicy)
	}
	if c.RestartBackoffInitial <= 0 {
		c.RestartBackoffInitial = time.Second
	}
	if c.RestartBackoffMax <= 0 {
		c.RestartBackoffMax = time.Minute
	}
	c.RestartBackoffMax = max(c.RestartBackoffMax, c.RestartBackoffInitial)
	if c.MaxPluginProcesses <= 0 {
		c.MaxPluginProcesses = DefaultMaxPluginProcesses
	}
	switch c.PluginIsolation {
	case "":
		c.PluginIsolation = connconfig.IsolationPlugin
	case connconfig.IsolationPlugin, connconfig.IsolationConnector:
	default:
		return fmt.Errorf("worker: %s %q is not one of %s, %s", KeyPluginIsolation, c.PluginIsolation, connconfig.IsolationPlugin, connconfig.IsolationConnector)
	}
	if c.StartConcurrency <= 0 {
		c.StartConcurrency = DefaultStartConcurrency()
	}
	if c.SinkBatchRecords <= 0 {
		c.SinkBatchRecords = 1000
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Metrics == nil {
		c.Metrics = prometheus.NewRegistry()
	}
	return nil
}
