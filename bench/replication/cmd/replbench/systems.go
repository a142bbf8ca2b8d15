package main

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	"github.com/connectd/connectd/bench/internal/benchkit"
)

// runSpec is one copy run: one system, one data set.
type runSpec struct {
	bootstrap string // the source cluster
	// targetBootstrap is the cluster the copy goes to and the workers run
	// on: the source cluster itself, or cluster B in cross-cluster mode.
	targetBootstrap string
	cross           bool
	source          string
	// target is the system's target topic, set before the run starts.
	target string
	// In cross-cluster mode: the clusters' aliases (the target's is unique
	// per run, so that a run never reads another run's offset syncs), the
	// checkpoints topic on the target and the checkpoint measurement.
	sourceAlias, targetAlias string
	checkpointsTopic         string
	ckptSamples              int
	// ckptTopic is a one-partition topic on the source, replicated beside
	// the measured one and empty during the copy, whose records and group
	// offsets the checkpoint measurement writes afterwards.
	ckptTopic  string
	partitions int
	records    int64
	size       int
	runID      string // unique per run: names internal topics, groups, transactional ids
	dir        string // logs and generated configs
	lingerMs   int
	batchBytes int
	tasks      int
}

// topics is the replication connectors' topics list.
func (rs *runSpec) topics() string {
	if rs.ckptTopic != "" {
		return rs.source + "," + rs.ckptTopic
	}
	return rs.source
}

// system is one of the measured copiers.
type system interface {
	name() string
	target(rs *runSpec) string
	// prepare does the untimed set-up (start a worker and wait until it
	// serves) and reports the processes to measure.
	prepare(ctx context.Context, rs *runSpec) ([]*benchkit.Proc, error)
	// start begins the copy and returns when it did: the clock starts
	// then.
	start(ctx context.Context, rs *runSpec) ([]*benchkit.Proc, time.Time, error)
	// finishesByExit: the copier exits when done (its exit time is the end).
	finishesByExit() bool
	// cleanup removes the run's topics.
	cleanup(ctx context.Context, rs *runSpec)
}

// ---- raw loop ----

type rawSystem struct {
	bin      string
	interval time.Duration
}

func (rawSystem) name() string              { return "raw-go-loop" }
func (rawSystem) target(rs *runSpec) string { return rs.source + ".raw" }
func (rawSystem) finishesByExit() bool      { return true }
func (r rawSystem) prepare(ctx context.Context, rs *runSpec) ([]*benchkit.Proc, error) {
	if rs.cross {
		// Its offsets go into the producer's transaction, which needs the
		// group and the output on one cluster.
		return nil, fmt.Errorf("the raw loop copies within one cluster only")
	}
	return nil, benchkit.CreateTopic(ctx, rs.bootstrap, r.target(rs), rs.partitions)
}

func (r rawSystem) start(ctx context.Context, rs *runSpec) ([]*benchkit.Proc, time.Time, error) {
	cmd := exec.Command(r.bin, "-bootstrap", rs.bootstrap, "-source", rs.source, "-target", r.target(rs),
		"-group", "rawcopy-"+rs.runID, "-transactional-id", "rawcopy-"+rs.runID,
		"-commit-interval", r.interval.String(), "-expect", strconv.FormatInt(rs.records, 10),
		"-P", "linger.ms="+strconv.Itoa(rs.lingerMs), "-P", "batch.size="+strconv.Itoa(rs.batchBytes))
	t0 := time.Now()
	p, err := benchkit.StartProc("rawcopy", cmd, filepath.Join(rs.dir, "rawcopy.log"))
	if err != nil {
		return nil, t0, err
	}
	return []*benchkit.Proc{p}, t0, nil
}

func (r rawSystem) cleanup(ctx context.Context, rs *runSpec) {
	_ = benchkit.DeleteTopics(ctx, rs.bootstrap, r.target(rs))
}

// ---- MirrorMaker 2 ----

type mm2System struct {
	classpath string // resolved by Maven from bench/kafkaconnect/pom.xml
	boundary  string // transaction.boundary: poll (default) or interval
	interval  time.Duration
	port      int
}

func (m *mm2System) name() string {
	if m.boundary == "interval" {
		return "mm2-eos-interval"
	}
	return "mm2-eos"
}
func (*mm2System) target(rs *runSpec) string {
	if rs.cross {
		return rs.sourceAlias + "." + rs.source // DefaultReplicationPolicy
	}
	return "src." + rs.source
}

// checkpoints: in cross-cluster mode MirrorCheckpointConnector runs beside
// the source connector.
func (*mm2System) checkpoints() (bool, string) { return true, "" }
func (*mm2System) finishesByExit() bool        { return false }

