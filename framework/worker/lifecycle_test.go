package worker_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/connectd/connectd/framework/sdk"
	"github.com/connectd/connectd/framework/worker"
	"github.com/connectd/connectd/internal/kafkatest"
	"github.com/connectd/connectd/offsets"
)

func TestWorkerRefusesBadOffsetsTopic(t *testing.T) {
	e := newEnv(t)
	tests := []struct {
		name       string
		topic      string
		partitions int
		want       error
		fix        string
	}{
		{"missing", kafkatest.UniqueName(t, "none"), 0, offsets.ErrTopicMissing, "create it compacted"},
		{"not compacted", kafkatest.Topic(t, kafkatest.Partitions(5)), 0, offsets.ErrNotCompacted, "cleanup.policy=compact"},
		{"wrong partition count", e.offsets, 25, offsets.ErrPartitionCount, "offset.storage.partitions=5"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := e.config(true)
			cfg.OffsetsTopic, cfg.OffsetsPartitions = tt.topic, tt.partitions
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			w, err := worker.New(ctx, cfg, nil)
			if err == nil {
				_ = w.Close(ctx)
				t.Fatal("worker started on a bad offsets topic")
			}
			if !errors.Is(err, tt.want) || !strings.Contains(err.Error(), tt.fix) || !strings.Contains(err.Error(), tt.topic) {
				t.Fatalf("error %q; want %v naming the topic and %q", err, tt.want, tt.fix)
			}
		})
	}
}

// A connector's own offsets.storage.topic is checked when its tasks start:
// a missing or non-compacted one fails the task with what to change.
func TestConnectorOffsetsTopicChecked(t *testing.T) {
	e := newEnv(t)
	for _, tc := range []struct {
		name, topic, want string
	}{
		{"missing", kafkatest.UniqueName(t, "none"), "does not exist"},
		{"not compacted", kafkatest.Topic(t), "cleanup.policy=delete"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, st := e.start(e.config(true))
			props := datagenProps(kafkatest.Topic(t), 1, 10)
			props["offsets.storage.topic"] = tc.topic
			name := kafkatest.UniqueName(t, "c")
			e.run(w, name, props)
			ev := st.waitFor(t, name+"-0", worker.StateFailed, time.Minute)
			if !strings.Contains(ev.trace, tc.topic) || !strings.Contains(ev.trace, tc.want) {
				t.Errorf("trace does not name the topic and %q: %s", tc.want, ev.trace)
			}
		})
	}
	// A good per-connector topic is used instead of the worker's.
	own := kafkatest.Topic(t, kafkatest.Config("cleanup.policy", "compact"))
	w, st := e.start(e.config(true))
	topic := kafkatest.Topic(t)
	props := datagenProps(topic, 1, 100)
	props["offsets.storage.topic"] = own
	name := kafkatest.UniqueName(t, "c")
	e.run(w, name, props)
	st.waitFor(t, name+"-0", worker.StateRunning, time.Minute)
	readCommitted(t, topic, 100, time.Minute)
	kafkatest.Eventually(t, time.Minute, func() (bool, string) {
		got := readOffsets(t, e, own, name)
		return got == `{"task":0}={"seq":99}`, "offsets in the connector's topic: " + got
	})
	if got := readOffsets(t, e, e.offsets, name); got != "" {
		t.Errorf("offsets also went to the worker's topic: %s", got)
	}
}

