package workerconfig

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func base() map[string]string {
	return map[string]string{
		"bootstrap.servers":    "127.0.0.1:9092",
		"group.id":             "cluster-a",
		"config.storage.topic": "a-configs",
		"offset.storage.topic": "a-offsets",
		"status.storage.topic": "a-status",
		"key.converter":        "org.apache.kafka.connect.storage.StringConverter",
		"value.converter":      "org.apache.kafka.connect.json.JsonConverter",
	}
}

func with(kv ...string) map[string]string {
	p := base()
	for i := 0; i < len(kv); i += 2 {
		if kv[i+1] == "<unset>" {
			delete(p, kv[i])
			continue
		}
		p[kv[i]] = kv[i+1]
	}
	return p
}

func TestDefaultsAreKafkaConnects(t *testing.T) {
	c, err := Parse(base())
	if err != nil {
		t.Fatal(err)
	}
	h, w := c.Herder, c.Worker
	// connectd's own choices: 1 s heartbeats (Kafka Connect: 3 s), so
	// failover starts sooner after a session expires, and static members.
	if h.SessionTimeout != 10*time.Second || h.HeartbeatInterval != time.Second || h.RebalanceTimeout != time.Minute {
		t.Errorf("group timings %v %v %v", h.SessionTimeout, h.HeartbeatInterval, h.RebalanceTimeout)
	}
	if !h.StaticMembership {
		t.Error("cluster.static.membership is off by default")
	}
	if h.ScheduledRebalanceMaxDelay != 0 {
		t.Errorf("scheduled.rebalance.max.delay.ms default %v, want 0 (reassign at once)", h.ScheduledRebalanceMaxDelay)
	}
	if w.TaskShutdownTimeout != 5*time.Second || w.OffsetFlushInterval != time.Minute {
		t.Errorf("task timings %v %v", w.TaskShutdownTimeout, w.OffsetFlushInterval)
	}
	if w.ExactlyOnceSource || h.ExactlyOnceSource {
		t.Error("exactly-once enabled by default")
	}
	if w.OverridePolicy != "All" {
		t.Errorf("override policy %q", w.OverridePolicy)
	}
	if !h.TopicTracking || !h.TopicTrackingAllowReset {
		t.Error("topic tracking off by default")
	}
	if w.DisableTopicCreation {
		t.Error("topic creation off by default")
	}
	if w.ConverterDefaults["header.converter"] != "org.apache.kafka.connect.storage.SimpleHeaderConverter" ||
		w.ConverterDefaults["key.converter"] != "org.apache.kafka.connect.storage.StringConverter" {
		t.Errorf("converter defaults %v", w.ConverterDefaults)
	}
	want := map[string][3]int{"config": {1, 3, 1}, "offsets": {25, 3, 0}, "status": {5, 3, 0}}
	for _, ts := range c.Topics {
		got := [3]int{ts.Partitions, ts.ReplicationFactor, ts.ExactPartitions}
		if got != want[ts.Purpose] {
			t.Errorf("%s topic: partitions/rf/exact = %v, want %v", ts.Purpose, got, want[ts.Purpose])
		}
	}
	if len(c.Unknown) != 0 {
		t.Errorf("unknown keys %v", c.Unknown)
	}
	if !slices.Equal(c.Listeners, []string{"http://:8083"}) {
		t.Errorf("listeners %v", c.Listeners)
	}
	// The admission limits have no Kafka Connect counterpart.
	if l := h.Limits; l.ConnectorTasks != 1000 || l.ConfigBytes != 256<<10 || l.WorkerTasks != 500 {
		t.Errorf("admission limit defaults %+v", l)
	}
	if w.MaxPluginProcesses != 100 {
		t.Errorf("worker.plugin.processes.max default %d, want 100", w.MaxPluginProcesses)
	}
	if c.RdkafkaBusyPollWaitMillis != 1 {
		t.Errorf("rdkafka.busy.poll.wait.ms default %d, want 1", c.RdkafkaBusyPollWaitMillis)
	}
	if c.MallocArenaMax != 2 || c.MallocMmapThreshold != 128<<10 || w.PluginLaunch.MallocArenaMax != "2" {
		t.Errorf("malloc defaults: arenas %d, threshold %d, plugins' MALLOC_ARENA_MAX %q; want 2, 131072, 2",
			c.MallocArenaMax, c.MallocMmapThreshold, w.PluginLaunch.MallocArenaMax)
	}
}

