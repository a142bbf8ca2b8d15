package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
)

// connectdSystem runs KafkaReplicationSource (plugin process) in a connectd
// worker process with exactly-once source support.
//
// The worker is framework/worker's test binary (testworker): the real
// worker runtime (exactly-once source runner, one transactional producer
// per task, offsets topic, plugin host) running one connector, without the
// herder's group coordination and REST API, which add no per-record work.
type connectdSystem struct {
	worker    string // testworker binary
	connectd  string // connectd binary (installs the plugin)
	pluginBin string // connectd-kafka-replication binary
	catalog   string // plugin.path, filled once
	extra     map[string]string
}

func (*connectdSystem) name() string              { return "connectd-eos" }
func (*connectdSystem) target(rs *runSpec) string { return rs.source + ".replica" }
func (*connectdSystem) finishesByExit() bool      { return false }

func (c *connectdSystem) offsetsTopic(rs *runSpec) string { return "connectd-" + rs.runID + "-offsets" }

func (c *connectdSystem) prepare(ctx context.Context, rs *runSpec) ([]*proc, error) {
	if c.catalog == "" {
		dir, err := filepath.Abs(filepath.Join(rs.dir, "..", "plugins"))
		if err != nil {
			return nil, err
		}
		out, err := exec.Command(c.connectd, "plugin", "install", "--plugin-path", dir, c.pluginBin).CombinedOutput()
		if err != nil {
			return nil, fmt.Errorf("install plugin: %v: %s", err, out)
		}
		c.catalog = dir
	}
	if err := createCompacted(ctx, rs.bootstrap, c.offsetsTopic(rs), 5); err != nil {
		return nil, err
	}
	props := map[string]string{
		"name": "repl", "connector.class": "KafkaReplicationSource", "tasks.max": strconv.Itoa(rs.tasks),
		"source.bootstrap.servers": rs.bootstrap, "target.bootstrap.servers": rs.bootstrap,
		"topics": rs.source, "target.topic.format": "${topic}.replica", "partition.mapping": "preserve",
		"key.converter":                "org.apache.kafka.connect.converters.ByteArrayConverter",
		"value.converter":              "org.apache.kafka.connect.converters.ByteArrayConverter",
		"producer.override.linger.ms":  strconv.Itoa(rs.lingerMs),
		"producer.override.batch.size": strconv.Itoa(rs.batchBytes),
	}
	for k, v := range c.extra {
		props[k] = v
	}
	b, _ := json.Marshal(props)
	return nil, os.WriteFile(filepath.Join(rs.dir, "connector.json"), b, 0o644)
}

func (c *connectdSystem) start(ctx context.Context, rs *runSpec) ([]*proc, error) {
	cmd := exec.Command(c.worker, "-bootstrap", rs.bootstrap, "-group", "connectd-"+rs.runID,
		"-offsets-topic", c.offsetsTopic(rs), "-plugins", c.catalog, "-connector", "repl",
		"-config", filepath.Join(rs.dir, "connector.json"), "-eos=true")
	p, err := startProc("connectd-worker", cmd, filepath.Join(rs.dir, "connectd-worker.log"))
	if err != nil {
		return nil, err
	}
	return []*proc{p}, nil
}

func (c *connectdSystem) cleanup(ctx context.Context, rs *runSpec) {
	_ = deleteTopics(ctx, rs.bootstrap, c.target(rs), c.offsetsTopic(rs))
}
