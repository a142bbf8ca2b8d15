package chaos

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"strconv"
	"sync"

	"github.com/connectd/connectd/connectors/datagen"
	"github.com/connectd/connectd/connectors/datagen/datagencheck"
)

// The pipeline's connectors.
const (
	connDatagen = "chaos-datagen"
	// connDatagen2 is a second DatagenSource beside the first, with no
	// downstream: on every worker both share the one DatagenSource plugin
	// process, so a SIGKILL of that process fails the tasks of both.
	connDatagen2 = "chaos-datagen2"
	connRepl     = "chaos-repl"
	connSink     = "chaos-sink"

	// badHeader marks the malformed records the suite writes into the
	// source topic on purpose; its value is the record's corpus id.
	badHeader = "chaos.bad"
)

// pipeline holds the names and the evolving configs of the four
// connectors.
type pipeline struct {
	bootstrap   string
	source      string // datagen's topic
	source2     string // datagen2's topic
	replica     string // the replication's target topic
	sinkDLQ     string
	replDLQ     string
	aero        aeroTarget
	seed        int64
	cardinality int
	partitions  int
	// datagenTasks and datagen2Tasks never change during a run: the
	// counter sequence assigns seq ≡ task (mod tasks), so the check needs
	// a fixed count.
	datagenTasks  int
	datagen2Tasks int

	mu      sync.Mutex
	configs map[string]map[string]string
}

func newPipeline(bootstrap, prefix string, aero aeroTarget, seed int64) *pipeline {
	p := &pipeline{
		bootstrap:     bootstrap,
		source:        prefix + "-source",
		source2:       prefix + "-source2",
		sinkDLQ:       prefix + "-sink-dlq",
		replDLQ:       prefix + "-repl-dlq",
		aero:          aero,
		seed:          seed,
		cardinality:   50,
		partitions:    6,
		datagenTasks:  3,
		datagen2Tasks: 2,
	}
	p.replica = p.source + ".replica"
	p.configs = map[string]map[string]string{
		connDatagen:  datagenConfig(p.source, p.datagenTasks, p.cardinality, seed),
		connDatagen2: datagenConfig(p.source2, p.datagen2Tasks, p.cardinality, seed+1),
		connRepl: {
			"connector.class":          "KafkaReplicationSource",
			"tasks.max":                "2",
			"source.bootstrap.servers": bootstrap,
			"target.bootstrap.servers": bootstrap,
			"topics":                   p.source,
			"target.topic.format":      "${topic}.replica",
			"partition.mapping":        "preserve",
			"poll.max.records":         "500",
			// A broker restart takes longer than a minute on a loaded
			// machine now and then; the task must wait, not fail.
			"source.unreachable.timeout.ms":                   "300000",
			"key.converter":                                   "org.apache.kafka.connect.converters.ByteArrayConverter",
			"value.converter":                                 "org.apache.kafka.connect.converters.ByteArrayConverter",
			"header.converter":                                "org.apache.kafka.connect.converters.ByteArrayConverter",
			"exactly.once.support":                            "required",
			"errors.tolerance":                                "all",
			"errors.deadletterqueue.topic.name":               p.replDLQ,
			"errors.deadletterqueue.topic.replication.factor": "1",
			"errors.deadletterqueue.context.headers.enable":   "true",
		},
		connSink: {
			"connector.class":                   "AerospikeSink",
			"tasks.max":                         "3",
			"topics":                            p.replica,
			"aerospike.hosts":                   aero.hosts,
			"aerospike.namespace":               aero.namespace,
			"aerospike.set":                     aero.set,
			"write.mode":                        "increment",
			"bins.include":                      "amount",
			"send.key":                          "true",
			"key.converter":                     "org.apache.kafka.connect.storage.StringConverter",
			"value.converter":                   "org.apache.kafka.connect.json.JsonConverter",
			"value.converter.schemas.enable":    "false",
			"header.converter":                  "org.apache.kafka.connect.converters.ByteArrayConverter",
			"errors.tolerance":                  "all",
			"errors.deadletterqueue.topic.name": p.sinkDLQ,
			"errors.deadletterqueue.topic.replication.factor": "1",
			"errors.deadletterqueue.context.headers.enable":   "true",
		},
	}
	if aero.user != "" {
		p.configs[connSink]["aerospike.user"] = aero.user
		p.configs[connSink]["aerospike.password"] = aero.password
	}
	return p
}

