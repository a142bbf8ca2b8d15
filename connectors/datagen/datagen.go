package datagen

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/connectd/connectd/framework/configdef"
	"github.com/connectd/connectd/framework/data"
	"github.com/connectd/connectd/framework/sdk"
)

// Version of the connector: a variable so that a build can set it with
// -ldflags -X (tests install two versions side by side this way).
var Version = "0.1.0"

// Config keys.
const (
	KeyTopic       = "kafka.topic"
	KeyQuickstart  = "quickstart"
	KeyIterations  = "iterations"
	KeyMaxInterval = "max.interval"
	KeyCardinality = "key.cardinality"
	KeySeed        = "random.seed"
	KeyValueStruct = "value.struct"

	// Set by TaskConfigs for each task.
	keyTaskIndex = "datagen.task.index"
	keyTaskCount = "datagen.task.count"
)

// Quickstarts.
const (
	Counter   = "counter"
	Pageviews = "pageviews"
)

// pollBatch is the most records one Poll returns when max.interval is 0.
const pollBatch = 500

func configDef() *configdef.Def {
	const g = "Datagen"
	return configdef.New().
		Define(configdef.Key{Name: KeyTopic, Type: configdef.String, Required: true, Importance: configdef.High,
			Documentation: "Topic to write to.", Group: g, OrderInGroup: 1, Width: configdef.WidthLong, DisplayName: "Kafka topic"}).
		Define(configdef.Key{Name: KeyQuickstart, Type: configdef.String, Default: Counter, Importance: configdef.High,
			Documentation: "What to generate: counter (keys k<N>, JSON values with amount and seq; deterministic) or pageviews (page view events).",
			Group:         g, OrderInGroup: 2, Width: configdef.WidthShort, DisplayName: "Quickstart"}).
		Define(configdef.Key{Name: KeyIterations, Type: configdef.Long, Default: int64(0), Importance: configdef.Medium,
			Documentation: "Records per task; 0 means unbounded.", Group: g, OrderInGroup: 3, Width: configdef.WidthShort, DisplayName: "Iterations"}).
		Define(configdef.Key{Name: KeyMaxInterval, Type: configdef.Long, Default: int64(500), Importance: configdef.Medium,
			Documentation: "Longest pause between records in milliseconds (each pause is random in [0, max.interval]); 0 generates as fast as possible.",
			Group:         g, OrderInGroup: 4, Width: configdef.WidthShort, DisplayName: "Max interval (ms)"}).
		Define(configdef.Key{Name: KeyCardinality, Type: configdef.Int, Default: int32(10), Importance: configdef.Medium,
			Documentation: "Number of distinct keys (counter) or users (pageviews); at least 1.", Group: g, OrderInGroup: 5,
			Width: configdef.WidthShort, DisplayName: "Key cardinality"}).
		Define(configdef.Key{Name: KeySeed, Type: configdef.Long, Default: int64(0), Importance: configdef.Low,
			Documentation: "Seed of the generated contents: the same seed gives the same records.", Group: g, OrderInGroup: 6,
			Width: configdef.WidthShort, DisplayName: "Random seed"}).
		Define(configdef.Key{Name: KeyValueStruct, Type: configdef.Boolean, Default: false, Importance: configdef.Medium,
			Documentation: "Emit values as Structs with a schema (counter adds a Timestamp field created_at and a Decimal field price), " +
				"as Schema Registry converters such as io.confluent.connect.avro.AvroConverter need; false emits schemaless maps " +
				"for org.apache.kafka.connect.json.JsonConverter with schemas.enable=false.",
			Group: g, OrderInGroup: 7, Width: configdef.WidthShort, DisplayName: "Struct values"})
}

// Connector is DatagenSource.
type Connector struct {
	props map[string]string
}

// New returns the connector.
func New() *Connector { return &Connector{} }

var _ sdk.SourceConnector = (*Connector)(nil)

func (c *Connector) Spec() sdk.Spec {
	return sdk.Spec{
		Class: "DatagenSource", Version: Version, Type: sdk.Source,
		Summary:     "Generates records with known contents (counter, pageviews) for demos, tests and benchmarks.",
		Config:      configDef(),
		ExactlyOnce: true,
	}
}

