package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/connectd/connectd/bench/internal/benchkit"
	"github.com/connectd/connectd/framework/rest/client"
)

// connectdSystem runs KafkaReplicationSource in one `connectd worker`
// daemon (exactly.once.source.support=enabled), created through the REST
// API like MirrorMaker 2's connector: the plugin runs as the worker's child
// process and both are measured.
type connectdSystem struct {
	connectd  string // connectd binary
	pluginBin string // connectd-kafka-replication binary
	// ckptPlugin is the connectd-kafka-checkpoint binary ("" when it is
	// not built): cross-cluster runs then have no checkpoint connector.
	ckptPlugin string
	// ckptErr is why the checkpoint connector could not be created in
	// this run ("" if it was): the copy is measured all the same.
	ckptErr string
	catalog string // plugin.path, filled once
	// variant names another build or environment of the worker, run beside
	// the default one ("" for the default): see -connectd-variant.
	variant string
	env     []string // extra environment of the worker, K=V
	extra   map[string]string
	// workerProps are extra lines of the worker properties file.
	workerProps string
	boundary    string        // transaction.boundary: interval or poll
	interval    time.Duration // transaction.boundary.interval.ms
	port        int
}

func (c *connectdSystem) name() string {
	n := "connectd-eos-poll"
	if c.boundary == "interval" {
		n = "connectd-eos-interval"
	}
	if c.variant != "" {
		n += "@" + c.variant
	}
	return n
}
func (*connectdSystem) target(rs *runSpec) string {
	if rs.cross {
		return rs.sourceAlias + "." + rs.source // DefaultReplicationPolicy
	}
	return rs.source + ".replica"
}

func (c *connectdSystem) checkpoints() (bool, string) {
	switch {
	case c.ckptPlugin == "":
		return false, "n/a (no checkpoint connector)"
	case c.ckptErr != "":
		return false, "n/a (checkpoint connector not created: " + c.ckptErr + ")"
	}
	return true, ""
}
func (*connectdSystem) finishesByExit() bool { return false }

func (c *connectdSystem) prepare(ctx context.Context, rs *runSpec) ([]*benchkit.Proc, error) {
	if c.catalog == "" {
		// One plugin.path per variant: each installs its own plugin build.
		sub := "plugins"
		if c.variant != "" {
			sub += "-" + c.variant
		}
		dir, err := filepath.Abs(filepath.Join(rs.dir, "..", sub))
		if err != nil {
			return nil, err
		}
		for _, bin := range []string{c.pluginBin, c.ckptPlugin} {
			if bin == "" {
				continue
			}
			out, err := exec.Command(c.connectd, "plugin", "install", "--plugin-path", dir, bin).CombinedOutput()
			if err != nil {
				return nil, fmt.Errorf("install plugin %s: %v: %s", filepath.Base(bin), err, out)
			}
		}
		c.catalog = dir
	}
	var err error
	if c.port, err = benchkit.FreePort(); err != nil {
		return nil, err
	}
	props := fmt.Sprintf(`bootstrap.servers=%[1]s
group.id=connectd-%[2]s
config.storage.topic=connectd-%[2]s-configs
offset.storage.topic=connectd-%[2]s-offsets
status.storage.topic=connectd-%[2]s-status
config.storage.replication.factor=1
offset.storage.replication.factor=1
status.storage.replication.factor=1
key.converter=org.apache.kafka.connect.converters.ByteArrayConverter
value.converter=org.apache.kafka.connect.converters.ByteArrayConverter
exactly.once.source.support=enabled
listeners=http://127.0.0.1:%[3]d
plugin.path=%[4]s
producer.linger.ms=%[5]d
producer.batch.size=%[6]d
`, rs.targetBootstrap, rs.runID, c.port, c.catalog, rs.lingerMs, rs.batchBytes) + c.workerProps
	propsPath := filepath.Join(rs.dir, "connectd-worker.properties")
	if err := os.WriteFile(propsPath, []byte(props), 0o644); err != nil {
		return nil, err
	}
	cmd := exec.Command(c.connectd, "worker", propsPath)
	if len(c.env) > 0 {
		cmd.Env = append(os.Environ(), c.env...)
	}
	p, err := benchkit.StartProc("connectd-worker", cmd, filepath.Join(rs.dir, "connectd-worker.log"))
	if err != nil {
		return nil, err
	}
	if err := benchkit.WaitHTTP(ctx, fmt.Sprintf("http://127.0.0.1:%d/health", c.port), 120*time.Second, p); err != nil {
		p.Stop(10 * time.Second)
		return nil, err
	}
	c.ckptErr = ""
	if rs.cross && c.ckptPlugin != "" {
		if err := c.startCheckpoints(ctx, rs); err != nil {
			c.ckptErr = err.Error()
			logf("%s: checkpoint connector: %v", rs.runID, err)
		}
	}
	return []*benchkit.Proc{p}, nil
}

