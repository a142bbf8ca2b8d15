package quickstart

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/connectd/connectd/connectors/datagen"
	"github.com/connectd/connectd/framework/configprovider"
	"github.com/connectd/connectd/framework/properties"
)

// Bins the demo sink writes: the generator's amount, added up per key, and
// a count of the records applied, which an InsertField+Cast transform
// chain adds to every record as the number 1.
const (
	AmountBin = "amount"
	CountBin  = "count"
)

// Connector is one connector file: Kafka Connect's {"name", "config"}
// shape, with the placeholders of its config resolved.
type Connector struct {
	Path   string
	Name   string
	Config map[string]string
}

// Pipeline is the demo pipeline as its connector files describe it. The
// replication and sink stages are optional, so that the pipeline also
// runs with only some connectors installed.
type Pipeline struct {
	Source      Connector
	Replication *Connector
	Sink        *Connector

	// Topics: the generator writes OrdersTopic; the replication writes
	// ReplicaTopic (empty without a replication stage); the sink reads
	// SinkTopic.
	OrdersTopic, ReplicaTopic, SinkTopic string

	// The generator's parameters, from which the expected totals follow.
	Seed        int64
	Cardinality int
	Tasks       int
	Iterations  int64

	// Where the sink writes.
	AerospikeHosts string
	Namespace, Set string
	// StatsSet is the sink's stats.set, where it keeps its applied and
	// duplicate counts across restarts (empty: the sink keeps none).
	StatsSet            string
	ExpectedAmounts     map[string]int64 // per key
	ExpectedRecords     int64
	ExpectedAmountTotal int64
}

// SinkGroup is the sink connector's consumer group (Kafka Connect's
// naming: connect-<connector name>).
func (p *Pipeline) SinkGroup() string {
	if p.Sink == nil {
		return ""
	}
	return "connect-" + p.Sink.Name
}

// Connectors lists the pipeline's connectors in data-flow order.
func (p *Pipeline) Connectors() []Connector {
	out := []Connector{p.Source}
	if p.Replication != nil {
		out = append(out, *p.Replication)
	}
	if p.Sink != nil {
		out = append(out, *p.Sink)
	}
	return out
}

// Files names the connector files of a pipeline; Replication and Sink may
// be empty.
type Files struct {
	Source, Replication, Sink string
}

// Load reads the connector files and checks that they form the demo
// pipeline: a counter DatagenSource with bounded iterations, optionally
// replicated by KafkaReplicationSource, optionally summed into Aerospike by
// an AerospikeSink in increment mode that also writes the count bin.
// Placeholders are resolved with resolver (nil: ${env:...} and
// ${file:...}, as a worker without config.providers does).
func Load(files Files, resolver *configprovider.Resolver) (*Pipeline, error) {
	if resolver == nil {
		resolver = configprovider.Default()
	}
	src, err := readConnector(files.Source, resolver)
	if err != nil {
		return nil, err
	}
	p := &Pipeline{Source: src}
	if err := p.source(src); err != nil {
		return nil, fmt.Errorf("%s: %w", src.Path, err)
	}
	p.SinkTopic = p.OrdersTopic
	if files.Replication != "" {
		rep, err := readConnector(files.Replication, resolver)
		if err != nil {
			return nil, err
		}
		if err := p.replication(rep); err != nil {
			return nil, fmt.Errorf("%s: %w", rep.Path, err)
		}
		p.Replication = &rep
		p.SinkTopic = p.ReplicaTopic
	}
	if files.Sink != "" {
		sink, err := readConnector(files.Sink, resolver)
		if err != nil {
			return nil, err
		}
		if err := p.sink(sink); err != nil {
			return nil, fmt.Errorf("%s: %w", sink.Path, err)
		}
		p.Sink = &sink
	}
	return p, nil
}

func readConnector(path string, resolver *configprovider.Resolver) (Connector, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return Connector{}, err
	}
	var f struct {
		Name   string            `json:"name"`
		Config map[string]string `json:"config"`
	}
	if err := json.Unmarshal(raw, &f); err != nil {
		return Connector{}, fmt.Errorf("%s: %w", path, err)
	}
	if f.Name == "" || len(f.Config) == 0 {
		return Connector{}, fmt.Errorf("%s: want Kafka Connect's {\"name\": ..., \"config\": {...}} shape", path)
	}
	cfg, err := resolver.Resolve(f.Config)
	if err != nil {
		return Connector{}, fmt.Errorf("%s: %w (scripts/quickstart.sh sets the QUICKSTART_* variables)", path, err)
	}
	return Connector{Path: path, Name: f.Name, Config: cfg}, nil
}