// config is the parsed configuration.
type config struct {
	topic       string
	quickstart  string
	iterations  int64
	maxInterval time.Duration
	cardinality int
	seed        int64
	structs     bool
}

func parse(props map[string]string) (config, []sdk.FieldError) {
	var errs []sdk.FieldError
	cfg := config{topic: props[KeyTopic], quickstart: Counter, maxInterval: 500 * time.Millisecond, cardinality: 10}
	if cfg.topic == "" {
		errs = append(errs, sdk.FieldError{Key: KeyTopic, Message: "Missing required configuration \"kafka.topic\" which has no default value."})
	}
	if v, ok := props[KeyQuickstart]; ok {
		if v != Counter && v != Pageviews {
			errs = append(errs, sdk.FieldError{Key: KeyQuickstart, Message: fmt.Sprintf("Invalid value %s for configuration quickstart: must be one of [counter, pageviews]", v)})
		}
		cfg.quickstart = v
	}
	num := func(key string, min int64, set func(int64)) {
		v, ok := props[key]
		if !ok {
			return
		}
		n, err := strconv.ParseInt(v, 10, 64)
		switch {
		case err != nil:
			errs = append(errs, sdk.FieldError{Key: key, Message: fmt.Sprintf("Invalid value %s for configuration %s: Not a number of type LONG", v, key)})
		case n < min:
			errs = append(errs, sdk.FieldError{Key: key, Message: fmt.Sprintf("Invalid value %d for configuration %s: Value must be at least %d", n, key, min)})
		default:
			set(n)
		}
	}
	if v, ok := props[KeyValueStruct]; ok {
		b, err := strconv.ParseBool(strings.TrimSpace(v))
		if err != nil || !strings.EqualFold(strings.TrimSpace(v), strconv.FormatBool(b)) {
			errs = append(errs, sdk.FieldError{Key: KeyValueStruct, Message: fmt.Sprintf("Invalid value %s for configuration %s: Expected value to be either true or false", v, KeyValueStruct)})
		}
		cfg.structs = b
	}
	num(KeyIterations, 0, func(n int64) { cfg.iterations = n })
	num(KeyMaxInterval, 0, func(n int64) { cfg.maxInterval = time.Duration(n) * time.Millisecond })
	num(KeyCardinality, 1, func(n int64) { cfg.cardinality = int(min(n, 1<<31-1)) })
	num(KeySeed, -1<<63, func(n int64) { cfg.seed = n })
	return cfg, errs
}

func (c *Connector) Validate(_ context.Context, props map[string]string) []sdk.FieldError {
	_, errs := parse(props)
	return errs
}

func (c *Connector) Start(_ context.Context, _ sdk.ConnectorContext, props map[string]string) error {
	if _, errs := parse(props); len(errs) > 0 {
		return fmt.Errorf("invalid configuration: %s: %s", errs[0].Key, errs[0].Message)
	}
	c.props = props
	return nil
}

// TaskConfigs gives every task the connector's props plus its index and
// the task count; task i generates seq ≡ i (mod count).
func (c *Connector) TaskConfigs(_ context.Context, maxTasks int) ([]map[string]string, error) {
	out := make([]map[string]string, maxTasks)
	for i := range out {
		m := make(map[string]string, len(c.props)+2)
		for k, v := range c.props {
			m[k] = v
		}
		m[keyTaskIndex] = strconv.Itoa(i)
		m[keyTaskCount] = strconv.Itoa(maxTasks)
		out[i] = m
	}
	return out, nil
}

func (c *Connector) Stop(context.Context) error { return nil }

func (c *Connector) NewTask() sdk.SourceTask { return &Task{} }

// Task generates one task's share of the sequence.
type Task struct {
	cfg       config
	index     int64
	count     int64
	next      int64 // next seq to produce
	produced  int64 // records produced by this task, including before a restart
	partition map[string]any
	pause     *rand.Rand // pauses only; contents come from the seq
	nextAt    time.Time  // when the next record is due (max.interval > 0)
	log       *slog.Logger
}

