package worker_test

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/connectd/connectd/framework/sdk"
	"github.com/connectd/connectd/framework/worker"
	"github.com/connectd/connectd/internal/kafkatest"
)

// contextHeaders are Kafka Connect's dead-letter context headers; every
// dead-letter record must carry all of them (source records have no
// consumed partition and offset, and carry source.* instead).
var contextHeaders = []string{
	"topic", "partition", "offset", "connector.name", "task.id", "stage",
	"class.name", "exception.class.name", "exception.message", "exception.stacktrace",
}

func headers(m *kafka.Message) map[string]string {
	out := map[string]string{}
	for _, h := range m.Headers {
		out[h.Key] = string(h.Value)
	}
	return out
}

func dlqProps(props map[string]string, dlq, tolerance string) map[string]string {
	props["errors.tolerance"] = tolerance
	props["errors.log.enable"] = "true"
	props["errors.log.include.messages"] = "true"
	if dlq != "" {
		props["errors.deadletterqueue.topic.name"] = dlq
		props["errors.deadletterqueue.topic.replication.factor"] = "1"
		props["errors.deadletterqueue.context.headers.enable"] = "true"
	}
	return props
}

// sinkInput is record i of the sink error tests: most are good; every
// 10th at 3 is malformed JSON (value converter fails), at 5 a JSON string
// (the ExtractField transform fails), at 7 rejected by the sink's Put.
func sinkInput(i int) []byte {
	switch i % 10 {
	case 3:
		return []byte(fmt.Sprintf(`{"doc": {"n": %d`, i))
	case 5:
		return []byte(fmt.Sprintf(`"just-a-string-%d"`, i))
	case 7:
		return []byte(fmt.Sprintf(`{"doc":{"n":%d,"reject":true}}`, i))
	}
	return []byte(fmt.Sprintf(`{"doc":{"n":%d}}`, i))
}

func sinkErrorProps(topic, file string) map[string]string {
	props := sinkProps(topic, file, 1)
	props["transforms"] = "doc"
	props["transforms.doc.type"] = "org.apache.kafka.connect.transforms.ExtractField$Value"
	props["transforms.doc.field"] = "doc"
	props["fail.value.contains"] = "reject"
	return props
}

