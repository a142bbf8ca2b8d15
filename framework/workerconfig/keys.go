package workerconfig

import (
	"fmt"
	"net"
	"strings"

	"github.com/connectd/connectd/framework/configdef"
	"github.com/connectd/connectd/framework/connconfig"
	"github.com/connectd/connectd/framework/herder"
	"github.com/connectd/connectd/framework/worker"
)

// Worker property names.
const (
	BootstrapServers = "bootstrap.servers"
	GroupID          = "group.id"

	ConfigTopic            = "config.storage.topic"
	ConfigReplication      = "config.storage.replication.factor"
	OffsetsTopic           = "offset.storage.topic"
	OffsetsPartitions      = "offset.storage.partitions"
	OffsetsReplication     = "offset.storage.replication.factor"
	StatusTopic            = "status.storage.topic"
	StatusPartitions       = "status.storage.partitions"
	StatusReplication      = "status.storage.replication.factor"
	SessionTimeout         = "session.timeout.ms"
	HeartbeatInterval      = "heartbeat.interval.ms"
	RebalanceTimeout       = "rebalance.timeout.ms"
	ScheduledRebalanceMax  = "scheduled.rebalance.max.delay.ms"
	MembershipPoll         = "cluster.membership.poll.interval.ms"
	StaticMembership       = "cluster.static.membership"
	InterWorkerKeyTTL      = "inter.worker.key.ttl.ms"
	ExactlyOnceSource      = "exactly.once.source.support"
	TaskShutdownTimeout    = "task.shutdown.graceful.timeout.ms"
	OffsetFlushInterval    = "offset.flush.interval.ms"
	KeyConverter           = "key.converter"
	ValueConverter         = "value.converter"
	HeaderConverter        = "header.converter"
	OverridePolicy         = "connector.client.config.override.policy"
	ConfigProviders        = "config.providers"
	TopicTracking          = "topic.tracking.enable"
	TopicTrackingReset     = "topic.tracking.allow.reset"
	TopicCreation          = "topic.creation.enable"
	PluginPath             = "plugin.path"
	Listeners              = "listeners"
	AdvertisedHost         = "rest.advertised.host.name"
	AdvertisedPort         = "rest.advertised.port"
	AdvertisedListener     = "rest.advertised.listener"
	RestartBackoffInitial  = "task.restart.backoff.initial.ms"
	RestartBackoffMax      = "task.restart.backoff.max.ms"
	RestartEnable          = "task.restart.enable"
	SinkBatchRecords       = "sink.batch.max.records"
	PluginCallTimeout      = "plugin.call.timeout.ms"
	PluginStopTimeout      = "plugin.stop.timeout.ms"
	PluginHandshakeTimeout = "plugin.handshake.timeout.ms"
	PluginMaxMessageBytes  = "plugin.max.message.bytes"
	PluginBatchBytes       = "plugin.batch.bytes"
	PluginLogLines         = "plugin.log.lines.per.second"
	RdkafkaBusyPollWait    = "rdkafka.busy.poll.wait.ms"
	MallocArenaMax         = "malloc.arena.max"
	MallocMmapThreshold    = "malloc.mmap.threshold.bytes"
	MetricsListener        = "metrics.listener"
	PluginGOGC             = "plugin.gogc"
	PluginGOMemLimit       = "plugin.gomemlimit"
	LogFormat              = "log.format"
	LogLevel               = "log.level"
	ConnectorTasksLimit    = herder.KeyConnectorTasksLimit
	ConnectorConfigMax     = herder.KeyConnectorConfigMax
	WorkerTasksMax         = herder.KeyWorkerTasksMax
	PluginProcessesMax     = worker.KeyMaxPluginProcesses
	PluginIsolation        = worker.KeyPluginIsolation
	StartConcurrency       = worker.KeyStartConcurrency
	defaultHeaderConverter = "org.apache.kafka.connect.storage.SimpleHeaderConverter"
)

// Groups of keys, for docs.
const (
	groupCluster = "Cluster"
	groupTopics  = "Internal topics"
	groupTasks   = "Tasks"
	groupREST    = "REST"
	groupPlugins = "Plugins"
	groupLimits  = "Limits"
	groupLogging = "Logging"
)

