// Command replaysource is a bench-only source plugin (class
// BenchReplaySource): it replays a Kafka topic into another, partition for
// partition, with its position in connectd's offsets. It stands in for the
// KafkaReplicationSource (connectors/kafka, not written yet) so that the
// worker benchmark (bench/workerbench) measures connectd on the same work
// as a raw consume→produce loop. Not a product connector: no topic
// discovery, no rebalancing, no security settings.
//
// Keys: source.bootstrap.servers, source.topic, topic (target),
// max.poll.records (default 1000). Task i of n replays the partitions p
// with p % n == i. Source partition {"partition":p}, offset {"offset":o}.
package main

import (
	"context"
	"fmt"
	"os"
	"runtime/pprof"
	"strconv"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"github.com/connectd/connectd/framework/configdef"
	"github.com/connectd/connectd/framework/sdk"
	"github.com/connectd/connectd/plugins"
)

func main() { plugins.Serve(func() *connector { return &connector{} }) }

type connector struct{ props map[string]string }

func (c *connector) Spec() sdk.Spec {
	def := configdef.New()
	for _, k := range []configdef.Key{
		{Name: "source.bootstrap.servers", Type: configdef.String, Required: true},
		{Name: "source.topic", Type: configdef.String, Required: true},
		{Name: "topic", Type: configdef.String, Required: true},
		{Name: "max.poll.records", Type: configdef.Int, Default: int32(1000)},
		{Name: "cpuprofile", Type: configdef.String, Default: ""},
	} {
		k.Importance = configdef.High
		def.Define(k)
	}
	return sdk.Spec{Class: "BenchReplaySource", Version: "0.0.1", Type: sdk.Source, ExactlyOnce: true,
		Summary: "Benchmark-only replay of a Kafka topic.", Config: def}
}

func (c *connector) Validate(context.Context, map[string]string) []sdk.FieldError { return nil }

func (c *connector) Start(_ context.Context, _ sdk.ConnectorContext, props map[string]string) error {
	c.props = props
	return nil
}

func (c *connector) TaskConfigs(_ context.Context, maxTasks int) ([]map[string]string, error) {
	out := make([]map[string]string, maxTasks)
	for i := range out {
		m := map[string]string{}
		for k, v := range c.props {
			m[k] = v
		}
		m["task.index"], m["task.count"] = strconv.Itoa(i), strconv.Itoa(maxTasks)
		out[i] = m
	}
	return out, nil
}

func (c *connector) Stop(context.Context) error { return nil }

func (c *connector) NewTask() sdk.SourceTask { return &task{} }

type task struct {
	prof   *os.File
	c      *kafka.Consumer
	target string
	max    int
	parts  map[int32]map[string]any // source partition maps, reused
}

func (t *task) Start(_ context.Context, tctx sdk.SourceTaskContext, props map[string]string) (err error) {
	idx, _ := strconv.Atoi(props["task.index"])
	n, _ := strconv.Atoi(props["task.count"])
	if n < 1 {
		n = 1
	}
	if path := props["cpuprofile"]; path != "" {
		// Profiling the plugin process, for the benchmark's analysis.
		if t.prof, err = os.Create(path); err != nil {
			return err
		}
		if err := pprof.StartCPUProfile(t.prof); err != nil {
			return err
		}
	}
	t.target = props["topic"]
	t.max = 1000
	if v, err := strconv.Atoi(props["max.poll.records"]); err == nil && v > 0 {
		t.max = v
	}
	c, err := kafka.NewConsumer(&kafka.ConfigMap{
		"bootstrap.servers": props["source.bootstrap.servers"], "group.id": "bench-replay",
		"enable.auto.commit": false, "isolation.level": "read_committed",
	})
	if err != nil {
		return err
	}
	t.c = c
	src := props["source.topic"]
	md, err := c.GetMetadata(&src, false, 10000)
	if err != nil {
		return err
	}
	t.parts = map[int32]map[string]any{}
	var assign []kafka.TopicPartition
	for _, p := range md.Topics[src].Partitions {
		if int(p.ID)%n != idx {
			continue
		}
		part := map[string]any{"partition": int(p.ID)}
		t.parts[p.ID] = part
		start := kafka.OffsetBeginning
		if off := tctx.Offset(part); off != nil {
			f, ok := off["offset"].(float64)
			if !ok {
				return fmt.Errorf("committed offset %v of partition %d has no number offset", off, p.ID)
			}
			start = kafka.Offset(int64(f) + 1)
		}
		assign = append(assign, kafka.TopicPartition{Topic: &src, Partition: p.ID, Offset: start})
	}
	return c.Assign(assign)
}

func (t *task) Poll(ctx context.Context) ([]*sdk.SourceRecord, error) {
	recs := make([]sdk.SourceRecord, 0, t.max)
	timeout := 100
	deadline := time.Now().Add(time.Second)
	for len(recs) < t.max && ctx.Err() == nil && time.Now().Before(deadline) {
		ev := t.c.Poll(timeout)
		if ev == nil {
			if len(recs) > 0 {
				break
			}
			continue
		}
		timeout = 0
		switch e := ev.(type) {
		case *kafka.Message:
			p := e.TopicPartition.Partition
			recs = append(recs, sdk.SourceRecord{
				SourcePartition: t.parts[p], SourceOffset: map[string]any{"offset": int64(e.TopicPartition.Offset)},
				Topic: t.target, Partition: p, Key: e.Key, Value: e.Value, Timestamp: e.Timestamp,
			})
		case kafka.Error:
			if e.IsFatal() {
				return nil, e
			}
		}
	}
	out := make([]*sdk.SourceRecord, len(recs))
	for i := range recs {
		out[i] = &recs[i]
	}
	return out, nil
}

func (t *task) Commit(context.Context, []sdk.SourceOffset) error { return nil }

func (t *task) Stop(context.Context) error {
	if t.prof != nil {
		pprof.StopCPUProfile()
		t.prof.Close()
	}
	if t.c != nil {
		return t.c.Close()
	}
	return nil
}
