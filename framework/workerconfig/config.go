package workerconfig

import (
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/connectd/connectd/framework/chain"
	"github.com/connectd/connectd/framework/configdef"
	"github.com/connectd/connectd/framework/configprovider"
	"github.com/connectd/connectd/framework/herder"
	"github.com/connectd/connectd/framework/properties"
	"github.com/connectd/connectd/framework/worker"
	"github.com/connectd/connectd/plugins/host"
)

// Config is a parsed worker.properties.
type Config struct {
	// Props are the resolved properties (placeholders replaced), for the
	// parts that read their own keys (framework/rest.ParseConfig).
	Props map[string]string

	// Worker and Herder are the runtime's and the cluster's configs; the
	// daemon adds what only it knows (plugin catalog, logger, metrics,
	// the advertised URL).
	Worker worker.Config
	Herder herder.Config
	// PluginPath is plugin.path.
	PluginPath []string
	// Topics are the internal topics to create or verify.
	Topics []herder.TopicSpec

	// LogFormat is text or json; LogLevel the root level name.
	LogFormat, LogLevel string

	// Listeners (listeners) and the advertised overrides, for
	// AdvertisedURL.
	Listeners          []string
	AdvertisedHost     string
	AdvertisedPort     int
	AdvertisedListener string
	// MetricsListener is metrics.listener: an extra http://host:port
	// serving only /metrics; empty when unset.
	MetricsListener string
	// RdkafkaBusyPollWaitMillis is rdkafka.busy.poll.wait.ms, which the
	// daemon applies to its process at start-up (internal/brokerpoll).
	RdkafkaBusyPollWaitMillis int
	// MallocArenaMax and MallocMmapThreshold are malloc.arena.max and
	// malloc.mmap.threshold.bytes, which the daemon applies to its process
	// at start-up (internal/glibcmalloc); plugins get the arena limit
	// through Worker.PluginLaunch.
	MallocArenaMax, MallocMmapThreshold int

	// Unknown lists the keys neither connectd nor librdkafka knows, sorted;
	// the daemon warns about those the REST server did not use either.
	Unknown []string
	// Ignored lists Kafka Connect keys connectd accepts but does not use,
	// with the reason.
	Ignored map[string]string
	// Dropped lists client settings librdkafka does not know (Java client
	// settings), which are not passed on, with librdkafka's message.
	Dropped map[string]string
}

// Load reads and parses a worker.properties file.
func Load(path string) (*Config, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	props, err := properties.Parse(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return Parse(props)
}

// clientPrefixes are the unprefixed client settings passed to the worker's
// own Kafka clients (and, as CommonProps, to every connector client).
var clientPrefixes = []string{
	"security.protocol", "ssl.", "sasl.", "socket.", "client.dns.lookup", "broker.address.family",
	"reconnect.backoff.", "retry.backoff.", "metadata.max.age.ms", "topic.metadata.refresh.",
	"connections.max.idle.ms", "client.rack", "debug",
}

func isClientKey(k string) bool {
	for _, p := range clientPrefixes {
		if k == p || (strings.HasSuffix(p, ".") && strings.HasPrefix(k, p)) {
			return true
		}
	}
	return false
}

// Parse parses worker properties. Placeholders are resolved first with the
// configured providers; every invalid value is reported, naming its key.
func Parse(raw map[string]string) (*Config, error) {
	resolver, providerKeys, err := providers(raw)
	if err != nil {
		return nil, err
	}
	props := map[string]string{}
	toResolve := map[string]string{}
	for k, v := range raw {
		if providerKeys[k] || k == PluginPath {
			props[k] = v
			continue
		}
		toResolve[k] = v
	}
	resolved, err := resolver.Resolve(toResolve)
	if err != nil {
		return nil, err
	}
	for k, v := range resolved {
		props[k] = v
	}

	def := Def()
	vals, err := def.Parse(props)
	if err != nil {
		return nil, err
	}
	c := &Config{Props: props, Ignored: map[string]string{}, Dropped: map[string]string{}}
	if err := c.fill(vals, props, resolver); err != nil {
		return nil, err
	}
	if err := c.classify(def, props, providerKeys); err != nil {
		return nil, err
	}
	return c, nil
}

func ms(v int64) time.Duration { return time.Duration(v) * time.Millisecond }

// arenaMax maps malloc.arena.max to LaunchOptions.MallocArenaMax, where
// "" leaves glibc's own limit.
func arenaMax(n int32) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprint(n)
}