func TestSinkDeadLetterQueue(t *testing.T) {
	e := newEnv(t)
	const parts, n = 2, 400
	topic := kafkatest.Topic(t, kafkatest.Partitions(parts))
	dlq := kafkatest.UniqueName(t, "dlq")
	t.Cleanup(func() { kafkatest.DeleteTopics(t, dlq) })
	produceInput(t, topic, parts, n, sinkInput)
	file := filepath.Join(t.TempDir(), "applied.tsv")
	cfg := e.config(true)
	w, st := e.start(cfg)
	name := kafkatest.UniqueName(t, "s")
	e.run(w, name, dlqProps(sinkErrorProps(topic, file), dlq, "all"))
	st.waitFor(t, name+"-0", worker.StateRunning, 30*time.Second)
	waitCommittedTo(t, name, topic, parts, n/parts, time.Minute)

	// Every bad record is in the dead-letter topic once, with its original
	// bytes and every context header, before its offset was committed
	// (the offsets are committed, so the records must be there).
	dead := kafkatest.ReadAll(t, dlq, kafkatest.ReadCommitted, 200*time.Millisecond, time.Minute)
	wantStage := map[int]sdk.Stage{3: sdk.StageValueConverter, 5: sdk.StageTransformation, 7: sdk.StageTaskPut}
	got := map[int]bool{}
	for _, m := range dead {
		h := headers(m)
		for _, k := range contextHeaders {
			if _, ok := h["__connect.errors."+k]; !ok {
				t.Fatalf("dead-letter record %s lacks header __connect.errors.%s; headers %v", m.TopicPartition, k, h)
			}
		}
		i, err := strconv.Atoi(strings.TrimPrefix(string(m.Key), "k"))
		if err != nil {
			t.Fatalf("dead-letter key %q", m.Key)
		}
		p, off := i%parts, i/parts
		if h["__connect.errors.topic"] != topic || h["__connect.errors.partition"] != strconv.Itoa(p) || h["__connect.errors.offset"] != strconv.Itoa(off) {
			t.Errorf("record %d: DLQ says %s/%s/%s, want %s/%d/%d", i, h["__connect.errors.topic"], h["__connect.errors.partition"], h["__connect.errors.offset"], topic, p, off)
		}
		if h["__connect.errors.stage"] != string(wantStage[i%10]) {
			t.Errorf("record %d: stage %s, want %s (message %q)", i, h["__connect.errors.stage"], wantStage[i%10], h["__connect.errors.exception.message"])
		}
		if h["__connect.errors.connector.name"] != name || h["__connect.errors.task.id"] != "0" || h["__connect.errors.exception.message"] == "" {
			t.Errorf("record %d: context %v", i, h)
		}
		if string(m.Value) != string(sinkInput(i)) {
			t.Errorf("record %d: DLQ value %q, want the original %q", i, m.Value, sinkInput(i))
		}
		if got[i] {
			t.Errorf("record %d dead-lettered twice", i)
		}
		got[i] = true
	}
	if len(got) != 3*n/10 {
		t.Errorf("%d records dead-lettered, want %d", len(got), 3*n/10)
	}
	for i := range n {
		if wantStage[i%10] != "" && !got[i] {
			t.Errorf("record %d (%s failure) is not in the dead-letter topic", i, wantStage[i%10])
		}
	}
	// Good records flowed on.
	app := applied(t, file)
	for i := range n {
		tp := sdk.TopicPartition{Topic: topic, Partition: int32(i % parts)}
		if wantStage[i%10] == "" && app[tp][int64(i/parts)] != 1 {
			t.Errorf("good record %d applied %d times", i, app[tp][int64(i/parts)])
		}
	}
	if v := metricSum(t, cfg, "connectd_task_dlq_records_total", map[string]string{"connector": name, "result": "success"}); v != float64(3*n/10) {
		t.Errorf("connectd_task_dlq_records_total = %v, want %d", v, 3*n/10)
	}
	if v := metricSum(t, cfg, "connectd_task_records_skipped_total", map[string]string{"connector": name, "stage": "TRANSFORMATION"}); v != float64(n/10) {
		t.Errorf("connectd_task_records_skipped_total{stage=TRANSFORMATION} = %v, want %d", v, n/10)
	} // Converter failures are counted under the converter's class, so a
	// dashboard can tell one converter's errors from another's.
	if v := metricSum(t, cfg, "connectd_task_record_errors_total", map[string]string{"connector": name,
		"stage": "VALUE_CONVERTER", "class": "org.apache.kafka.connect.json.JsonConverter"}); v != float64(n/10) {
		t.Errorf("connectd_task_record_errors_total{stage=VALUE_CONVERTER,class=JsonConverter} = %v, want %d", v, n/10)
	}
	if v := metricSum(t, cfg, "connectd_task_record_errors_total", map[string]string{"connector": name, "stage": "TRANSFORMATION", "class": ""}); v != float64(n/10) {
		t.Errorf("connectd_task_record_errors_total{stage=TRANSFORMATION,class=\"\"} = %v, want %d", v, n/10)
	}
	checkKindFamilies(t, cfg, name, "connectd_sink_", "connectd_source_")
}

// checkKindFamilies requires connector's tasks to have series of the
// families named own* and none of those named other*: each task kind
// exports only its own.
func checkKindFamilies(t *testing.T, cfg worker.Config, connector, own, other string) {
	t.Helper()
	fams, err := cfg.Metrics.(prometheus.Gatherer).Gather()
	if err != nil {
		t.Fatal(err)
	}
	owned := 0
	for _, f := range fams {
		for _, m := range f.GetMetric() {
			mine := false
			for _, l := range m.GetLabel() {
				mine = mine || (l.GetName() == "connector" && l.GetValue() == connector)
			}
			switch {
			case !mine:
			case strings.HasPrefix(f.GetName(), other):
				t.Errorf("%s has a %s series; its tasks must export only %s* families", connector, f.GetName(), own)
			case strings.HasPrefix(f.GetName(), own):
				owned++
			}
		}
	}
	if owned == 0 {
		t.Errorf("%s has no %s* series", connector, own)
	}
}