// datagenConfig is an exactly-once counter sequence into topic.
func datagenConfig(topic string, tasks, cardinality int, seed int64) map[string]string {
	return map[string]string{
		"connector.class":                  "DatagenSource",
		"tasks.max":                        strconv.Itoa(tasks),
		datagen.KeyTopic:                   topic,
		datagen.KeyQuickstart:              datagen.Counter,
		datagen.KeyMaxInterval:             "40",
		datagen.KeyCardinality:             strconv.Itoa(cardinality),
		datagen.KeySeed:                    strconv.FormatInt(seed, 10),
		"key.converter":                    "org.apache.kafka.connect.storage.StringConverter",
		"value.converter":                  "org.apache.kafka.connect.json.JsonConverter",
		"value.converter.schemas.enable":   "false",
		"exactly.once.support":             "required",
		"transaction.boundary":             "interval",
		"transaction.boundary.interval.ms": "300",
	}
}

// datagenRun is one datagen connector as the final check sees it: its
// topic and the sequence it must hold.
type datagenRun struct {
	conn, topic string
	spec        datagencheck.Spec
}

// datagens lists the datagen connectors with their sequence specs. Only
// the first one's topic receives the bad-record corpus.
func (p *pipeline) datagens() []datagenRun {
	return []datagenRun{
		{connDatagen, p.source, datagencheck.Spec{Tasks: p.datagenTasks, Seed: p.seed, Cardinality: p.cardinality, IgnoreHeader: badHeader}},
		{connDatagen2, p.source2, datagencheck.Spec{Tasks: p.datagen2Tasks, Seed: p.seed + 1, Cardinality: p.cardinality}},
	}
}

// class is the connector class (the plugin) a connector runs.
func (p *pipeline) class(conn string) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.configs[conn]["connector.class"]
}

// connectorsOf lists, in connectorNames order, the connectors of a
// plugin: on a worker they all live in its one process, so a SIGKILL of
// that process is a fault of every one of them.
func (p *pipeline) connectorsOf(class string) []string {
	var out []string
	for _, name := range connectorNames {
		if p.class(name) == class {
			out = append(out, name)
		}
	}
	return out
}

// config returns a copy of a connector's current config.
func (p *pipeline) config(name string) map[string]string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return maps.Clone(p.configs[name])
}

// set records a connector's config after the cluster accepted it.
func (p *pipeline) set(name string, cfg map[string]string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.configs[name] = maps.Clone(cfg)
}

// tasks is the task count the harness expects for a connector.
func (p *pipeline) tasks(name string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n, _ := strconv.Atoi(p.configs[name]["tasks.max"])
	return n
}

// randomUpdate picks a config change that keeps the pipeline's meaning:
// datagen's pace (never its task count: the sequence depends on it), the
// replication's task count (a new task generation, fenced), the sink's task
// count (a consumer group rebalance) or its retry backoff.
func (p *pipeline) randomUpdate(r *rand.Rand) (conn, key, value string) {
	cur := func(name, key string) string {
		p.mu.Lock()
		defer p.mu.Unlock()
		return p.configs[name][key]
	}
	other := func(name, key string, choices ...string) string {
		now := cur(name, key)
		for {
			if c := choices[r.IntN(len(choices))]; c != now {
				return c
			}
		}
	}
	switch r.IntN(4) {
	case 0:
		return connDatagen, datagen.KeyMaxInterval, other(connDatagen, datagen.KeyMaxInterval, "20", "30", "40", "60")
	case 1:
		return connRepl, "tasks.max", other(connRepl, "tasks.max", "1", "2", "3")
	case 2:
		return connSink, "tasks.max", other(connSink, "tasks.max", "1", "2", "3")
	default:
		return connSink, "retry.backoff.ms", other(connSink, "retry.backoff.ms", "10", "20", "50")
	}
}

var connectorNames = []string{connDatagen, connDatagen2, connRepl, connSink}

func (p *pipeline) String() string {
	return fmt.Sprintf("%s → %s (DatagenSource %d tasks) → %s (KafkaReplicationSource) → Aerospike %s.%s at %s (AerospikeSink increment); %s → %s (DatagenSource %d tasks, same plugin process)",
		connDatagen, p.source, p.datagenTasks, p.replica, p.aero.namespace, p.aero.set, p.aero.hosts, connDatagen2, p.source2, p.datagen2Tasks)
}