// replicationFactor accepts -1 (the broker's default) or at least 1.
var replicationFactor = configdef.Func("-1 (broker default) or at least 1", func(key string, v any) error {
	n := v.(int16)
	if n == -1 || n >= 1 {
		return nil
	}
	return configdef.Invalid(key, v, "must be -1 (the broker's default) or at least 1")
})

// httpListener accepts http://host:port.
var httpListener = configdef.Func("http://host:port", func(key string, v any) error {
	s, _ := v.(string)
	if s == "" {
		return nil
	}
	rest, ok := strings.CutPrefix(s, "http://")
	if _, port, err := net.SplitHostPort(rest); !ok || err != nil || port == "" {
		return configdef.Invalid(key, v, "must be http://host:port (host may be empty for every interface)")
	}
	return nil
})

// logLinesRate accepts -1 (unlimited) or at least 1.
var logLinesRate = configdef.Func("-1 (unlimited) or at least 1", func(key string, v any) error {
	n := v.(int32)
	if n == -1 || n >= 1 {
		return nil
	}
	return configdef.Invalid(key, v, "must be -1 (unlimited) or at least 1 line per second")
})

// partitions accepts -1 (the broker's default) or at least 1.
var partitions = configdef.Func("-1 (broker default) or at least 1", func(key string, v any) error {
	n := v.(int32)
	if n == -1 || n >= 1 {
		return nil
	}
	return configdef.Invalid(key, v, "must be -1 (the broker's default) or at least 1")
})