func (p *Pipeline) source(c Connector) error {
	cfg := c.Config
	if cfg["connector.class"] != "DatagenSource" {
		return fmt.Errorf("connector.class is %q, want DatagenSource", cfg["connector.class"])
	}
	if q := cfg[datagen.KeyQuickstart]; q != "" && q != datagen.Counter {
		return fmt.Errorf("%s is %q, want %s", datagen.KeyQuickstart, q, datagen.Counter)
	}
	p.OrdersTopic = cfg[datagen.KeyTopic]
	if p.OrdersTopic == "" {
		return fmt.Errorf("%s is not set", datagen.KeyTopic)
	}
	var err error
	num := func(key string, def int64) int64 {
		v, ok := cfg[key]
		if !ok || err != nil {
			return def
		}
		n, perr := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if perr != nil {
			err = fmt.Errorf("%s: %q is not a number", key, v)
		}
		return n
	}
	p.Seed = num(datagen.KeySeed, 0)
	p.Cardinality = int(num(datagen.KeyCardinality, 10))
	p.Tasks = int(num("tasks.max", 1))
	p.Iterations = num(datagen.KeyIterations, 0)
	if err != nil {
		return err
	}
	if p.Iterations <= 0 {
		return errors.New("iterations must be positive: the expected totals need a bounded run")
	}
	if p.Tasks < 1 || p.Cardinality < 1 {
		return errors.New("tasks.max and key.cardinality must be at least 1")
	}
	sums, _ := datagen.ExpectedSums(p.Seed, p.Cardinality, p.Tasks, p.Iterations)
	p.ExpectedAmounts = sums
	p.ExpectedRecords = int64(p.Tasks) * p.Iterations
	for _, v := range sums {
		p.ExpectedAmountTotal += v
	}
	return nil
}

func (p *Pipeline) replication(c Connector) error {
	cfg := c.Config
	if cfg["connector.class"] != "KafkaReplicationSource" {
		return fmt.Errorf("connector.class is %q, want KafkaReplicationSource", cfg["connector.class"])
	}
	if t := strings.TrimSpace(cfg["topics"]); t != p.OrdersTopic {
		return fmt.Errorf("topics is %q, want the generator's topic %q", t, p.OrdersTopic)
	}
	format := cfg["target.topic.format"]
	if format == "" {
		format = "${topic}"
	}
	p.ReplicaTopic = strings.ReplaceAll(format, "${topic}", p.OrdersTopic)
	if p.ReplicaTopic == p.OrdersTopic {
		return errors.New("target.topic.format must name another topic than the source")
	}
	return nil
}

func (p *Pipeline) sink(c Connector) error {
	cfg := c.Config
	if cfg["connector.class"] != "AerospikeSink" {
		return fmt.Errorf("connector.class is %q, want AerospikeSink", cfg["connector.class"])
	}
	if t := strings.TrimSpace(cfg["topics"]); t != p.SinkTopic {
		return fmt.Errorf("topics is %q, want %q", t, p.SinkTopic)
	}
	if cfg["write.mode"] != "increment" {
		return fmt.Errorf("write.mode is %q, want increment", cfg["write.mode"])
	}
	bins := strings.Split(cfg["bins.include"], ",")
	for i := range bins {
		bins[i] = strings.TrimSpace(bins[i])
	}
	for _, b := range []string{AmountBin, CountBin} {
		if !slices.Contains(bins, b) {
			return fmt.Errorf("bins.include must name %s and %s", AmountBin, CountBin)
		}
	}
	if cfg["send.key"] != "true" {
		return errors.New("send.key must be true: the watcher reads the counters' keys back")
	}
	p.AerospikeHosts = cfg["aerospike.hosts"]
	p.Namespace = cfg["aerospike.namespace"]
	p.Set = cfg["aerospike.set"]
	p.StatsSet = strings.TrimSpace(cfg["stats.set"])
	if p.AerospikeHosts == "" || p.Namespace == "" || p.Set == "" || strings.Contains(p.Set, "${") {
		return errors.New("aerospike.hosts, aerospike.namespace and a fixed aerospike.set are required")
	}
	return nil
}

// Cluster is what the watcher needs of the worker's properties: the
// cluster's group and internal topics, to clean them up.
type Cluster struct {
	GroupID                                string
	ConfigTopic, OffsetsTopic, StatusTopic string
}

// LoadCluster reads those keys from a worker.properties file, resolving
// placeholders like the worker does.
func LoadCluster(path string, resolver *configprovider.Resolver) (Cluster, error) {
	if resolver == nil {
		resolver = configprovider.Default()
	}
	f, err := os.Open(path)
	if err != nil {
		return Cluster{}, err
	}
	defer f.Close()
	props, err := properties.Parse(f)
	if err != nil {
		return Cluster{}, fmt.Errorf("%s: %w", path, err)
	}
	keys := map[string]string{}
	for _, k := range []string{"group.id", "config.storage.topic", "offset.storage.topic", "status.storage.topic"} {
		keys[k] = props[k]
	}
	r, err := resolver.Resolve(keys)
	if err != nil {
		return Cluster{}, fmt.Errorf("%s: %w", path, err)
	}
	return Cluster{GroupID: r["group.id"], ConfigTopic: r["config.storage.topic"],
		OffsetsTopic: r["offset.storage.topic"], StatusTopic: r["status.storage.topic"]}, nil
}