func (m *mm2System) prepare(ctx context.Context, rs *runSpec) ([]*benchkit.Proc, error) {
	var err error
	if m.port, err = benchkit.FreePort(); err != nil {
		return nil, err
	}
	props := fmt.Sprintf(`bootstrap.servers=%[1]s
group.id=mm2-%[2]s
config.storage.topic=mm2-%[2]s-configs
offset.storage.topic=mm2-%[2]s-offsets
status.storage.topic=mm2-%[2]s-status
config.storage.replication.factor=1
offset.storage.replication.factor=1
status.storage.replication.factor=1
key.converter=org.apache.kafka.connect.converters.ByteArrayConverter
value.converter=org.apache.kafka.connect.converters.ByteArrayConverter
exactly.once.source.support=enabled
listeners=http://127.0.0.1:%[3]d
producer.linger.ms=%[4]d
producer.batch.size=%[5]d
producer.max.request.size=%[6]d
`, rs.targetBootstrap, rs.runID, m.port, rs.lingerMs, rs.batchBytes, max(rs.batchBytes, 1048576)+1024)
	p, err := benchkit.KafkaConnect{Classpath: m.classpath, Dir: rs.dir, Name: "mm2", Props: props, Port: m.port}.Start(ctx)
	if err != nil {
		return nil, err
	}
	if rs.cross {
		// The checkpoint connector starts before the copy (untimed): it
		// finds the run's group, which already has an offset on the source,
		// and waits for offset syncs. Its CPU and memory during the copy
		// count as MirrorMaker 2's, as they are one worker.
		cfg := map[string]string{
			"connector.class":                       "org.apache.kafka.connect.mirror.MirrorCheckpointConnector",
			"tasks.max":                             "1",
			"source.cluster.alias":                  rs.sourceAlias,
			"target.cluster.alias":                  rs.targetAlias,
			"source.cluster.bootstrap.servers":      rs.bootstrap,
			"target.cluster.bootstrap.servers":      rs.targetBootstrap,
			"topics":                                rs.topics(),
			"groups":                                checkpointGroup(rs),
			"key.converter":                         "org.apache.kafka.connect.converters.ByteArrayConverter",
			"value.converter":                       "org.apache.kafka.connect.converters.ByteArrayConverter",
			"header.converter":                      "org.apache.kafka.connect.converters.ByteArrayConverter",
			"replication.policy.class":              "org.apache.kafka.connect.mirror.DefaultReplicationPolicy",
			"emit.checkpoints.interval.seconds":     "1",
			"sync.group.offsets.enabled":            "true",
			"sync.group.offsets.interval.seconds":   "1",
			"refresh.groups.interval.seconds":       "5",
			"checkpoints.topic.replication.factor":  "1",
			"offset-syncs.topic.replication.factor": "1",
		}
		if _, err := benchkit.PostJSON(fmt.Sprintf("http://127.0.0.1:%d/connectors", m.port), map[string]any{"name": "mm2-checkpoints", "config": cfg}); err != nil {
			p.Stop(10 * time.Second)
			return nil, err
		}
	}
	return []*benchkit.Proc{p}, nil
}

func (m *mm2System) start(ctx context.Context, rs *runSpec) ([]*benchkit.Proc, time.Time, error) {
	cfg := map[string]string{
		"connector.class":                       "org.apache.kafka.connect.mirror.MirrorSourceConnector",
		"tasks.max":                             strconv.Itoa(rs.tasks),
		"source.cluster.alias":                  "src",
		"target.cluster.alias":                  "dst",
		"source.cluster.bootstrap.servers":      rs.bootstrap,
		"target.cluster.bootstrap.servers":      rs.targetBootstrap,
		"topics":                                rs.topics(),
		"key.converter":                         "org.apache.kafka.connect.converters.ByteArrayConverter",
		"value.converter":                       "org.apache.kafka.connect.converters.ByteArrayConverter",
		"header.converter":                      "org.apache.kafka.connect.converters.ByteArrayConverter",
		"replication.factor":                    "1",
		"offset-syncs.topic.replication.factor": "1",
		"sync.topic.configs.enabled":            "false",
		"sync.topic.acls.enabled":               "false",
		"heartbeats.replication.enabled":        "false",
		"refresh.topics.enabled":                "false",
		"source.consumer.isolation.level":       "read_committed",
		"exactly.once.support":                  "required",
	}
	if rs.cross {
		// MM2's default offset.lag.max (100) and offset-syncs location
		// (the source cluster) stay as they are.
		cfg["source.cluster.alias"] = rs.sourceAlias
		cfg["target.cluster.alias"] = rs.targetAlias
		cfg["replication.policy.class"] = "org.apache.kafka.connect.mirror.DefaultReplicationPolicy"
	}
	if m.boundary == "interval" {
		cfg["transaction.boundary"] = "interval"
		cfg["transaction.boundary.interval.ms"] = strconv.FormatInt(m.interval.Milliseconds(), 10)
	}
	t0, err := benchkit.PostJSON(fmt.Sprintf("http://127.0.0.1:%d/connectors", m.port), map[string]any{"name": "mm2-bench", "config": cfg})
	return nil, t0, err
}

func (m *mm2System) cleanup(ctx context.Context, rs *runSpec) {
	topics, _ := benchkit.ListTopics(rs.targetBootstrap, "mm2-"+rs.runID)
	_ = benchkit.DeleteTopics(ctx, rs.targetBootstrap, append(topics, m.target(rs))...)
	cleanupCross(ctx, rs, m.target(rs))
}

// cleanupCross removes what a cross-cluster run leaves besides the worker's
// own topics: its checkpoint topic and replica, MM2's offset-syncs topic
// (on the source, named after the run's target alias) and the run's
// consumer group on both clusters; it waits until the target topic is gone,
// as the next run creates it again under the same name. Shared topics stay:
// the checkpoints topic (runs tell their checkpoints apart by group) and
// connectd's offset-syncs topic on the target, named after the source alias
// as MM2 names a target-located one (the measured syncs are of the run's
// own checkpoint topic).
func cleanupCross(ctx context.Context, rs *runSpec, target string) {
	if !rs.cross {
		return
	}
	syncs := "mm2-offset-syncs." + rs.targetAlias + ".internal"
	_ = benchkit.DeleteTopics(ctx, rs.bootstrap, syncs, rs.ckptTopic)
	_ = benchkit.DeleteTopics(ctx, rs.targetBootstrap, syncs, rs.sourceAlias+"."+rs.ckptTopic)
	for _, bs := range []string{rs.bootstrap, rs.targetBootstrap} {
		_ = deleteGroup(ctx, bs, checkpointGroup(rs))
	}
	if err := benchkit.WaitTopicGone(ctx, rs.targetBootstrap, target); err != nil {
		logf("%s: %v", rs.runID, err)
	}
}