func TestSettingsReachTheirConfigs(t *testing.T) {
	c, err := Parse(with(
		"exactly.once.source.support", "enabled",
		"session.timeout.ms", "6000",
		"heartbeat.interval.ms", "1000",
		"scheduled.rebalance.max.delay.ms", "30000",
		"offset.storage.partitions", "3",
		"status.storage.replication.factor", "-1",
		"config.storage.min.insync.replicas", "2",
		"producer.linger.ms", "7",
		"consumer.fetch.min.bytes", "10",
		"admin.request.timeout.ms", "9000",
		"value.converter.schemas.enable", "false",
		"task.restart.backoff.initial.ms", "200",
		"task.restart.enable", "false",
		"topic.creation.enable", "false",
		"log.format", "JSON",
		"log.level", "debug",
		"plugin.path", "/opt/a,/opt/b",
		"plugin.log.lines.per.second", "-1",
		"metrics.listener", "http://127.0.0.1:9404",
		"plugin.gogc", "300",
		"plugin.gomemlimit", "512MiB",
		"connector.tasks.max.limit", "64",
		"connector.config.max.bytes", "4096",
		"worker.tasks.max", "32",
		"worker.plugin.processes.max", "8",
		"rdkafka.busy.poll.wait.ms", "0",
		"malloc.arena.max", "0",
		"malloc.mmap.threshold.bytes", "0",
	))
	if err != nil {
		t.Fatal(err)
	}
	if !c.Worker.ExactlyOnceSource || !c.Herder.ExactlyOnceSource {
		t.Error("exactly.once.source.support=enabled not applied")
	}
	if c.Herder.SessionTimeout != 6*time.Second || c.Herder.HeartbeatInterval != time.Second || c.Herder.ScheduledRebalanceMaxDelay != 30*time.Second {
		t.Errorf("herder timings %+v", c.Herder)
	}
	if c.Topics[1].Partitions != 3 || c.Worker.OffsetsPartitions != 3 || c.Topics[2].ReplicationFactor != -1 {
		t.Errorf("topics %+v", c.Topics)
	}
	if c.Topics[0].Configs["min.insync.replicas"] != "2" {
		t.Errorf("config topic settings %v", c.Topics[0].Configs)
	}
	if c.Worker.ProducerProps["linger.ms"] != "7" || c.Worker.ConsumerProps["fetch.min.bytes"] != "10" || c.Worker.AdminProps["request.timeout.ms"] != "9000" {
		t.Errorf("client pass-through %v %v %v", c.Worker.ProducerProps, c.Worker.ConsumerProps, c.Worker.AdminProps)
	}
	if c.Worker.ConverterDefaults["value.converter.schemas.enable"] != "false" {
		t.Errorf("converter settings %v", c.Worker.ConverterDefaults)
	}
	if c.Worker.RestartBackoffInitial != 200*time.Millisecond || !c.Worker.DisableAutoRestart {
		t.Errorf("restart settings %v %v", c.Worker.RestartBackoffInitial, c.Worker.DisableAutoRestart)
	}
	if !c.Worker.DisableTopicCreation {
		t.Error("topic.creation.enable=false not applied")
	}
	if _, ignored := c.Ignored["topic.creation.enable"]; ignored {
		t.Error("topic.creation.enable reported as ignored")
	}
	if c.LogFormat != "json" || c.LogLevel != "DEBUG" {
		t.Errorf("logging %q %q", c.LogFormat, c.LogLevel)
	}
	if !slices.Equal(c.PluginPath, []string{"/opt/a", "/opt/b"}) {
		t.Errorf("plugin.path %v", c.PluginPath)
	}
	if c.MetricsListener != "http://127.0.0.1:9404" {
		t.Errorf("metrics.listener %q", c.MetricsListener)
	}
	if c.Worker.PluginLaunch.LogLinesPerSecond != -1 {
		t.Errorf("plugin.log.lines.per.second %d", c.Worker.PluginLaunch.LogLinesPerSecond)
	}
	if l := c.Worker.PluginLaunch; l.GOGC != "300" || l.GOMemLimit != "512MiB" {
		t.Errorf("plugin GC settings %q %q", l.GOGC, l.GOMemLimit)
	}
	if l := c.Herder.Limits; l.ConnectorTasks != 64 || l.ConfigBytes != 4096 || l.WorkerTasks != 32 {
		t.Errorf("admission limits %+v", l)
	}
	if c.Worker.MaxPluginProcesses != 8 {
		t.Errorf("worker.plugin.processes.max %d", c.Worker.MaxPluginProcesses)
	}
	if c.RdkafkaBusyPollWaitMillis != 0 {
		t.Errorf("rdkafka.busy.poll.wait.ms=0 gives %d", c.RdkafkaBusyPollWaitMillis)
	}
	if c.MallocArenaMax != 0 || c.MallocMmapThreshold != 0 || c.Worker.PluginLaunch.MallocArenaMax != "" {
		t.Errorf("malloc settings 0 give arenas %d, threshold %d, plugins' MALLOC_ARENA_MAX %q; want glibc's own",
			c.MallocArenaMax, c.MallocMmapThreshold, c.Worker.PluginLaunch.MallocArenaMax)
	}
}