func TestSinkToleranceNoneFailsTask(t *testing.T) {
	for _, tc := range []struct {
		name  string
		bad   []byte
		stage sdk.Stage
	}{
		{"malformed JSON", []byte(`{"doc": {`), sdk.StageValueConverter},
		{"transform error", []byte(`"not-a-map"`), sdk.StageTransformation},
		{"put rejects", []byte(`{"doc":{"reject":1}}`), sdk.StageTaskPut},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			topic := kafkatest.Topic(t, kafkatest.Partitions(1))
			const badAt = 5
			produceInput(t, topic, 1, 20, func(i int) []byte {
				if i == badAt {
					return tc.bad
				}
				return []byte(fmt.Sprintf(`{"doc":{"n":%d}}`, i))
			})
			file := filepath.Join(t.TempDir(), "applied.tsv")
			w, st := e.start(e.config(true))
			name := kafkatest.UniqueName(t, "s")
			e.run(w, name, dlqProps(sinkErrorProps(topic, file), "", "none"))
			ev := st.waitFor(t, name+"-0", worker.StateFailed, time.Minute)
			where := fmt.Sprintf("topic %s, partition 0, offset %d", topic, badAt)
			t.Logf("trace: %s", ev.trace)
			if !strings.Contains(ev.trace, where) || !strings.Contains(ev.trace, string(tc.stage)) {
				t.Errorf("trace does not name %q and stage %s:\n%s", where, tc.stage, ev.trace)
			}
			// Nothing at or after the bad record is committed.
			if c := committedSink(t, name)[sdk.TopicPartition{Topic: topic}]; c > badAt {
				t.Errorf("committed offset %d passes the failed record at %d", c, badAt)
			}
		})
	}
}

// sourceErrorProps runs the test source with every 10th record bad.
func sourceErrorProps(topic string, count int, bad string) map[string]string {
	return map[string]string{
		"connector.class": "TestSource", "tasks.max": "1", "topic": topic, "count": strconv.Itoa(count),
		"bad.every": "10", "bad.value": bad, "huge.bytes": strconv.Itoa(1_500_000),
		"key.converter":   "org.apache.kafka.connect.storage.StringConverter",
		"value.converter": "org.apache.kafka.connect.json.JsonConverter", "value.converter.schemas.enable": "false",
		"transforms": "origin", "transforms.origin.type": "org.apache.kafka.connect.transforms.InsertField$Value",
		"transforms.origin.static.field": "origin", "transforms.origin.static.value": "test",
	}
}