// Def returns the definitions of every worker key connectd reads, in
// documentation order. The REST keys are defined here for the docs;
// framework/rest parses them.
func Def() *configdef.Def {
	d := configdef.New()
	order := map[string]int{}
	add := func(group string, k configdef.Key) {
		order[group]++
		k.Group, k.OrderInGroup = group, order[group]
		if k.Importance == "" {
			k.Importance = configdef.Medium
		}
		if k.Width == "" {
			k.Width = configdef.WidthMedium
		}
		d.Define(k)
	}
	str := func(group, name string, def any, imp configdef.Importance, doc string, v configdef.Validator) {
		add(group, configdef.Key{Name: name, Type: configdef.String, Default: def, Importance: imp, Documentation: doc, Validator: v})
	}
	required := func(group, name string, doc string) {
		add(group, configdef.Key{Name: name, Type: configdef.String, Required: true, Importance: configdef.High, Documentation: doc, Validator: configdef.NonEmptyString()})
	}
	integer := func(group, name string, def int32, doc string, v configdef.Validator) {
		add(group, configdef.Key{Name: name, Type: configdef.Int, Default: def, Documentation: doc, Validator: v})
	}
	long := func(group, name string, def int64, doc string, v configdef.Validator) {
		add(group, configdef.Key{Name: name, Type: configdef.Long, Default: def, Documentation: doc, Validator: v})
	}
	boolean := func(group, name string, def bool, doc string) {
		add(group, configdef.Key{Name: name, Type: configdef.Boolean, Default: def, Documentation: doc})
	}

	add(groupCluster, configdef.Key{Name: BootstrapServers, Type: configdef.List, Default: []string{"localhost:9092"}, Importance: configdef.High,
		Documentation: "Kafka brokers to bootstrap from (host:port,...).", Validator: configdef.NonEmptyList()})
	required(groupCluster, GroupID, "The cluster's id: the consumer group every worker of the cluster joins, and the prefix of the transactional ids (connect-cluster-<group.id>, <group.id>-<connector>-<task>). Must not be used by any other consumer group.")
	integer(groupCluster, SessionTimeout, 10000, "A worker that sends no heartbeat for this long is dead: its connectors and tasks move to the other workers.", configdef.AtLeast[int32](1))
	integer(groupCluster, HeartbeatInterval, 1000, "How often the worker heartbeats to the group coordinator; below a third of session.timeout.ms. Workers learn that a rebalance started (a worker died or joined) only from a heartbeat's answer, so this bounds how late failover begins after the session timeout. connectd's default 1000 (Kafka Connect's is 3000).", configdef.AtLeast[int32](1))
	integer(groupCluster, RebalanceTimeout, 60000, "How long the group coordinator waits for members to rejoin during a rebalance.", configdef.AtLeast[int32](1))
	integer(groupCluster, ScheduledRebalanceMax, 0, "How long a departed worker's work stays unassigned in case the worker returns. connectd's default 0 reassigns it at once (Kafka Connect's default is 300000).", configdef.AtLeast[int32](0))
	boolean(groupCluster, StaticMembership, true, "Join the cluster's group as a static member (group.instance.id = the worker id, host:port of the advertised URL): a worker that restarts within session.timeout.ms takes its place back without a rebalance, and after a broker or coordinator restart the group re-forms at once instead of waiting out every worker's previous session. A graceful shutdown still leaves the group at once. Each live worker of a cluster must advertise a different URL (connectd).")
	integer(groupCluster, MembershipPoll, 1000, "How often the leader lists the group's members (connectd).", configdef.AtLeast[int32](10))
	integer(groupCluster, InterWorkerKeyTTL, 3600000, "Lifetime of the session key that signs inter-worker requests; the leader writes a new one after it.", configdef.AtLeast[int32](1000))
	str(groupCluster, ExactlyOnceSource, "disabled", configdef.High, "enabled: source tasks write their records and offsets in one Kafka transaction and every new task generation fences the previous one. disabled: at-least-once source tasks. preparing is accepted and behaves as disabled.",
		configdef.OneOfIgnoreCase("disabled", "preparing", "enabled"))
	str(groupCluster, OverridePolicy, "All", configdef.Medium, "Which per-connector client overrides (producer.override.*, consumer.override.*, admin.override.*) are allowed: None, Principal (credentials only) or All.",
		configdef.OneOf("None", "Principal", "All"))
	add(groupCluster, configdef.Key{Name: ConfigProviders, Type: configdef.List, Default: nil, Importance: configdef.Low,
		Documentation: "Config providers for ${provider:...} placeholders in this file and in connector configs, each with config.providers.<alias>.class = FileConfigProvider | EnvVarConfigProvider (Kafka's class names or the short names file/env). Unset: env and file are both available (connectd)."})

	required(groupTopics, ConfigTopic, "The config topic (one partition, compacted): connector and task configs, target states, the assignment.")
	add(groupTopics, configdef.Key{Name: ConfigReplication, Type: configdef.Short, Default: int16(3), Documentation: "Replication factor of the config topic when connectd creates it.", Validator: replicationFactor})
	required(groupTopics, OffsetsTopic, "The offsets topic (compacted) of source connectors without their own offsets.storage.topic.")
	add(groupTopics, configdef.Key{Name: OffsetsPartitions, Type: configdef.Int, Default: int32(25), Documentation: "Partitions of the offsets topic when connectd creates it.", Validator: partitions})
	add(groupTopics, configdef.Key{Name: OffsetsReplication, Type: configdef.Short, Default: int16(3), Documentation: "Replication factor of the offsets topic when connectd creates it.", Validator: replicationFactor})
	required(groupTopics, StatusTopic, "The status topic (compacted): connector and task states.")
	add(groupTopics, configdef.Key{Name: StatusPartitions, Type: configdef.Int, Default: int32(5), Documentation: "Partitions of the status topic when connectd creates it.", Validator: partitions})
	add(groupTopics, configdef.Key{Name: StatusReplication, Type: configdef.Short, Default: int16(3), Documentation: "Replication factor of the status topic when connectd creates it.", Validator: replicationFactor})

	long(groupTasks, TaskShutdownTimeout, 5000, "Total time a worker waits for its tasks to stop gracefully (not per task).", configdef.AtLeast[int64](0))
	long(groupTasks, OffsetFlushInterval, 60000, "How often at-least-once source tasks write offsets and sink tasks commit; the default transaction.boundary.interval.ms.", configdef.AtLeast[int64](1))
	add(groupTasks, configdef.Key{Name: KeyConverter, Type: configdef.Class, Required: true, Importance: configdef.High, Documentation: "Default key converter of connectors that set none (key.converter.* are its settings).", Validator: configdef.NonEmptyString()})
	add(groupTasks, configdef.Key{Name: ValueConverter, Type: configdef.Class, Required: true, Importance: configdef.High, Documentation: "Default value converter of connectors that set none (value.converter.* are its settings).", Validator: configdef.NonEmptyString()})
	add(groupTasks, configdef.Key{Name: HeaderConverter, Type: configdef.Class, Default: defaultHeaderConverter, Importance: configdef.Low, Documentation: "Default header converter (header.converter.* are its settings)."})
	boolean(groupTasks, TopicTracking, true, "Track the topics each connector uses (GET /connectors/{c}/topics).")
	boolean(groupTasks, TopicTrackingReset, true, "Allow PUT /connectors/{c}/topics/reset.")
	boolean(groupTasks, TopicCreation, true, "Let source connectors create the topics they write to (KIP-158): a source task about to write to a topic that does not exist creates it with the connector's topic.creation.* settings, if the connector has any. Off, or for a connector without them, a task that writes to a missing topic fails naming it.")
	boolean(groupTasks, RestartEnable, true, "Restart failed tasks and connectors automatically with exponential backoff (connectd; Kafka Connect never does).")
	long(groupTasks, RestartBackoffInitial, 1000, "First delay of the automatic restart backoff (connectd).", configdef.AtLeast[int64](1))
	long(groupTasks, RestartBackoffMax, 60000, "Longest delay of the automatic restart backoff (connectd).", configdef.AtLeast[int64](1))
	integer(groupTasks, SinkBatchRecords, 1000, "Most records one sink Put carries (connectd).", configdef.AtLeast[int32](1))
	integer(groupTasks, RdkafkaBusyPollWait, 1, "How long, in milliseconds, a librdkafka thread of the worker that polls its sockets with a zero timeout and keeps finding nothing waits for an event instead, from the third such poll in a row; 0: librdkafka's own behaviour. An idempotent or transactional producer's broker thread otherwise spins while its partition's one produce request is in flight (see librdkafka's busy polls below); a response or wake-up still ends the wait at once, and a librdkafka timer can be late by up to the wait. Applies to the whole worker process on Linux; plugin processes are not changed (connectd).", configdef.Between[int32](0, 10))
	integer(groupTasks, MallocArenaMax, 2, "Most glibc malloc arenas in the worker process (set at start-up; arenas its runtime made before that remain) and in its plugin processes (their MALLOC_ARENA_MAX); 0: glibc's own limit, eight per core. Every arena keeps its own high-water mark of the C memory librdkafka's threads freed into it, so resident memory grows with their number (connectd).", configdef.AtLeast[int32](0))
	integer(groupTasks, MallocMmapThreshold, 128<<10, "Size in bytes from which glibc serves the worker's C allocations with their own mmap, returned to the system on free; 0: glibc's own threshold, which it raises up to 32 MiB as such blocks are freed, after which librdkafka's produce and fetch buffers stay resident in the arenas (connectd).", configdef.Between[int32](0, 32<<20))

	add(groupPlugins, configdef.Key{Name: PluginPath, Type: configdef.List, Default: nil, Importance: configdef.High,
		Documentation: "Directories of installed connector plugins (connectd plugin install); placeholders are not resolved here."})
	long(groupPlugins, PluginCallTimeout, 30000, "Bound of a plugin's unary calls and stream replies, of one poll of a source task (Poll, then its records' converters and transforms; a longer one fails the task) and of the health check each plugin process answers every third of it (connectd).", configdef.AtLeast[int64](1))
	long(groupPlugins, PluginStopTimeout, 5000, "Graceful stop of a plugin process before it is killed with its process group (connectd).", configdef.AtLeast[int64](0))
	long(groupPlugins, PluginHandshakeTimeout, 30000, "How long a plugin process may take from start to go-plugin's handshake; one that misses it is killed with its whole process group and its task or connector fails with the reason (connectd).", configdef.AtLeast[int64](1))
	integer(groupPlugins, PluginMaxMessageBytes, 64<<20, "Largest message between worker and plugin: a gRPC message, or a frame on the data channel (connectd).", configdef.AtLeast[int32](1<<20))
	integer(groupPlugins, PluginBatchBytes, 4<<20, "Byte budget of one record batch on the plugin stream (connectd).", configdef.AtLeast[int32](1024))
	integer(groupPlugins, PluginLogLines, 1000, "Most log lines per second a plugin process may merge into the worker's log, in bursts of one second's worth; -1: unlimited. Excess lines are dropped, counted in connectd_plugin_log_lines_dropped_total and summarised in a warning, so a flooding plugin never stalls its tasks (connectd).", logLinesRate)
	str(groupPlugins, PluginIsolation, connconfig.IsolationPlugin, configdef.Medium, "Default of the connector key plugin.isolation: plugin (one process per plugin binary on this worker, hosting all its connectors and tasks here; a crash fails them all) or connector (a process per connector) (connectd).",
		configdef.OneOf(connconfig.IsolationPlugin, connconfig.IsolationConnector))
	str(groupPlugins, PluginGOGC, nil, configdef.Low, "GOGC of plugin processes: the Go garbage collector's target percentage, or off. Unset: Go's default, 100 (connectd).",
		configdef.Matches(`off|[0-9]+`))
	str(groupPlugins, PluginGOMemLimit, nil, configdef.Low, "GOMEMLIMIT of plugin processes, such as 512MiB: the Go runtime's soft memory limit (connectd).",
		configdef.Matches(`[0-9]+(B|KiB|MiB|GiB|TiB)?`))

	integer(groupLimits, ConnectorTasksLimit, herder.DefaultConnectorTasksLimit, "Largest tasks.max a connector config may set, and the most task configs a connector may generate. A create or update beyond it is refused (400 naming this key); a stored config beyond it (an older version's, or a hand-written record) makes the connector FAILED with a trace, and a connector with more stored task configs than this gets none of them assigned. The leader's value applies to writes, each worker's to the connectors it runs (connectd).", configdef.AtLeast[int32](1))
	integer(groupLimits, ConnectorConfigMax, herder.DefaultConnectorConfigMax, "Largest connector config, and largest task config a connector may generate, in bytes of its JSON. Beyond it: as for connector.tasks.max.limit. Large values belong in a config provider (${file:...}) (connectd).", configdef.AtLeast[int32](1024))
	integer(groupLimits, WorkerTasksMax, herder.DefaultWorkerTasksMax, "Most tasks this worker runs at once. Tasks assigned beyond it are not started: each is FAILED with a trace naming this key, and starts once the worker runs fewer (or on the worker it moves to) (connectd).", configdef.AtLeast[int32](1))
	integer(groupLimits, StartConcurrency, 0, "Most connector instances and task incarnations starting at once on this worker, each from before its plugin process launches until it runs or fails; the others wait their turn. It paces the starts that a restart, a rebalance or a failover assigns at once, so that they do not launch hundreds of plugin processes and Kafka clients together and starve the worker's REST API, heartbeats and machine. 0: two per CPU (connectd).", configdef.AtLeast[int32](0))
	integer(groupLimits, PluginProcessesMax, worker.DefaultMaxPluginProcesses, "Most plugin processes running at once on this worker (one per plugin with work here, plus one per connector with plugin.isolation=connector). A connector or task that would launch one more is FAILED with a trace naming this key and retried with the automatic restart backoff. Config validation's short-lived processes are not counted (connectd).", configdef.AtLeast[int32](1))

	add(groupREST, configdef.Key{Name: Listeners, Type: configdef.List, Default: []string{"http://:8083"}, Importance: configdef.High,
		Documentation: "REST listeners, http://host:port or https://host:port (listeners.https.ssl.* configure TLS)."})
	str(groupREST, AdvertisedHost, nil, configdef.Medium, "Host other workers use to reach this one (default: the listener's host, else this machine's host name).", nil)
	add(groupREST, configdef.Key{Name: AdvertisedPort, Type: configdef.Int, Default: nil, Documentation: "Port other workers use to reach this one (default: the listener's).", Validator: configdef.Between[int32](1, 65535)})
	str(groupREST, AdvertisedListener, nil, configdef.Low, "Which listener (http or https) other workers use.", configdef.OneOfIgnoreCase("http", "https"))
	for _, k := range restKeys {
		str(groupREST, k.name, nil, configdef.Low, k.doc, nil)
	}
	boolean(groupREST, "rest.health.unauthenticated", true, "Serve GET /health without authentication even when rest.auth.* is on, so that Kubernetes probes, Docker health checks and load balancers work; /health tells only whether the worker is ready (connectd).")
	boolean(groupREST, "rest.metrics.unauthenticated", false, "Serve GET /metrics on the REST listeners without authentication even when rest.auth.* is on, for a Prometheus that has no credentials (metrics name connectors, tasks and topics). metrics.listener is the alternative that keeps the REST API closed (connectd).")

	str(groupREST, MetricsListener, nil, configdef.Low, "An extra listener, http://host:port, that serves only GET /metrics (without authentication), for a Prometheus that should not reach the REST API. /metrics is always served on the REST listeners too (connectd).", httpListener)

	str(groupLogging, LogFormat, "text", configdef.Low, "Log line format: text (logfmt) or json.", configdef.OneOfIgnoreCase("text", "json"))
	str(groupLogging, LogLevel, "INFO", configdef.Low, "Root log level: TRACE, DEBUG, INFO, WARN, ERROR (change at run time with /admin/loggers).",
		configdef.OneOfIgnoreCase("TRACE", "DEBUG", "INFO", "WARN", "ERROR", "FATAL"))
	return d
}