// Every invalid value stops parsing with an error that names the key.
func TestInvalidValuesNameTheKey(t *testing.T) {
	for _, tc := range []struct {
		name  string
		props map[string]string
		key   string
	}{
		{"missing group.id", with("group.id", "<unset>"), "group.id"},
		{"missing config topic", with("config.storage.topic", "<unset>"), "config.storage.topic"},
		{"missing key.converter", with("key.converter", "<unset>"), "key.converter"},
		{"not a number", with("session.timeout.ms", "ten seconds"), "session.timeout.ms"},
		{"negative delay", with("scheduled.rebalance.max.delay.ms", "-5"), "scheduled.rebalance.max.delay.ms"},
		{"heartbeat above session", with("heartbeat.interval.ms", "20000"), "heartbeat.interval.ms"},
		{"bad replication factor", with("offset.storage.replication.factor", "0"), "offset.storage.replication.factor"},
		{"bad partitions", with("status.storage.partitions", "-3"), "status.storage.partitions"},
		{"bad eos", with("exactly.once.source.support", "maybe"), "exactly.once.source.support"},
		{"bad policy", with("connector.client.config.override.policy", "Some"), "connector.client.config.override.policy"},
		{"bad boolean", with("topic.tracking.enable", "yes"), "topic.tracking.enable"},
		{"same topic twice", with("status.storage.topic", "a-configs"), "status.storage.topic"},
		{"bad log format", with("log.format", "xml"), "log.format"},
		{"bad producer value", with("producer.acks", "banana"), "producer.acks"},
		{"bad security protocol", with("security.protocol", "carrier-pigeon"), "security.protocol"},
		{"unknown provider class", with("config.providers", "vault", "config.providers.vault.class", "com.example.Vault"), "config.providers.vault.class"},
		{"unresolvable placeholder", with("group.id", "${env:CONNECTD_TEST_SURELY_UNSET}"), "group.id"},
		{"bad port", with("rest.advertised.port", "70000"), "rest.advertised.port"},
		{"bad metrics listener", with("metrics.listener", "9404"), "metrics.listener"},
		{"zero log rate", with("plugin.log.lines.per.second", "0"), "plugin.log.lines.per.second"},
		{"bad plugin gogc", with("plugin.gogc", "lots"), "plugin.gogc"},
		{"bad plugin memory limit", with("plugin.gomemlimit", "1 GB"), "plugin.gomemlimit"},
		{"negative busy-poll wait", with("rdkafka.busy.poll.wait.ms", "-1"), "rdkafka.busy.poll.wait.ms"},
		{"busy-poll wait above 10 ms", with("rdkafka.busy.poll.wait.ms", "11"), "rdkafka.busy.poll.wait.ms"},
		{"busy-poll wait not a number", with("rdkafka.busy.poll.wait.ms", "soon"), "rdkafka.busy.poll.wait.ms"},
		{"negative arena limit", with("malloc.arena.max", "-2"), "malloc.arena.max"},
		{"mmap threshold above glibc's maximum", with("malloc.mmap.threshold.bytes", "33554433"), "malloc.mmap.threshold.bytes"},
		{"zero tasks limit", with("connector.tasks.max.limit", "0"), "connector.tasks.max.limit"},
		{"tiny config limit", with("connector.config.max.bytes", "10"), "connector.config.max.bytes"},
		{"zero worker tasks", with("worker.tasks.max", "0"), "worker.tasks.max"},
		{"zero plugin processes", with("worker.plugin.processes.max", "-1"), "worker.plugin.processes.max"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(tc.props)
			if err == nil {
				t.Fatal("accepted")
			}
			if !strings.Contains(err.Error(), tc.key) {
				t.Fatalf("error %q does not name %s", err, tc.key)
			}
		})
	}
}

