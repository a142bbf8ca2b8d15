package worker_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"github.com/connectd/connectd/framework/worker"
	"github.com/connectd/connectd/internal/kafkatest"
)

// describeTopic returns topic's partition count, replication factor and
// the topic configs set on it (not the broker's defaults), or ok false
// when it does not exist.
func describeTopic(t *testing.T, topic string) (partitions, rf int, configs map[string]string, ok bool) {
	t.Helper()
	admin := kafkatest.Admin(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := admin.DescribeTopics(ctx, kafka.NewTopicCollectionOfTopicNames([]string{topic}))
	if err != nil {
		var ke kafka.Error
		if errors.As(err, &ke) && ke.Code() == kafka.ErrUnknownTopicOrPart {
			return 0, 0, nil, false
		}
		t.Fatalf("describe topic %s: %v", topic, err)
	}
	d := res.TopicDescriptions[0]
	if d.Error.Code() == kafka.ErrUnknownTopicOrPart {
		return 0, 0, nil, false
	}
	if d.Error.Code() != kafka.ErrNoError {
		t.Fatalf("describe topic %s: %v", topic, d.Error)
	}
	cres, err := admin.DescribeConfigs(ctx, []kafka.ConfigResource{{Type: kafka.ResourceTopic, Name: topic}})
	if err != nil {
		t.Fatalf("describe configs of %s: %v", topic, err)
	}
	configs = map[string]string{}
	for name, e := range cres[0].Config {
		if e.Source == kafka.ConfigSourceDynamicTopic {
			configs[name] = e.Value
		}
	}
	return len(d.Partitions), len(d.Partitions[0].Replicas), configs, true
}

func TestSourceCreatesItsTopics(t *testing.T) {
	for _, tc := range []struct {
		name       string
		eos        bool
		suffix     string // of the topic name
		partitions int
		configs    map[string]string
	}{
		// topic.creation.groups=big,compacted: big takes *-big except
		// *-not-big, compacted takes *-compacted, the rest is default's.
		{"first matching group (exactly-once)", true, "x-big", 3, map[string]string{"retention.ms": "123456"}},
		{"second group (at-least-once)", false, "x-compacted", 1, map[string]string{"cleanup.policy": "compact"}},
		{"excluded from its group: default", false, "x-not-big", 2, map[string]string{"segment.bytes": "1048576"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			cfg := e.config(tc.eos)
			w, st := e.start(cfg)
			topic := kafkatest.UniqueName(t, "created") + "-" + tc.suffix
			t.Cleanup(func() { kafkatest.DeleteTopics(t, topic) })
			props := datagenProps(topic, 1, 50)
			for k, v := range map[string]string{
				"topic.creation.groups":                       "big,compacted",
				"topic.creation.default.replication.factor":   "1",
				"topic.creation.default.partitions":           "2",
				"topic.creation.default.segment.bytes":        "1048576",
				"topic.creation.big.include":                  ".*-big",
				"topic.creation.big.exclude":                  ".*-not-big",
				"topic.creation.big.partitions":               "3",
				"topic.creation.big.retention.ms":             "123456",
				"topic.creation.compacted.include":            ".*-compacted, nothing-else",
				"topic.creation.compacted.partitions":         "-1", // the broker's default: 1 on the test broker
				"topic.creation.compacted.replication.factor": "-1",
				"topic.creation.compacted.cleanup.policy":     "compact",
			} {
				props[k] = v
			}
			name := kafkatest.UniqueName(t, "c")
			e.run(w, name, props)
			msgs := readCommitted(t, topic, 50, time.Minute)
			if len(msgs) < 50 {
				t.Fatalf("%d records in %s", len(msgs), topic)
			}
			parts, rf, configs, ok := describeTopic(t, topic)
			if !ok {
				t.Fatalf("topic %s does not exist", topic)
			}
			if parts != tc.partitions || rf != 1 {
				t.Errorf("topic %s: %d partitions, replication factor %d; want %d, 1", topic, parts, rf, tc.partitions)
			}
			for k, v := range tc.configs {
				if configs[k] != v {
					t.Errorf("topic %s: %s = %q, want %q (topic configs %v)", topic, k, configs[k], v, configs)
				}
			}
			if _, _, failed := st.find(name+"-0", worker.StateFailed, 0); failed {
				t.Errorf("task failed: %s", st)
			}
		})
	}
}

func TestSourceLeavesAnExistingTopicAsItIs(t *testing.T) {
	e := newEnv(t)
	cfg := e.config(true)
	w, st := e.start(cfg)
	topic := kafkatest.Topic(t, kafkatest.Partitions(4))
	props := datagenProps(topic, 1, 20)
	props["topic.creation.default.replication.factor"] = "1"
	props["topic.creation.default.partitions"] = "1"
	props["topic.creation.default.retention.ms"] = "1000"
	name := kafkatest.UniqueName(t, "c")
	e.run(w, name, props)
	readCommitted(t, topic, 20, time.Minute)
	parts, _, configs, _ := describeTopic(t, topic)
	if parts != 4 || configs["retention.ms"] != "" {
		t.Errorf("existing topic changed: %d partitions, configs %v", parts, configs)
	}
	if _, _, failed := st.find(name+"-0", worker.StateFailed, 0); failed {
		t.Errorf("task failed: %s", st)
	}
}

// The test broker runs with auto.create.topics.enable=false, as
// production brokers often do (scripts/kafka.sh).
func TestSourceFailsOnMissingTopic(t *testing.T) {
	for _, tc := range []struct {
		name      string
		eos       bool
		noCreate  bool              // topic.creation.enable=false on the worker
		extra     map[string]string // connector settings
		wantTrace []string
	}{
		{"no topic.creation settings (exactly-once)", true, false, nil,
			[]string{"does not exist", "no topic.creation.* settings", "topic.creation.default.replication.factor", "create the topic"}},
		{"no topic.creation settings (at-least-once)", false, false, nil,
			[]string{"does not exist", "no topic.creation.* settings"}},
		{"topic.creation.enable=false on the worker", true, true,
			map[string]string{"topic.creation.default.replication.factor": "1", "topic.creation.default.partitions": "1"},
			[]string{"does not exist", "topic.creation.enable is false"}},
		{"creation refused by the broker", true, false,
			map[string]string{"topic.creation.default.replication.factor": "3", "topic.creation.default.partitions": "1"},
			[]string{"failed to create topic", "group default", "replication factor", "create the topic"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			cfg := e.config(tc.eos)
			cfg.DisableTopicCreation = tc.noCreate
			w, st := e.start(cfg)
			topic := kafkatest.UniqueName(t, "missing")
			t.Cleanup(func() { kafkatest.DeleteTopics(t, topic) })
			props := datagenProps(topic, 1, 1000)
			for k, v := range tc.extra {
				props[k] = v
			}
			name := kafkatest.UniqueName(t, "c")
			e.run(w, name, props)
			// Well within librdkafka's topic.metadata.propagation.max.ms
			// (30 s), after which a produce to a missing topic fails.
			ev := st.waitFor(t, name+"-0", worker.StateFailed, 20*time.Second)
			if !strings.Contains(ev.trace, topic) {
				t.Errorf("trace does not name topic %s: %s", topic, ev.trace)
			}
			for _, s := range tc.wantTrace {
				if !strings.Contains(strings.ToLower(ev.trace), strings.ToLower(s)) {
					t.Errorf("trace lacks %q: %s", s, ev.trace)
				}
			}
			if n := metricSum(t, cfg, "connectd_task_record_errors_total", map[string]string{"connector": name, "stage": "KAFKA_PRODUCE"}); n < 1 {
				t.Errorf("connectd_task_record_errors_total{stage=KAFKA_PRODUCE} = %v, want at least 1", n)
			}
			if _, _, _, ok := describeTopic(t, topic); ok {
				t.Errorf("topic %s exists", topic)
			}
		})
	}
}

func TestValidateTopicCreation(t *testing.T) {
	e := newEnv(t)
	props := datagenProps("t", 1, 1)
	props["name"] = "c"
	props["topic.creation.groups"] = "g,g"
	props["topic.creation.default.partitions"] = "0"
	for _, tc := range []struct {
		name     string
		noCreate bool
		want     map[string]string // key -> part of its error
	}{
		{"worker creates topics", false, map[string]string{
			"topic.creation.groups":                     "Duplicate alias provided.",
			"topic.creation.default.replication.factor": `Missing required configuration "topic.creation.default.replication.factor"`,
		}},
		{"topic.creation.enable=false: the keys are ignored", true, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := e.config(false)
			cfg.DisableTopicCreation = tc.noCreate
			w, _ := e.start(cfg)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			res, err := w.Validate(ctx, props)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string][]string{}
			for _, c := range res.Configs {
				if strings.HasPrefix(c.Value.Name, "topic.creation.") && len(c.Value.Errors) > 0 {
					got[c.Value.Name] = c.Value.Errors
				}
			}
			for key, msg := range tc.want {
				if !strings.Contains(strings.Join(got[key], "\n"), msg) {
					t.Errorf("%s: errors %q, want one with %q (all: %v)", key, got[key], msg, got)
				}
			}
			if tc.want == nil {
				// topic.creation.groups is a common source key: its own
				// check (unique aliases) stays.
				delete(got, "topic.creation.groups")
				if len(got) > 0 {
					t.Errorf("errors with topic creation off: %v", got)
				}
			}
		})
	}
}