// startCheckpoints creates KafkaCheckpointSource for the run's group, with
// the settings MirrorMaker 2's checkpoint connector gets (1-s intervals),
// before the copy starts, as for MM2.
func (c *connectdSystem) startCheckpoints(ctx context.Context, rs *runSpec) error {
	cfg := map[string]string{
		"connector.class":                      "KafkaCheckpointSource",
		"tasks.max":                            "1",
		"source.bootstrap.servers":             rs.bootstrap,
		"target.bootstrap.servers":             rs.targetBootstrap,
		"source.cluster.alias":                 rs.sourceAlias,
		"target.cluster.alias":                 rs.targetAlias,
		"replication.policy.class":             "DefaultReplicationPolicy",
		"groups":                               checkpointGroup(rs),
		"emit.checkpoints.interval.seconds":    "1",
		"sync.group.offsets.enabled":           "true",
		"sync.group.offsets.interval.seconds":  "1",
		"refresh.groups.interval.seconds":      "5",
		"checkpoints.topic.replication.factor": "1",
	}
	known, err := pluginKeys(ctx, c.port, "KafkaCheckpointSource")
	if err != nil {
		return err
	}
	for k := range cfg {
		if k != "connector.class" && k != "tasks.max" && !known[k] {
			logf("%s: KafkaCheckpointSource has no key %s; left out", rs.runID, k)
			delete(cfg, k)
		}
	}
	_, err = benchkit.PostJSON(fmt.Sprintf("http://127.0.0.1:%d/connectors", c.port), map[string]any{"name": "ckpt", "config": cfg})
	return err
}

// pluginKeys lists the configuration keys a connector plugin defines.
func pluginKeys(ctx context.Context, port int, class string) (map[string]bool, error) {
	cl, err := client.New(fmt.Sprintf("http://127.0.0.1:%d", port))
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	keys, err := cl.PluginConfig(ctx, class)
	if err != nil {
		return nil, fmt.Errorf("configuration keys of %s: %w", class, err)
	}
	out := map[string]bool{}
	for _, k := range keys {
		out[k.Name] = true
	}
	return out, nil
}

func (c *connectdSystem) start(ctx context.Context, rs *runSpec) ([]*benchkit.Proc, time.Time, error) {
	cfg := map[string]string{
		"connector.class":          "KafkaReplicationSource",
		"tasks.max":                strconv.Itoa(rs.tasks),
		"source.bootstrap.servers": rs.bootstrap,
		"target.bootstrap.servers": rs.targetBootstrap,
		"topics":                   rs.topics(),
		"target.topic.format":      "${topic}.replica",
		"partition.mapping":        "preserve",
	}
	if rs.cross {
		if err := c.crossConfig(ctx, rs, cfg); err != nil {
			return nil, time.Now(), err
		}
	}
	cfg["transaction.boundary"] = c.boundary
	if c.boundary == "interval" {
		cfg["transaction.boundary.interval.ms"] = strconv.FormatInt(c.interval.Milliseconds(), 10)
	}
	for k, v := range c.extra {
		cfg[k] = v
	}
	t0, err := benchkit.PostJSON(fmt.Sprintf("http://127.0.0.1:%d/connectors", c.port), map[string]any{"name": "repl", "config": cfg})
	return nil, t0, err
}