func (t *Task) Start(_ context.Context, tctx sdk.SourceTaskContext, props map[string]string) error {
	cfg, errs := parse(props)
	if len(errs) > 0 {
		return fmt.Errorf("invalid configuration: %s: %s", errs[0].Key, errs[0].Message)
	}
	t.cfg = cfg
	t.index, t.count = 0, 1
	if v, ok := props[keyTaskIndex]; ok {
		t.index, _ = strconv.ParseInt(v, 10, 64)
	}
	if v, ok := props[keyTaskCount]; ok {
		t.count, _ = strconv.ParseInt(v, 10, 64)
	}
	if t.count < 1 || t.index < 0 || t.index >= t.count {
		return fmt.Errorf("task index %d of %d is out of range", t.index, t.count)
	}
	t.partition = map[string]any{"task": t.index}
	t.next = t.index
	if off := tctx.Offset(t.partition); off != nil {
		last, ok := asInt(off["seq"])
		if !ok {
			return fmt.Errorf("committed offset %v has no integer seq", off)
		}
		t.next = last + t.count
	}
	t.produced = (t.next - t.index) / t.count
	t.pause = rand.New(rand.NewPCG(uint64(cfg.seed), uint64(t.index)))
	t.log = tctx.Logger()
	t.log.Info("datagen task started", "quickstart", cfg.quickstart, "next_seq", t.next, "produced", t.produced)
	return nil
}

func asInt(v any) (int64, bool) {
	switch x := v.(type) {
	case float64:
		return int64(x), x == float64(int64(x))
	case int64:
		return x, true
	case int:
		return int64(x), true
	case int32:
		return int64(x), true
	}
	return 0, false
}

func (t *Task) done() bool { return t.cfg.iterations > 0 && t.produced >= t.cfg.iterations }

func (t *Task) Poll(ctx context.Context) ([]*sdk.SourceRecord, error) {
	if t.done() {
		// Finished: idle politely until stopped.
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
		return nil, nil
	}
	n := pollBatch
	if t.cfg.maxInterval > 0 {
		// One record per pause; a Poll waits at most a second (the SDK's
		// rule), so long pauses span several polls.
		n = 1
		if t.nextAt.IsZero() {
			t.nextAt = time.Now().Add(time.Duration(t.pause.Int64N(int64(t.cfg.maxInterval) + 1)))
		}
		wait := min(time.Until(t.nextAt), time.Second)
		if wait > 0 {
			select {
			case <-ctx.Done():
				return nil, nil
			case <-time.After(wait):
			}
		}
		if time.Now().Before(t.nextAt) {
			return nil, nil
		}
		t.nextAt = time.Time{}
	}
	if t.cfg.iterations > 0 {
		n = int(min(int64(n), t.cfg.iterations-t.produced))
	}
	out := make([]*sdk.SourceRecord, n)
	recs := make([]sdk.SourceRecord, n)
	for i := range out {
		seq := t.next
		key, value, schema := t.generate(seq)
		recs[i] = sdk.SourceRecord{
			SourcePartition: t.partition,
			SourceOffset:    map[string]any{"seq": seq},
			Topic:           t.cfg.topic,
			Partition:       sdk.AnyPartition,
			Key:             key,
			Value:           value,
			ValueSchema:     schema,
		}
		out[i] = &recs[i]
		t.next += t.count
		t.produced++
	}
	return out, nil
}

// generate returns a record's key and value, and the value's schema when
// value.struct is set (nil: a schemaless map).
func (t *Task) generate(seq int64) (string, any, *data.Schema) {
	if t.cfg.quickstart == Pageviews {
		p := PageviewAt(t.cfg.seed, t.cfg.cardinality, seq)
		if t.cfg.structs {
			return p.UserID, PageviewStruct(p), PageviewSchema
		}
		return p.UserID, map[string]any{"viewtime": p.ViewTime, "userid": p.UserID, "pageid": p.PageID}, nil
	}
	c := CounterAt(t.cfg.seed, t.cfg.cardinality, seq)
	if t.cfg.structs {
		return c.Key, CounterStruct(c), CounterSchema
	}
	return c.Key, map[string]any{"key": c.Key, "amount": c.Amount, "seq": c.Seq}, nil
}

func (t *Task) Commit(context.Context, []sdk.SourceOffset) error { return nil }

func (t *Task) Stop(context.Context) error { return nil }