// A topic deleted under a running exactly-once task aborts its open
// transaction; the task then checks its topics again and fails naming the
// missing one, rather than aborting transaction after transaction.
func TestSourceFailsWhenItsTopicIsDeleted(t *testing.T) {
	e := newEnv(t)
	cfg := e.config(true)
	w, st := e.start(cfg)
	topic := kafkatest.UniqueName(t, "deleted")
	kafkatest.CreateTopic(t, topic)
	props := datagenProps(topic, 1, 1_000_000)
	props["max.interval"] = "1"
	// Records to a deleted topic fail when their delivery times out,
	// transaction.timeout.ms (librdkafka's message.timeout.ms follows it).
	props["producer.override.transaction.timeout.ms"] = "10000"
	name := kafkatest.UniqueName(t, "c")
	e.run(w, name, props)
	kafkatest.Eventually(t, time.Minute, func() (bool, string) {
		n := metricSum(t, cfg, "connectd_source_records_written_total", map[string]string{"connector": name})
		return n > 0, "nothing written yet"
	})
	kafkatest.DeleteTopics(t, topic)
	ev := st.waitFor(t, name+"-0", worker.StateFailed, 2*time.Minute)
	if !strings.Contains(ev.trace, "topic "+topic+" does not exist") {
		t.Errorf("trace does not say topic %s is missing: %s", topic, ev.trace)
	}
}

// TestSourceRecordWithOverlongTopicFails: a connector whose records name a
// topic longer than Kafka allows (librdkafka cannot even open a handle for
// one over 512 bytes, and confluent-kafka-go panics on it) fails its task
// with a trace saying why, and the worker never panics.
func TestSourceRecordWithOverlongTopicFails(t *testing.T) {
	for _, eos := range []bool{true, false} {
		t.Run(fmt.Sprintf("exactly-once=%v", eos), func(t *testing.T) {
			e := newEnv(t)
			cfg := e.config(eos)
			w, st := e.start(cfg)
			props := datagenProps(strings.Repeat("t", 600), 1, 1000)
			props["topic.creation.default.replication.factor"] = "1"
			props["topic.creation.default.partitions"] = "1"
			name := kafkatest.UniqueName(t, "c")
			e.run(w, name, props)
			ev := st.waitFor(t, name+"-0", worker.StateFailed, 30*time.Second)
			if strings.Contains(ev.trace, "panicked") || !strings.Contains(ev.trace, "Invalid topic") && !strings.Contains(ev.trace, "249") {
				t.Errorf("trace = %.300s; want the broker's refusal or the topic-name limit, no panic", ev.trace)
			}
		})
	}
}
