package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/connectd/connectd/bench/internal/benchkit"
)

// run is one system's pass through the N list: its directory, its own
// internal topics (named after id) and the empty file every connector reads.
type run struct {
	bootstrap string
	id        string // unique per pass: names the group and internal topics
	dir       string
	file      string // the empty file the idle sources read
	topic     string // the topic they would write to
}

// system is one of the compared frameworks: a worker to start (again) and
// the configuration of one idle source connector.
type system interface {
	name() string
	// startWorker starts the worker with its REST API on port and waits
	// until the API answers; a second call for the same run restarts the
	// worker on the same internal topics.
	startWorker(ctx context.Context, r *run, port int) (*benchkit.Proc, error)
	connectorConfig(r *run) map[string]string
	// topicPrefix names the internal topics of r, deleted afterwards.
	topicPrefix(r *run) string
}

// workerProps are the worker properties both systems share.
func workerProps(r *run, prefix string, port int) string {
	return fmt.Sprintf(`bootstrap.servers=%[1]s
group.id=%[2]s
config.storage.topic=%[2]s-configs
offset.storage.topic=%[2]s-offsets
status.storage.topic=%[2]s-status
config.storage.replication.factor=1
offset.storage.replication.factor=1
status.storage.replication.factor=1
key.converter=org.apache.kafka.connect.storage.StringConverter
value.converter=org.apache.kafka.connect.storage.StringConverter
listeners=http://127.0.0.1:%[3]d
`, r.bootstrap, prefix, port)
}

// connectdSystem is one `connectd worker` with examples/linesource
// (LinesSource) installed as a plugin.
type connectdSystem struct {
	label    string // system name in the results
	connectd string // connectd binary
	plugin   string // connectd-lines binary
	catalog  string // plugin.path, filled on first start
}

func (c *connectdSystem) name() string              { return c.label }
func (c *connectdSystem) topicPrefix(r *run) string { return c.label + "-" + r.id }
func (c *connectdSystem) connectorConfig(r *run) map[string]string {
	return map[string]string{
		"connector.class": "LinesSource",
		"tasks.max":       "1",
		"files":           r.file,
		"topic":           r.topic,
		// An empty poll waits as long as FileStreamSourceTask's does.
		"poll.wait.ms": "1000",
	}
}

func (c *connectdSystem) startWorker(ctx context.Context, r *run, port int) (*benchkit.Proc, error) {
	if c.catalog == "" {
		dir, err := filepath.Abs(filepath.Join(r.dir, "plugins"))
		if err != nil {
			return nil, err
		}
		out, err := exec.Command(c.connectd, "plugin", "install", "--plugin-path", dir, c.plugin).CombinedOutput()
		if err != nil {
			return nil, fmt.Errorf("install plugin %s: %w: %s", filepath.Base(c.plugin), err, out)
		}
		c.catalog = dir
	}
	// worker.tasks.max (default 500) is an admission limit, which Kafka
	// Connect does not have; the benchmark measures the cost of N, so it
	// lifts the limit above any N it runs.
	props := workerProps(r, c.topicPrefix(r), port) + "plugin.path=" + c.catalog + "\nworker.tasks.max=1000000\n"
	propsPath := filepath.Join(r.dir, fmt.Sprintf("connectd-worker-%d.properties", port))
	if err := os.WriteFile(propsPath, []byte(props), 0o644); err != nil {
		return nil, err
	}
	p, err := benchkit.StartProc("connectd-worker", exec.Command(c.connectd, "worker", propsPath),
		filepath.Join(r.dir, fmt.Sprintf("connectd-worker-%d.log", port)))
	if err != nil {
		return nil, err
	}
	if err := benchkit.WaitHTTP(ctx, fmt.Sprintf("http://127.0.0.1:%d/health", port), 120*time.Second, p); err != nil {
		p.Stop(10 * time.Second)
		return nil, err
	}
	return p, nil
}

// kcSystem is one Kafka Connect 4.1.1 worker (connect-distributed) with
// FileStreamSourceConnector from connect-file.
type kcSystem struct {
	classpath string
}

func (*kcSystem) name() string              { return "kafka-connect" }
func (*kcSystem) topicPrefix(r *run) string { return "kc-" + r.id }
func (*kcSystem) connectorConfig(r *run) map[string]string {
	return map[string]string{
		"connector.class": "org.apache.kafka.connect.file.FileStreamSourceConnector",
		"tasks.max":       "1",
		"file":            r.file,
		"topic":           r.topic,
	}
}

func (k *kcSystem) startWorker(ctx context.Context, r *run, port int) (*benchkit.Proc, error) {
	return benchkit.KafkaConnect{Classpath: k.classpath, Dir: r.dir, Name: fmt.Sprintf("kc-%d", port),
		Props: workerProps(r, k.topicPrefix(r), port), Port: port}.Start(ctx)
}