// TestSourceDeadLetterQueue: in exactly-once mode failed source records
// go to the dead-letter topic inside the task's transactions, so the
// dead-letter topic is exactly-once too.
func TestSourceDeadLetterQueue(t *testing.T) {
	for _, tc := range []struct {
		bad   string
		stage sdk.Stage
		size  bool
	}{
		{"string", sdk.StageTransformation, false},
		{"unconvertible", sdk.StageValueConverter, false},
		{"huge", sdk.StageKafkaProduce, true},
	} {
		t.Run(tc.bad, func(t *testing.T) {
			e := newEnv(t)
			topic := kafkatest.Topic(t, kafkatest.Partitions(2))
			dlq := kafkatest.UniqueName(t, "dlq")
			t.Cleanup(func() { kafkatest.DeleteTopics(t, dlq) })
			const count = 500
			cfg := e.config(true)
			w, st := e.start(cfg)
			name := kafkatest.UniqueName(t, "c")
			e.run(w, name, dlqProps(sourceErrorProps(topic, count, tc.bad), dlq, "all"))
			st.waitFor(t, name+"-0", worker.StateRunning, 30*time.Second)
			msgs := readCommitted(t, topic, count-count/10, time.Minute)
			seen := map[int64]int{}
			for _, m := range msgs {
				var r seqRecord
				if err := json.Unmarshal(m.Value, &r); err != nil {
					t.Fatalf("output %q: %v", m.Value, err)
				}
				seen[r.Seq]++
			}
			dead := readCommitted(t, dlq, count/10, time.Minute)
			for _, m := range dead {
				h := headers(m)
				for _, k := range []string{"topic", "connector.name", "task.id", "stage", "class.name", "exception.class.name",
					"exception.message", "exception.stacktrace", "source.partition", "source.offset"} {
					if _, ok := h["__connect.errors."+k]; !ok {
						t.Fatalf("dead-letter record lacks __connect.errors.%s: %v", k, h)
					}
				}
				if h["__connect.errors.stage"] != string(tc.stage) {
					t.Errorf("stage %s, want %s", h["__connect.errors.stage"], tc.stage)
				}
				if tc.size && (!strings.Contains(h["__connect.errors.exception.message"], "bytes") || !strings.Contains(h["__connect.errors.exception.message"], "1500")) {
					t.Errorf("too-large record's message does not give the size: %q", h["__connect.errors.exception.message"])
				}
				var off seqRecord
				if err := json.Unmarshal([]byte(h["__connect.errors.source.offset"]), &off); err != nil {
					t.Fatal(err)
				}
				seen[off.Seq] += 100 // marks dead-lettered
			}
			if len(msgs) != count-count/10 || len(dead) != count/10 {
				t.Errorf("%d records and %d dead letters, want %d and %d", len(msgs), len(dead), count-count/10, count/10)
			}
			for seq := int64(0); seq < count; seq++ {
				want := 1
				if seq%10 == 9 {
					want = 100
				}
				if seen[seq] != want {
					t.Errorf("seq %d: seen %d (1 = written once, 100 = dead-lettered once)", seq, seen[seq])
				}
			}
			if tc.stage == sdk.StageValueConverter {
				if v := metricSum(t, cfg, "connectd_task_record_errors_total", map[string]string{"connector": name,
					"stage": "VALUE_CONVERTER", "class": "org.apache.kafka.connect.json.JsonConverter"}); v != count/10 {
					t.Errorf("connectd_task_record_errors_total{stage=VALUE_CONVERTER,class=JsonConverter} = %v, want %d", v, count/10)
				}
			}
			checkKindFamilies(t, cfg, name, "connectd_source_", "connectd_sink_")
		})
	}
}

func TestSourceToleranceNoneFailsTask(t *testing.T) {
	for _, tc := range []struct {
		bad, want string
	}{
		{"string", "TRANSFORMATION"},
		{"huge", "exceeds the producer's message.max.bytes"},
	} {
		t.Run(tc.bad, func(t *testing.T) {
			e := newEnv(t)
			topic := kafkatest.Topic(t)
			w, st := e.start(e.config(true))
			name := kafkatest.UniqueName(t, "c")
			e.run(w, name, dlqProps(sourceErrorProps(topic, 100, tc.bad), "", "none"))
			ev := st.waitFor(t, name+"-0", worker.StateFailed, time.Minute)
			t.Logf("trace: %s", ev.trace)
			if !strings.Contains(ev.trace, tc.want) || !strings.Contains(ev.trace, `source offset {"seq":9}`) {
				t.Errorf("trace does not name %q and the record's source offset:\n%s", tc.want, ev.trace)
			}
			// A record refused for its size says how large it is (the
			// test source's huge values are 1 500 000 bytes).
			if tc.bad == "huge" && !strings.Contains(ev.trace, "value 1500") {
				t.Errorf("trace does not give the record's size:\n%s", ev.trace)
			}
			// Nothing of the failed transaction is visible.
			if msgs := kafkatest.ReadAll(t, topic, kafkatest.ReadCommitted, 200*time.Millisecond, time.Minute); len(msgs) > 9 {
				t.Errorf("%d records committed; the first failure is seq 9", len(msgs))
			}
		})
	}
}