func (c *Config) fill(v *configdef.Values, props map[string]string, resolver *configprovider.Resolver) error {
	session := v.Int(SessionTimeout)
	heartbeat := v.Int(HeartbeatInterval)
	if heartbeat >= session {
		return keyError(HeartbeatInterval, "%d must be lower than %s (%d), ideally below a third of it", heartbeat, SessionTimeout, session)
	}
	initial, maxBackoff := v.Long(RestartBackoffInitial), v.Long(RestartBackoffMax)
	if maxBackoff < initial {
		return keyError(RestartBackoffMax, "%d must be at least %s (%d)", maxBackoff, RestartBackoffInitial, initial)
	}
	eos := strings.EqualFold(v.String(ExactlyOnceSource), "enabled")
	bootstrap := strings.Join(v.List(BootstrapServers), ",")
	group := v.String(GroupID)

	defaults := chain.Defaults{}
	for k, val := range props {
		for _, p := range []string{KeyConverter, ValueConverter, HeaderConverter} {
			if k == p || strings.HasPrefix(k, p+".") {
				defaults[k] = val
			}
		}
	}
	if _, ok := defaults[HeaderConverter]; !ok {
		defaults[HeaderConverter] = v.String(HeaderConverter)
	}

	common := map[string]string{}
	secure := strings.Contains(strings.ToLower(props["security.protocol"]), "ssl")
	for k, val := range props {
		if !isClientKey(k) {
			continue
		}
		// ssl.* settings also configure the REST listener (Kafka's
		// fallback for listeners.https.*); they reach librdkafka only
		// when the Kafka connection uses TLS.
		if strings.HasPrefix(k, "ssl.") && !secure {
			continue
		}
		common[k] = val
	}
	producer, consumer, admin := prefixed(props, "producer."), prefixed(props, "consumer."), prefixed(props, "admin.")
	for name, m := range map[string]map[string]string{"": common, "producer.": producer, "consumer.": consumer, "admin.": admin} {
		kind := strings.TrimSuffix(name, ".")
		if err := checkClientProps(kind, name, m, c.Dropped); err != nil {
			return err
		}
	}

	c.PluginPath = v.List(PluginPath)
	c.LogFormat = strings.ToLower(v.String(LogFormat))
	c.LogLevel = strings.ToUpper(v.String(LogLevel))
	c.Listeners = v.List(Listeners)
	c.AdvertisedHost = v.String(AdvertisedHost)
	if !v.IsNull(AdvertisedPort) {
		c.AdvertisedPort = int(v.Int(AdvertisedPort))
	}
	c.AdvertisedListener = strings.ToLower(v.String(AdvertisedListener))
	c.MetricsListener = v.String(MetricsListener)
	c.RdkafkaBusyPollWaitMillis = int(v.Int(RdkafkaBusyPollWait))
	c.MallocArenaMax = int(v.Int(MallocArenaMax))
	c.MallocMmapThreshold = int(v.Int(MallocMmapThreshold))

	c.Worker = worker.Config{
		GroupID:               group,
		BootstrapServers:      bootstrap,
		ExactlyOnceSource:     eos,
		OffsetsTopic:          v.String(OffsetsTopic),
		OffsetFlushInterval:   ms(v.Long(OffsetFlushInterval)),
		TaskShutdownTimeout:   ms(v.Long(TaskShutdownTimeout)),
		CommonProps:           common,
		ProducerProps:         producer,
		ConsumerProps:         consumer,
		AdminProps:            admin,
		OverridePolicy:        v.String(OverridePolicy),
		ConverterDefaults:     defaults,
		RestartBackoffInitial: ms(initial),
		RestartBackoffMax:     ms(maxBackoff),
		DisableAutoRestart:    !v.Bool(RestartEnable),
		DisableTopicCreation:  !v.Bool(TopicCreation),
		SinkBatchRecords:      int(v.Int(SinkBatchRecords)),
		MaxPluginProcesses:    int(v.Int(PluginProcessesMax)),
		PluginIsolation:       v.String(PluginIsolation),
		StartConcurrency:      int(v.Int(StartConcurrency)),
		PluginLaunch: host.LaunchOptions{
			CallTimeout:     ms(v.Long(PluginCallTimeout)),
			StopTimeout:     ms(v.Long(PluginStopTimeout)),
			MaxMessageBytes: int(v.Int(PluginMaxMessageBytes)),
			BatchBytes:      int(v.Int(PluginBatchBytes)),
			// -1 (unlimited) maps to any negative value, as LaunchOptions wants.
			LogLinesPerSecond: int(v.Int(PluginLogLines)),
			GOGC:              v.String(PluginGOGC),
			GOMemLimit:        v.String(PluginGOMemLimit),
			HandshakeTimeout:  ms(v.Long(PluginHandshakeTimeout)),
			MallocArenaMax:    arenaMax(v.Int(MallocArenaMax)),
		},
	}
	if p := v.Int(OffsetsPartitions); p > 0 {
		c.Worker.OffsetsPartitions = int(p)
	}
	c.Herder = herder.Config{
		GroupID:                    group,
		BootstrapServers:           bootstrap,
		ClientProps:                common,
		ConfigTopic:                v.String(ConfigTopic),
		StatusTopic:                v.String(StatusTopic),
		OffsetsTopic:               v.String(OffsetsTopic),
		SessionTimeout:             ms(int64(session)),
		HeartbeatInterval:          ms(int64(heartbeat)),
		RebalanceTimeout:           ms(int64(v.Int(RebalanceTimeout))),
		ScheduledRebalanceMaxDelay: ms(int64(v.Int(ScheduledRebalanceMax))),
		TaskShutdownTimeout:        ms(v.Long(TaskShutdownTimeout)),
		MembershipPoll:             ms(int64(v.Int(MembershipPoll))),
		StaticMembership:           v.Bool(StaticMembership),
		SessionKeyTTL:              ms(int64(v.Int(InterWorkerKeyTTL))),
		ExactlyOnceSource:          eos,
		TopicTracking:              v.Bool(TopicTracking),
		TopicTrackingAllowReset:    v.Bool(TopicTrackingReset),
		Limits: herder.Limits{
			ConnectorTasks: int(v.Int(ConnectorTasksLimit)),
			ConfigBytes:    int(v.Int(ConnectorConfigMax)),
			WorkerTasks:    int(v.Int(WorkerTasksMax)),
		},
		Resolver: resolver,
	}
	topicConfigs := func(prefix string) map[string]string {
		out := map[string]string{}
		for k, val := range props {
			if rest, ok := strings.CutPrefix(k, prefix+"."); ok && !strings.Contains(rest, "replication.factor") && rest != "partitions" && rest != "topic" {
				out[rest] = val
			}
		}
		delete(out, "cleanup.policy") // always compact
		return out
	}
	c.Topics = []herder.TopicSpec{
		{Purpose: "config", Key: ConfigTopic, Name: v.String(ConfigTopic), Partitions: 1,
			ReplicationFactor: int(v.Short(ConfigReplication)), Configs: topicConfigs("config.storage"), ExactPartitions: 1},
		{Purpose: "offsets", Key: OffsetsTopic, Name: v.String(OffsetsTopic), Partitions: int(v.Int(OffsetsPartitions)),
			ReplicationFactor: int(v.Short(OffsetsReplication)), Configs: topicConfigs("offset.storage")},
		{Purpose: "status", Key: StatusTopic, Name: v.String(StatusTopic), Partitions: int(v.Int(StatusPartitions)),
			ReplicationFactor: int(v.Short(StatusReplication)), Configs: topicConfigs("status.storage")},
	}
	names := map[string]string{}
	for _, t := range c.Topics {
		if other, dup := names[t.Name]; dup {
			return keyError(t.Key, "%q is also %s: the config, offsets and status topics must be three different topics", t.Name, other)
		}
		names[t.Name] = t.Key
	}
	return nil
}