func (c *connectdSystem) cleanup(ctx context.Context, rs *runSpec) {
	topics, _ := benchkit.ListTopics(rs.targetBootstrap, "connectd-"+rs.runID)
	_ = benchkit.DeleteTopics(ctx, rs.targetBootstrap, append(topics, c.target(rs))...)
	cleanupCross(ctx, rs, c.target(rs))
}

// variantFlag collects -connectd-variant values.
type variantFlag []connectdVariant

// connectdVariant is another connectd build (or the same one in another
// environment) run beside the default one, interleaved in the same
// repetitions, so that an A/B comparison sees the same broker and the same
// machine load.
type connectdVariant struct {
	name     string
	connectd string
	plugin   string // "" for the default -plugin
	env      []string
}

func (v *variantFlag) String() string { return fmt.Sprint(len(*v), " variants") }

// Set parses name=path[,plugin=path][,env=K=V]...
func (v *variantFlag) Set(s string) error {
	items := strings.Split(s, ",")
	name, path, ok := strings.Cut(items[0], "=")
	if !ok || name == "" || path == "" {
		return fmt.Errorf("want name=connectd-path[,plugin=path][,env=K=V]..., got %q", s)
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-') {
			return fmt.Errorf("variant name %q: use a-z, 0-9 and '-' (it becomes part of topic names)", name)
		}
	}
	cv := connectdVariant{name: name, connectd: path}
	for _, it := range items[1:] {
		k, val, ok := strings.Cut(it, "=")
		switch {
		case ok && k == "plugin" && val != "":
			cv.plugin = val
		case ok && k == "env" && strings.Contains(val, "="):
			cv.env = append(cv.env, val)
		default:
			return fmt.Errorf("variant %s: bad item %q (want plugin=path or env=K=V)", name, it)
		}
	}
	for _, o := range *v {
		if o.name == name {
			return fmt.Errorf("variant %s given twice", name)
		}
	}
	*v = append(*v, cv)
	return nil
}

// crossConfig names the clusters and the replica the way MirrorMaker 2's
// DefaultReplicationPolicy does: with replication.policy.class when the
// connector build defines it, else with the equivalent target.topic.format.
// MM2's offset.lag.max default is set explicitly where the key exists, so
// both systems write offset syncs equally often.
func (c *connectdSystem) crossConfig(ctx context.Context, rs *runSpec, cfg map[string]string) error {
	known, err := pluginKeys(ctx, c.port, "KafkaReplicationSource")
	if err != nil {
		return err
	}
	cfg["source.cluster.alias"] = rs.sourceAlias
	if known["target.cluster.alias"] {
		cfg["target.cluster.alias"] = rs.targetAlias
	} else if c.ckptPlugin != "" {
		// The offset-syncs topic is then named after the connector's fixed
		// target alias, shared by every run: translations may use another
		// run's syncs.
		logf("%s: KafkaReplicationSource has no target.cluster.alias; its offset syncs are not per run", rs.runID)
	}
	if known["replication.policy.class"] {
		delete(cfg, "target.topic.format")
		cfg["replication.policy.class"] = "DefaultReplicationPolicy"
	} else {
		cfg["target.topic.format"] = rs.sourceAlias + ".${topic}"
	}
	if known["offset.lag.max"] {
		cfg["offset.lag.max"] = "100"
	}
	if known["sync.topic.configs.enabled"] {
		cfg["sync.topic.configs.enabled"] = "false" // as for MM2 in this benchmark
	}
	return nil
}