// TestSourceAbortedTransactionResumesFromCommitted: a record the broker
// refuses (larger than the topic's max.message.bytes, smaller than the
// producer's limit) fails its transaction asynchronously; the runner
// aborts, restarts the plugin task from the committed offsets, and after
// repeated aborts fails the task. What was committed before is there
// exactly once; nothing of the aborted attempts is.
func TestSourceAbortedTransactionResumesFromCommitted(t *testing.T) {
	e := newEnv(t)
	topic := kafkatest.Topic(t, kafkatest.Partitions(2), kafkatest.Config("max.message.bytes", "20000"))
	props := sourceErrorProps(topic, 200, "huge")
	props["poll.size"] = "10"
	props["bad.every"] = "50"
	props["huge.bytes"] = "50000"
	props["transaction.boundary"] = "poll"
	cfg := e.config(true)
	cfg.DisableAutoRestart = true
	w, st := e.start(cfg)
	name := kafkatest.UniqueName(t, "c")
	e.run(w, name, props)
	ev := st.waitFor(t, name+"-0", worker.StateFailed, 2*time.Minute)
	t.Logf("trace: %s", ev.trace)
	if !strings.Contains(ev.trace, "aborted in a row") || !strings.Contains(strings.ToLower(ev.trace), "too large") {
		t.Errorf("trace does not tell the repeated aborts and their cause: %s", ev.trace)
	}
	if v := metricSum(t, cfg, "connectd_task_offset_commits_total", map[string]string{"connector": name, "result": "failure"}); v < 5 {
		t.Errorf("%v failed commits, want at least 5 attempts", v)
	}
	msgs := kafkatest.ReadAll(t, topic, kafkatest.ReadCommitted, 500*time.Millisecond, time.Minute)
	checkExactlyOnce(t, msgs, 1, 40) // seqs 0..39: the four transactions before the bad one
	all := kafkatest.ReadAll(t, topic, kafkatest.ReadUncommitted, 500*time.Millisecond, time.Minute)
	if len(all) <= len(msgs) {
		t.Errorf("no aborted attempt left records behind (%d uncommitted vs %d committed): the retries did not happen", len(all), len(msgs))
	}
}

// TestSinkRetriableRecordFailures: a record the sink reports with a
// retriable error is put again (alone, after backoff) while
// errors.retry.timeout allows; with the default timeout 0 there is no
// retry and errors.tolerance decides.
func TestSinkRetriableRecordFailures(t *testing.T) {
	e := newEnv(t)
	topic := kafkatest.Topic(t)
	produceInput(t, topic, 1, 50, func(i int) []byte {
		if i == 7 {
			return []byte(`{"doc":{"n":7,"flaky":true}}`)
		}
		return []byte(fmt.Sprintf(`{"doc":{"n":%d}}`, i))
	})
	file := filepath.Join(t.TempDir(), "applied.tsv")
	cfg := e.config(true)
	w, st := e.start(cfg)
	props := sinkErrorProps(topic, file)
	props["flaky.value.contains"] = "flaky"
	props["errors.retry.timeout"] = "30000"
	props["errors.retry.delay.max.ms"] = "500"
	name := kafkatest.UniqueName(t, "s")
	e.run(w, name, props)
	waitCommittedTo(t, name, topic, 1, 50, time.Minute)
	if dups := checkAllApplied(t, file, topic, 1, 50); dups != 0 {
		t.Errorf("%d records applied twice", dups)
	}
	if v := metricSum(t, cfg, "connectd_task_retries_total", map[string]string{"connector": name, "stage": "TASK_PUT"}); v != 2 {
		t.Errorf("%v retries of the flaky record, want 2", v)
	}
	if _, _, failed := st.find(name+"-0", worker.StateFailed, 0); failed {
		t.Errorf("the task failed:%s", st)
	}

	// Without a retry timeout the first retriable failure is final.
	delete(props, "errors.retry.timeout")
	name2 := kafkatest.UniqueName(t, "s")
	props["file"] = filepath.Join(t.TempDir(), "applied2.tsv")
	e.run(w, name2, props)
	ev := st.waitFor(t, name2+"-0", worker.StateFailed, time.Minute)
	if !strings.Contains(ev.trace, "flaky") || !strings.Contains(ev.trace, "offset 7") {
		t.Errorf("trace: %s", ev.trace)
	}
}