func prefixed(props map[string]string, prefix string) map[string]string {
	out := map[string]string{}
	for k, v := range props {
		if rest, ok := strings.CutPrefix(k, prefix); ok && rest != "" {
			out[rest] = v
		}
	}
	return out
}

// classify sorts the keys nobody defined into ignored, unknown and
// client settings.
func (c *Config) classify(def *configdef.Def, props map[string]string, providerKeys map[string]bool) error {
	for k := range props {
		switch {
		case providerKeys[k]:
		case isDefined(def, k):
		case kafkaConnectOnly[k] != "":
			c.Ignored[k] = kafkaConnectOnly[k]
		case isClientKey(k), strings.HasPrefix(k, "producer."), strings.HasPrefix(k, "consumer."), strings.HasPrefix(k, "admin."):
		case strings.HasPrefix(k, KeyConverter+"."), strings.HasPrefix(k, ValueConverter+"."), strings.HasPrefix(k, HeaderConverter+"."):
		case strings.HasPrefix(k, "listeners.https."):
		case isTopicSetting(k):
		default:
			c.Unknown = append(c.Unknown, k)
		}
	}
	sort.Strings(c.Unknown)
	return nil
}

func isDefined(def *configdef.Def, k string) bool {
	_, ok := def.Key(k)
	return ok
}