func TestUnknownIgnoredAndDroppedKeys(t *testing.T) {
	c, err := Parse(with(
		"sesion.timeout.ms", "6000", // typo
		"connect.protocol", "sessioned",
		"producer.buffer.memory", "33554432", // Java-only
		"socket.keepalive.enable", "true",
		"listeners.https.ssl.keystore.location", "/k.pem",
		"rest.auth.realm", "r",
	))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(c.Unknown, []string{"sesion.timeout.ms"}) {
		t.Errorf("unknown %v", c.Unknown)
	}
	if c.Ignored["connect.protocol"] == "" {
		t.Errorf("ignored %v", c.Ignored)
	}
	if _, ok := c.Dropped["producer.buffer.memory"]; !ok || c.Worker.ProducerProps["buffer.memory"] != "" {
		t.Errorf("Java-only producer setting not dropped: %v %v", c.Dropped, c.Worker.ProducerProps)
	}
	if c.Herder.ClientProps["socket.keepalive.enable"] != "true" || c.Worker.CommonProps["socket.keepalive.enable"] != "true" {
		t.Errorf("client setting not passed: %v", c.Herder.ClientProps)
	}
}

func TestPlaceholdersResolveFromEnvAndFile(t *testing.T) {
	dir := t.TempDir()
	secrets := filepath.Join(dir, "secrets.properties")
	if err := os.WriteFile(secrets, []byte("group=from-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("CONNECTD_TEST_BOOTSTRAP", "10.0.0.1:9092")
	c, err := Parse(with(
		"bootstrap.servers", "${env:CONNECTD_TEST_BOOTSTRAP}",
		"group.id", "${file:"+secrets+":group}",
	))
	if err != nil {
		t.Fatal(err)
	}
	if c.Herder.BootstrapServers != "10.0.0.1:9092" || c.Herder.GroupID != "from-file" {
		t.Fatalf("resolved %q %q", c.Herder.BootstrapServers, c.Herder.GroupID)
	}
	// The same resolver serves connector configs.
	got, err := c.Herder.Resolver.Resolve(map[string]string{"x": "${env:CONNECTD_TEST_BOOTSTRAP}"})
	if err != nil || got["x"] != "10.0.0.1:9092" {
		t.Fatalf("connector resolution %v %v", got, err)
	}

	// Kafka's explicit form limits the providers to those listed.
	c, err = Parse(with(
		"config.providers", "env",
		"config.providers.env.class", "org.apache.kafka.common.config.provider.EnvVarConfigProvider",
		"bootstrap.servers", "${env:CONNECTD_TEST_BOOTSTRAP}",
	))
	if err != nil {
		t.Fatal(err)
	}
	if c.Herder.BootstrapServers != "10.0.0.1:9092" {
		t.Fatal("env provider not applied")
	}
	if c.Herder.Resolver.HasPlaceholders(map[string]string{"x": "${file:/a:b}"}) {
		t.Fatal("file provider active although not listed")
	}
}

func TestLoadFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "worker.properties")
	body := "# a worker\nbootstrap.servers=127.0.0.1:9092\ngroup.id = g\nconfig.storage.topic: c\noffset.storage.topic=o\nstatus.storage.topic=s\nkey.converter=StringConverter\nvalue.converter=StringConverter\n"
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if c.Herder.GroupID != "g" || c.Herder.ConfigTopic != "c" {
		t.Fatalf("%+v", c.Herder)
	}
	if _, err := Load(filepath.Join(t.TempDir(), "missing.properties")); err == nil {
		t.Fatal("missing file accepted")
	}
}

func TestAdvertisedURL(t *testing.T) {
	host, _ := os.Hostname()
	for _, tc := range []struct {
		props map[string]string
		bound []string
		want  string
	}{
		{with("listeners", "http://127.0.0.1:0"), []string{"http://127.0.0.1:40001"}, "http://127.0.0.1:40001"},
		{with("listeners", "http://:8083"), []string{"http://localhost:8083"}, "http://" + host + ":8083"},
		{with("listeners", "http://:8083", "rest.advertised.host.name", "w1.example", "rest.advertised.port", "9999"), []string{"http://localhost:8083"}, "http://w1.example:9999"},
		{with("listeners", "http://127.0.0.1:8083,https://127.0.0.1:8443", "rest.advertised.listener", "https"), []string{"http://127.0.0.1:8083", "https://127.0.0.1:8443"}, "https://127.0.0.1:8443"},
	} {
		c, err := Parse(tc.props)
		if err != nil {
			t.Fatal(err)
		}
		got, err := c.AdvertisedURL(tc.bound)
		if err != nil || got != tc.want {
			t.Errorf("AdvertisedURL(%v) = %q, %v; want %q", tc.bound, got, err, tc.want)
		}
	}
}