// restKeys are the REST server's keys that framework/rest parses; defined
// here for the docs.
var restKeys = []struct{ name, doc string }{
	{"admin.listeners", "Listeners of /admin/* (unset: the same as listeners; empty: disabled)."},
	{"access.control.allow.origin", "CORS allowed origins (comma-separated or *; empty disables CORS)."},
	{"access.control.allow.methods", "CORS allowed methods (default GET,POST,HEAD)."},
	{"rest.auth.basic.credentials.file", "File of user:bcrypt-hash lines for HTTP Basic authentication (connectd)."},
	{"rest.auth.bearer.tokens.file", "File of principal:token lines for bearer authentication (connectd)."},
	{"rest.auth.realm", "HTTP Basic realm (connectd)."},
	{"rest.request.max.bytes", "Largest request body accepted (connectd)."},
	{"rest.request.timeout.ms", "Bound of each REST request's work (connectd)."},
}

// kafkaConnectOnly are Kafka Connect worker keys connectd accepts without
// using them; they are reported (once) instead of as unknown.
var kafkaConnectOnly = map[string]string{
	"connect.protocol":                      "connectd has its own assignment protocol",
	"worker.sync.timeout.ms":                "workers read the config topic continuously",
	"worker.unsync.backoff.ms":              "workers read the config topic continuously",
	"offset.flush.timeout.ms":               "offset commits are bounded by task.shutdown.graceful.timeout.ms",
	"plugin.discovery":                      "plugins are installed with connectd plugin install",
	"rest.extension.classes":                "use rest.auth.* for authentication",
	"metric.reporters":                      "metrics are served in Prometheus format",
	"metrics.sample.window.ms":              "metrics are served in Prometheus format",
	"metrics.num.samples":                   "metrics are served in Prometheus format",
	"metrics.recording.level":               "metrics are served in Prometheus format",
	"inter.worker.key.generation.algorithm": "the session key is always HmacSHA256",
	"inter.worker.key.size":                 "the session key is always 256 bits",
	"inter.worker.signature.algorithm":      "requests are always signed with HmacSHA256",
	"inter.worker.verification.algorithms":  "requests are always verified with HmacSHA256",
	"response.http.headers.config":          "not supported",
	"config.storage.partitions":             "the config topic always has exactly one partition",
}

// keyError names a key in an error.
func keyError(key, format string, args ...any) error {
	return &configdef.ConfigError{Key: key, Message: fmt.Sprintf("%s: ", key) + fmt.Sprintf(format, args...)}
}