func isTopicSetting(k string) bool {
	for _, p := range []string{"config.storage.", "offset.storage.", "status.storage."} {
		if strings.HasPrefix(k, p) {
			return true
		}
	}
	return false
}

// providers builds the placeholder resolver from config.providers and
// returns the keys that configure it (they are not resolved themselves).
// Without config.providers both env and file are available.
func providers(props map[string]string) (*configprovider.Resolver, map[string]bool, error) {
	keys := map[string]bool{}
	for k := range props {
		if k == ConfigProviders || strings.HasPrefix(k, ConfigProviders+".") {
			keys[k] = true
		}
	}
	list, set := props[ConfigProviders]
	if !set {
		return configprovider.Default(), keys, nil
	}
	ps := map[string]configprovider.Provider{}
	for _, alias := range strings.Split(list, ",") {
		alias = strings.TrimSpace(alias)
		if alias == "" {
			continue
		}
		classKey := ConfigProviders + "." + alias + ".class"
		class := strings.TrimSpace(props[classKey])
		switch class {
		case "org.apache.kafka.common.config.provider.FileConfigProvider", "FileConfigProvider", "file":
			ps[alias] = configprovider.File{}
		case "org.apache.kafka.common.config.provider.EnvVarConfigProvider", "EnvVarConfigProvider", "env":
			ps[alias] = configprovider.Env{}
		case "":
			return nil, nil, keyError(classKey, "missing: config.providers lists %q, so %s must name its class (FileConfigProvider or EnvVarConfigProvider)", alias, classKey)
		default:
			return nil, nil, keyError(classKey, "unsupported config provider class %q: connectd provides FileConfigProvider and EnvVarConfigProvider", class)
		}
	}
	return configprovider.NewResolver(ps), keys, nil
}

// Errors returns the individual problems of a Parse error (one per key).
func Errors(err error) []*configdef.ConfigError {
	var es configdef.Errors
	if errors.As(err, &es) {
		return es
	}
	var ce *configdef.ConfigError
	if errors.As(err, &ce) {
		return []*configdef.ConfigError{ce}
	}
	return nil
}