func readOffsets(t *testing.T, e *env, topic, connector string) string {
	t.Helper()
	s, err := offsets.NewStore(offsets.Config{Topic: topic, Client: map[string]string{"bootstrap.servers": e.bootstrap}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	list, err := s.Read(ctx, connector)
	if err != nil {
		t.Fatal(err)
	}
	var parts []string
	for _, o := range list {
		parts = append(parts, string(o.Partition)+"="+string(o.Offset))
	}
	return strings.Join(parts, ";")
}

// TestSourceAtLeastOnce runs without exactly-once support: an idempotent
// producer and periodic offset flushes. Without crashes the output is
// exact, and a restarted worker resumes from the flushed offsets.
func TestSourceAtLeastOnce(t *testing.T) {
	e := newEnv(t)
	topic := kafkatest.Topic(t, kafkatest.Partitions(3))
	props := datagenProps(topic, 2, 3000)
	name := kafkatest.UniqueName(t, "c")
	cfg := e.config(false)
	w, st := e.start(cfg)
	e.run(w, name, props)
	st.waitFor(t, name+"-0", worker.StateRunning, time.Minute)
	msgs := readCommitted(t, topic, 6000, time.Minute)
	checkExactlyOnce(t, msgs, 2, 3000)
	kafkatest.Eventually(t, time.Minute, func() (bool, string) {
		got := readOffsets(t, e, e.offsets, name)
		return got == `{"task":0}={"seq":5998};{"task":1}={"seq":5999}`, "flushed offsets: " + got
	})
	if v := metricSum(t, cfg, "connectd_source_records_written_total", map[string]string{"connector": name}); v != 6000 {
		t.Errorf("connectd_source_records_written_total = %v, want 6000", v)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_ = w.Close(ctx)

	// Restarted, the tasks find their offsets and have nothing left to do.
	w2, st2 := e.start(e.config(false))
	e.run(w2, name, props)
	st2.waitFor(t, name+"-1", worker.StateRunning, time.Minute)
	if msgs := kafkatest.ReadAll(t, topic, kafkatest.ReadCommitted, time.Second, time.Minute); len(msgs) != 6000 {
		t.Errorf("after a restart the topic holds %d records, want 6000", len(msgs))
	}
}

func TestPauseResumeSource(t *testing.T) {
	e := newEnv(t)
	topic := kafkatest.Topic(t)
	props := datagenProps(topic, 1, 1_000_000) // runs until stopped
	props["max.interval"] = "1"
	props["transaction.boundary"] = "interval"
	props["transaction.boundary.interval.ms"] = "100"
	name := kafkatest.UniqueName(t, "c")
	w, st := e.start(e.config(true))
	e.run(w, name, props)
	st.waitFor(t, name+"-0", worker.StateRunning, time.Minute)
	waitMore(t, topic, 0)

	ctx := context.Background()
	if err := w.SetTargetState(ctx, name, worker.TargetPaused); err != nil {
		t.Fatal(err)
	}
	st.waitFor(t, name+"-0", worker.StatePaused, time.Minute)
	paused := len(committedNow(t, topic))
	// A paused task commits nothing more (a window, not a sleep-for-sync).
	time.Sleep(time.Second)
	if n := len(committedNow(t, topic)); n != paused {
		t.Fatalf("paused task committed %d more records", n-paused)
	}
	if err := w.SetTargetState(ctx, name, worker.TargetStarted); err != nil {
		t.Fatal(err)
	}
	waitMore(t, topic, paused+100)
	if s, _, _ := w.TaskStatus(worker.TaskID{Connector: name}); s != worker.StateRunning {
		t.Errorf("state after resume = %s", s)
	}
	if err := w.StopTasks(ctx, []worker.TaskID{{Connector: name}}); err != nil {
		t.Fatal(err)
	}
	n := checkPrefixOnce(t, kafkatest.ReadAll(t, topic, kafkatest.ReadCommitted, 500*time.Millisecond, time.Minute), 1)
	t.Logf("%d records exactly once across pause and resume (%d when paused)", n, paused)
}

// waitMore waits until topic holds more than n committed records.
func waitMore(t *testing.T, topic string, n int) {
	t.Helper()
	kafkatest.Eventually(t, time.Minute, func() (bool, string) {
		got := len(committedNow(t, topic))
		return got > n, fmt.Sprintf("%d committed records, waiting for more than %d", got, n)
	})
}

func TestPauseResumeSink(t *testing.T) {
	e := newEnv(t)
	const n = 2000
	topic := kafkatest.Topic(t)
	produceInput(t, topic, 1, n/2, jsonValue)
	file := t.TempDir() + "/applied.tsv"
	name := kafkatest.UniqueName(t, "s")
	w, st := e.start(e.config(true))
	e.run(w, name, sinkProps(topic, file, 1))
	waitCommittedTo(t, name, topic, 1, n/2, time.Minute)
	if err := w.SetTargetState(context.Background(), name, worker.TargetPaused); err != nil {
		t.Fatal(err)
	}
	st.waitFor(t, name+"-0", worker.StatePaused, time.Minute)
	produceInput(t, topic, 1, n/2, jsonValue) // offsets n/2 .. n-1
	time.Sleep(time.Second)                   // a window in which nothing may be consumed
	if c := committedSink(t, name)[sdk.TopicPartition{Topic: topic}]; c != n/2 {
		t.Fatalf("paused sink committed up to %d", c)
	}
	if err := w.SetTargetState(context.Background(), name, worker.TargetStarted); err != nil {
		t.Fatal(err)
	}
	waitCommittedTo(t, name, topic, 1, n, time.Minute)
	if dups := checkAllApplied(t, file, topic, 1, n); dups != 0 {
		t.Errorf("%d records applied twice", dups)
	}
}

// TestRestartAndAutoRestart: a task failing on a bad record is FAILED,
// then RESTARTING with the trace kept, again and again with backoff; with
// automatic restarts off it stays FAILED until RestartTask.
func TestRestartAndAutoRestart(t *testing.T) {
	e := newEnv(t)
	topic := kafkatest.Topic(t)
	props := dlqProps(sourceErrorProps(topic, 100, "string"), "", "none")
	name := kafkatest.UniqueName(t, "c")
	cfg := e.config(true)
	w, st := e.start(cfg)
	e.run(w, name, props)
	id := worker.TaskID{Connector: name}
	kafkatest.Eventually(t, time.Minute, func() (bool, string) {
		n := metricSum(t, cfg, "connectd_task_restarts_total", map[string]string{"connector": name})
		return n >= 3, fmt.Sprintf("%v automatic restarts", n)
	})
	ev := st.waitFor(t, id.String(), worker.StateRestarting, time.Second)
	if !strings.Contains(ev.trace, "TRANSFORMATION") {
		t.Errorf("RESTARTING does not keep the failure's trace: %q", ev.trace)
	}

	cfg2 := e.config(true)
	cfg2.DisableAutoRestart = true
	name2 := kafkatest.UniqueName(t, "c")
	w2, st2 := e.start(cfg2)
	e.run(w2, name2, props)
	id2 := worker.TaskID{Connector: name2}
	st2.waitFor(t, id2.String(), worker.StateFailed, time.Minute)
	if _, _, ok := st2.find(id2.String(), worker.StateRestarting, 0); ok {
		t.Fatalf("restarted although automatic restarts are off:%s", st2)
	}
	if err := w2.RestartTask(context.Background(), id2); err != nil {
		t.Fatal(err)
	}
	st2.waitFor(t, id2.String(), worker.StateRestarting, time.Minute)
	_, first, _ := st2.find(id2.String(), worker.StateFailed, 0)
	kafkatest.Eventually(t, time.Minute, func() (bool, string) {
		_, _, again := st2.find(id2.String(), worker.StateFailed, first+1)
		return again, "the requested restart did not run the task again:" + st2.String()
	})
}

func TestRestartTaskResumesExactlyOnce(t *testing.T) {
	e := newEnv(t)
	topic := kafkatest.Topic(t, kafkatest.Partitions(2))
	props := datagenProps(topic, 1, 1_000_000)
	props["max.interval"] = "1"
	props["transaction.boundary"] = "interval"
	props["transaction.boundary.interval.ms"] = "100"
	name := kafkatest.UniqueName(t, "c")
	w, st := e.start(e.config(true))
	e.run(w, name, props)
	id := worker.TaskID{Connector: name}
	st.waitFor(t, id.String(), worker.StateRunning, time.Minute)
	waitMore(t, topic, 100)
	if err := w.RestartTask(context.Background(), id); err != nil {
		t.Fatal(err)
	}
	st.waitFor(t, id.String(), worker.StateRestarting, time.Minute)
	_, at, _ := st.find(id.String(), worker.StateRestarting, 0)
	kafkatest.Eventually(t, time.Minute, func() (bool, string) {
		_, _, ok := st.find(id.String(), worker.StateRunning, at)
		return ok, "not RUNNING again after the restart:" + st.String()
	})
	waitMore(t, topic, len(committedNow(t, topic))+100)
	if err := w.StopTasks(context.Background(), []worker.TaskID{id}); err != nil {
		t.Fatal(err)
	}
	checkPrefixOnce(t, kafkatest.ReadAll(t, topic, kafkatest.ReadCommitted, 500*time.Millisecond, time.Minute), 1)
	if _, _, ok := st.find(id.String(), worker.StateFailed, 0); ok {
		t.Errorf("a requested restart reported FAILED:%s", st)
	}
}

// TestConnectorDefinedTransactions: with transaction.boundary=connector
// the task's CommitAfter ends transactions, and AbortAfter discards the
// open one.
func TestConnectorDefinedTransactions(t *testing.T) {
	e := newEnv(t)
	topic := kafkatest.Topic(t, kafkatest.Partitions(2))
	props := map[string]string{
		"connector.class": "TestSource", "tasks.max": "1", "topic": topic, "count": "1000", "poll.size": "30",
		"transaction.boundary": "connector", "commit.every": "100", "abort.at": "203",
		"key.converter":   "org.apache.kafka.connect.storage.StringConverter",
		"value.converter": "org.apache.kafka.connect.json.JsonConverter", "value.converter.schemas.enable": "false",
	}
	name := kafkatest.UniqueName(t, "c")
	cfg := e.config(true)
	w, st := e.start(cfg)
	e.run(w, name, props)
	st.waitFor(t, name+"-0", worker.StateRunning, time.Minute)
	// 200..203 were aborted with their transaction; the rest committed.
	msgs := readCommitted(t, topic, 996, time.Minute)
	seen := map[int64]int{}
	for _, m := range msgs {
		var r seqRecord
		if err := json.Unmarshal(m.Value, &r); err != nil {
			t.Fatal(err)
		}
		seen[r.Seq]++
	}
	for seq := int64(0); seq < 1000; seq++ {
		want := 1
		if seq >= 200 && seq <= 203 {
			want = 0
		}
		if seen[seq] != want {
			t.Errorf("seq %d seen %d times, want %d", seq, seen[seq], want)
		}
	}
	if len(msgs) != 996 {
		t.Errorf("%d records, want 996", len(msgs))
	}
	// Ten commits of 100 records (the one holding the abort has 96).
	if v := metricSum(t, cfg, "connectd_source_transaction_records", map[string]string{"connector": name}); v != 10 {
		t.Errorf("%v transactions committed, want 10", v)
	}
}

// TestFenceZombies: fencing a connector's transactional ids (what the
// herder does before a new generation of tasks) stops a running task.
func TestFenceZombies(t *testing.T) {
	e := newEnv(t)
	topic := kafkatest.Topic(t)
	props := datagenProps(topic, 1, 100_000)
	props["max.interval"] = "1"
	name := kafkatest.UniqueName(t, "c")
	w, st := e.start(e.config(true))
	e.run(w, name, props)
	st.waitFor(t, name+"-0", worker.StateRunning, time.Minute)
	other, _ := e.start(e.config(true))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := other.FenceZombies(ctx, name, 1); err != nil {
		t.Fatal(err)
	}
	ev := st.waitFor(t, name+"-0", worker.StateFailed, time.Minute)
	if !strings.Contains(ev.trace, "fenced") {
		t.Errorf("trace: %s", ev.trace)
	}
}

func TestOverridePolicy(t *testing.T) {
	e := newEnv(t)
	topic := kafkatest.Topic(t)
	props := datagenProps(topic, 1, 10)
	props["producer.override.linger.ms"] = "50"
	cfg := e.config(true)
	cfg.OverridePolicy = "None"
	w, st := e.start(cfg)

	res, err := w.Validate(context.Background(), props)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, c := range res.Configs {
		if c.Value.Name == "producer.override.linger.ms" && len(c.Value.Errors) > 0 {
			found = true
		}
	}
	if !found || res.ErrorCount == 0 {
		t.Errorf("Validate did not flag the forbidden override: %+v", res)
	}

	name := kafkatest.UniqueName(t, "c")
	e.run(w, name, props)
	ev := st.waitFor(t, name+"-0", worker.StateFailed, time.Minute)
	if !strings.Contains(ev.trace, "producer.override.linger.ms") || !strings.Contains(ev.trace, "None") {
		t.Errorf("trace: %s", ev.trace)
	}
	// The task never ran: a failed startup.
	if n := metricSum(t, cfg, "connectd_worker_task_startups_total", map[string]string{"result": "failure"}); n < 1 {
		t.Errorf("connectd_worker_task_startups_total{result=failure} = %v after a refused override", n)
	}

	// Overriding what the delivery guarantees rest on is refused under All.
	props["producer.override.transactional.id"] = "mine"
	delete(props, "producer.override.linger.ms")
	w2, st2 := e.start(e.config(true))
	name2 := kafkatest.UniqueName(t, "c")
	e.run(w2, name2, props)
	ev = st2.waitFor(t, name2+"-0", worker.StateFailed, time.Minute)
	if !strings.Contains(ev.trace, "cannot be overridden") {
		t.Errorf("trace: %s", ev.trace)
	}
}

func TestMetrics(t *testing.T) {
	e := newEnv(t)
	topic := kafkatest.Topic(t)
	props := datagenProps(topic, 1, 2000)
	name := kafkatest.UniqueName(t, "c")
	cfg := e.config(true)
	w, st := e.start(cfg)
	e.run(w, name, props)
	st.waitFor(t, name+"-0", worker.StateRunning, time.Minute)
	readCommitted(t, topic, 2000, time.Minute)
	l := map[string]string{"connector": name, "task": "0"}
	for _, c := range []struct {
		name  string
		extra map[string]string
		ok    func(float64) bool
	}{
		{"connectd_source_records_polled_total", nil, func(v float64) bool { return v == 2000 }},
		{"connectd_source_records_written_total", nil, func(v float64) bool { return v == 2000 }},
		{"connectd_source_transaction_records", nil, func(v float64) bool { return v >= 4 }}, // 500 per poll
		{"connectd_task_commit_duration_seconds", nil, func(v float64) bool { return v >= 4 }},
		{"connectd_task_offset_commits_total", map[string]string{"result": "success"}, func(v float64) bool { return v >= 4 }},
		{"connectd_task_state", map[string]string{"state": "RUNNING"}, func(v float64) bool { return v == 1 }},
		{"connectd_task_state", map[string]string{"state": "FAILED"}, func(v float64) bool { return v == 0 }},
		{"connectd_source_bytes_written_total", nil, func(v float64) bool { return v >= 2000 }},
		{"connectd_source_batch_records", nil, func(v float64) bool { return v >= 4 }},
		// Per connector, without a task label.
		{"connectd_connector_state", map[string]string{"task": "", "state": "RUNNING"}, func(v float64) bool { return v == 1 }},
		{"connectd_connector_state", map[string]string{"task": "", "state": "FAILED"}, func(v float64) bool { return v == 0 }},
		{"connectd_connector_info", map[string]string{"task": "", "type": "source"}, func(v float64) bool { return v == 1 }},
		{"connectd_plugin_process_up", map[string]string{"task": ""}, func(v float64) bool { return v == 1 }},
		// Worker-level: at least this connector and task started.
		{"connectd_worker_connector_startups_total", map[string]string{"connector": "", "task": "", "result": "success"}, func(v float64) bool { return v >= 1 }},
		{"connectd_worker_task_startups_total", map[string]string{"connector": "", "task": "", "result": "success"}, func(v float64) bool { return v >= 1 }},
	} {
		m := map[string]string{}
		for k, v := range l {
			m[k] = v
		}
		for k, v := range c.extra {
			m[k] = v
		}
		if v := metricSum(t, cfg, c.name, m); !c.ok(v) {
			t.Errorf("%s%v = %v", c.name, c.extra, v)
		}
	}
}