func TestDefDocumentsEveryKey(t *testing.T) {
	for _, k := range Def().Keys() {
		if k.Documentation == "" || k.Group == "" {
			t.Errorf("key %s lacks documentation or group", k.Name)
		}
	}
}

func TestUnknownKeysSuggestNearest(t *testing.T) {
	for _, tc := range []struct {
		name    string
		props   map[string]string
		used    []string
		want    []UnknownKey
		refused string // the key a start-up error names, if any
	}{
		{
			name:    "typo of exactly.once.source.support stops start-up",
			props:   with("exactly.once.source.suport", "enabled"),
			want:    []UnknownKey{{"exactly.once.source.suport", ExactlyOnceSource}},
			refused: "exactly.once.source.suport",
		},
		{
			name:  "typo beside the right key only warns",
			props: with("exactly.once.source.suport", "enabled", ExactlyOnceSource, "enabled"),
			want:  []UnknownKey{{"exactly.once.source.suport", ExactlyOnceSource}},
		},
		{
			name:    "typo of a REST authentication file stops start-up",
			props:   with("rest.auth.basic.credential.file", "/creds"),
			want:    []UnknownKey{{"rest.auth.basic.credential.file", "rest.auth.basic.credentials.file"}},
			refused: "rest.auth.basic.credential.file",
		},
		{
			name:    "typo of an unprefixed client key",
			props:   with("securty.protocol", "SSL"),
			want:    []UnknownKey{{"securty.protocol", "security.protocol"}},
			refused: "securty.protocol",
		},
		{
			name:  "ordinary typos warn with the nearest key",
			props: with("sesion.timeout.ms", "6000", "plugins.path", "/p", "prodcer.acks", "all"),
			want: []UnknownKey{
				{"plugins.path", PluginPath},
				{"prodcer.acks", "producer.acks"},
				{"sesion.timeout.ms", SessionTimeout},
			},
		},
		{
			name:  "worker key misspelt under a client prefix",
			props: with("admin.listners", "http://127.0.0.1:9000"),
			want:  []UnknownKey{{"admin.listners", "admin.listeners"}},
		},
		{
			name:  "nothing close: no guess",
			props: with("my.company.annotation", "x"),
			want:  []UnknownKey{{"my.company.annotation", ""}},
		},
		{
			name: "open-ended and ignored keys never warn",
			props: with("producer.linger.ms", "5", "consumer.max.poll.records", "10", "admin.request.timeout.ms", "1000",
				"key.converter.schemas.enable", "false", "value.converter.schema.registry.url", "http://r",
				"config.storage.min.insync.replicas", "2", "listeners.https.ssl.keystore.location", "/k",
				"connect.protocol", "sessioned", "config.providers.file.param.x", "y", "rest.auth.realm", "r"),
		},
		{
			name:  "keys another part reads are not unknown",
			props: with("rest.future.key", "1"),
			used:  []string{"rest.future.key"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Parse(tc.props)
			if err != nil {
				t.Fatal(err)
			}
			got, err := c.UnknownKeys(tc.used)
			if !slices.Equal(got, tc.want) {
				t.Errorf("unknown keys %v, want %v", got, tc.want)
			}
			switch {
			case tc.refused == "" && err != nil:
				t.Errorf("start-up refused: %v", err)
			case tc.refused != "" && err == nil:
				t.Errorf("a typo of a guarded key (%s) does not stop start-up", tc.refused)
			case tc.refused != "":
				es := Errors(err)
				if len(es) != 1 || es[0].Key != tc.refused || !strings.Contains(err.Error(), "did you mean") {
					t.Errorf("error %v does not name %s with a suggestion", err, tc.refused)
				}
			}
		})
	}
	if msg := (UnknownKey{"exactly.once.source.suport", ExactlyOnceSource}).Message(); msg != "unknown worker property exactly.once.source.suport; did you mean exactly.once.source.support?" {
		t.Errorf("message %q", msg)
	}
}
