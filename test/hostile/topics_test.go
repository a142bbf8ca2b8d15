package hostile

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"
)

// garbage is one record written straight into an internal topic.
type garbage struct {
	what       string
	key, value []byte // nil key: no key; nil value: a tombstone
}

func b(s string) []byte { return []byte(s) }

// huge is a value just under the broker's default message size limit.
func huge(prefix string) []byte { return b(prefix + strings.Repeat("x", 900<<10)) }

// configGarbage is written into the config topic: every key prefix the
// worker reads with a value it cannot use, unknown keys, tombstones for
// connectors that never existed, huge and deeply nested values.
func configGarbage() []garbage {
	deep := "{\"properties\":" + strings.Repeat("[", 200000) + strings.Repeat("]", 200000) + "}"
	return []garbage{
		{"connector config not JSON", b("connector-hostile-ghost"), b("{not json")},
		{"connector config properties not an object", b("connector-hostile-ghost"), b(`{"properties":"all of them"}`)},
		{"connector config a JSON array", b("connector-hostile-ghost"), b(`[1,2,3]`)},
		{"connector config properties null", b("connector-hostile-ghost"), b(`{"properties":null}`)},
		{"connector config properties with non-string values", b("connector-hostile-ghost"), b(`{"properties":{"tasks.max":1,"x":{}}}`)},
		{"connector config nested 200000 deep", b("connector-hostile-deep"), b(deep)},
		{"connector config huge and not JSON", b("connector-hostile-huge"), huge("")},
		{"task config without a task number", b("task-hostile-ghost"), b(`{"properties":{}}`)},
		{"task config with a negative task number", b("task-hostile-ghost--3"), b(`{"properties":{}}`)},
		{"task config not JSON", b("task-hostile-ghost-0"), b("\x00\xff")},
		{"commit with a negative count", b("commit-hostile-ghost"), b(`{"tasks":-1}`)},
		{"commit with a string count", b("commit-hostile-ghost"), b(`{"tasks":"many"}`)},
		{"commit of 2^31-1 tasks", b("commit-hostile-ghost"), b(`{"tasks":2147483647}`)},
		{"commit of 2^63-1 tasks", b("commit-hostile-ghost"), b(`{"tasks":9223372036854775807}`)},
		{"commit count out of range", b("commit-hostile-ghost"), b(`{"tasks":1e400}`)},
		{"target state unknown", b("target-state-hostile-ghost"), b(`{"state":"EXPLODED"}`)},
		{"target state not JSON", b("target-state-hostile-victim"), b("{not json")},
		{"fencing count a string", b("tasks-fencing-hostile-ghost"), b(`{"task-count":"x"}`)},
		{"restart request an array", b("restart-connector-hostile-ghost"), b(`[]`)},
		{"logger level unknown", b("logger-cluster-connectd"), b(`{"level":"LOUD"}`)},
		{"logger without a namespace", b("logger-cluster-"), b(`{"level":"INFO"}`)},
		{"session key not JSON", b("session-key"), b("{not json")},
		{"assignment not JSON", b("connectd-assignment"), b("{not json")},
		{"assignment with a string generation", b("connectd-assignment"), b(`{"version":1,"generation":"x"}`)},
		{"unknown key", b("zzz-unknown"), b(`{}`)},
		{"unknown key, huge value", b("zzz-huge"), huge("")},
		{"connector config for the empty name", b("connector-"), b(`{"properties":{"connector.class":"DatagenSource"}}`)},
		{"connector config for a name with a control character", b("connector-a\x07b"), b(`{"properties":{"connector.class":"DatagenSource"}}`)},
		{"connector config for ..", b("connector-.."), b(`{"properties":{"connector.class":"DatagenSource"}}`)},
		{"target state of a connector that does not exist", b("target-state-hostile-ghost"), b(`{"state":"PAUSED"}`)},
		{"restart request of a connector that does not exist", b("restart-connector-hostile-ghost"), b(`{"include-tasks":true,"only-failed":false}`)},
		{"fencing of a connector that does not exist", b("tasks-fencing-hostile-ghost"), b(`{"task-count":2147483647}`)},
		{"task config of a connector that does not exist", b("task-hostile-ghost-3"), b(`{"properties":{"task.class":"x"}}`)},
		{"binary key", b("\xff\xfe\x00"), b(`{}`)},
		{"empty key", b(""), b(`{}`)},
		{"no key", nil, b(`{}`)},
		{"tombstone of a connector that never existed", b("connector-hostile-nobody"), nil},
		{"tombstone of a task that never existed", b("task-hostile-nobody-0"), nil},
		{"tombstone of a commit that never existed", b("commit-hostile-nobody"), nil},
		{"tombstone of a target state that never existed", b("target-state-hostile-nobody"), nil},
		{"tombstone of an unknown key", b("zzz-unknown-tombstone"), nil},
	}
}

// statusGarbage is written into the status topic, including an unreadable
// status for the running connector.
func statusGarbage(victim string) []garbage {
	return []garbage{
		{"the running connector's status not JSON", b("status-connector-" + victim), b("{not json")},
		{"the running connector's task status without a state", b("status-task-" + victim + "-0"), b(`{"worker_id":"x"}`)},
		{"connector status with a numeric state", b("status-connector-hostile-ghost"), b(`{"state":12}`)},
		{"task status without a task number", b("status-task-hostile-ghost"), b(`{"state":"RUNNING"}`)},
		{"task status an array", b("status-task-hostile-ghost-0"), b(`[]`)},
		{"topic status without a connector", b("status-topic-garbage"), b(`{}`)},
		{"topic status not JSON", b("status-topic-t:connector-hostile-ghost"), b("{not json")},
		{"unknown key", b("zzz-unknown"), b(`{}`)},
		{"unknown key, huge value", b("zzz-huge"), huge("")},
		{"empty key", b(""), b("x")},
		{"no key", nil, b(`{}`)},
		{"tombstone of a connector status that never existed", b("status-connector-hostile-nobody"), nil},
		{"tombstone of a task status that never existed", b("status-task-hostile-nobody-1"), nil},
	}
}

// offsetGarbage is written into the offsets topic.
func offsetGarbage(victim string) []garbage {
	return []garbage{
		{"key not JSON", b("{not json"), b(`{"seq":1}`)},
		{"key an empty array", b(`[]`), b(`{"seq":1}`)},
		{"key without a partition", b(`["` + victim + `"]`), b(`{"seq":1}`)},
		{"key with numbers", b(`[1,2]`), b(`{"seq":1}`)},
		{"key a string", b(`"` + victim + `"`), b(`{"seq":1}`)},
		{"key with an extra element", b(`["` + victim + `",{"task":0},"extra"]`), b(`{"seq":1}`)},
		{"value not JSON", b(`["hostile-ghost",{"a":1}]`), b("{not json")},
		{"value not JSON for the running connector", b(`["` + victim + `",{"hostile":true}]`), b("\x00\xff")},
		{"value with a number past float64 for the running connector", b(`["` + victim + `",{"hostile":"range"}]`), b(`{"seq":1e400}`)},
		{"huge value", b(`["hostile-ghost",{"a":2}]`), huge(`{"x":"`)},
		{"tombstone of an unknown partition", b(`["hostile-nobody",{"a":1}]`), nil},
		{"tombstone with a garbage key", b("{not json"), nil},
		{"empty key", b(""), b(`{}`)},
		{"no key", nil, b(`{}`)},
	}
}

// produce writes records into topic one at a time (the broker refuses a
// whole batch for one bad record) and logs the ones the broker refuses:
// compacted topics take no record without a key, which is the broker's
// guard, not the worker's.
func produce(t *testing.T, bootstrap, topic string, partitions int, recs []garbage) {
	t.Helper()
	p, err := kafka.NewProducer(&kafka.ConfigMap{"bootstrap.servers": bootstrap, "message.max.bytes": 2 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	done := make(chan kafka.Event, 1)
	for i, r := range recs {
		tp := topic
		m := &kafka.Message{TopicPartition: kafka.TopicPartition{Topic: &tp, Partition: int32(i % partitions)}, Key: r.key, Value: r.value}
		if err := p.Produce(m, done); err != nil {
			t.Fatalf("produce %q into %s: %v", r.what, topic, err)
		}
		select {
		case ev := <-done:
			if err := ev.(*kafka.Message).TopicPartition.Error; err != nil {
				t.Logf("%s: the broker refused %q: %v", topic, r.what, err)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("%s: %q not acknowledged within 30 s", topic, r.what)
		}
	}
}

// TestGarbageInInternalTopics writes garbage into the config, status and
// offsets topics of a running worker: the worker must log and skip it,
// keep its connector, keep serving and still run a new connector; a worker
// started afterwards, replaying the topics, must do the same.
func TestGarbageInInternalTopics(t *testing.T) {
	ctx := context.Background()
	g := newGroup(t)
	w := g.start()
	const victim = "hostile-victim"
	createWhenReady(t, w.url, victim, g.topic)
	want, err := readState(ctx, w.url)
	if err != nil {
		t.Fatal(err)
	}

	produce(t, g.bootstrap, g.configTopic(), 1, configGarbage())
	produce(t, g.bootstrap, g.statusTopic(), 2, statusGarbage(victim))
	produce(t, g.bootstrap, g.offsetTopic(), 3, offsetGarbage(victim))

	// The offsets are read when asked for; the config and status topics
	// are tailed all the time.
	if res := retrying(ctx, w.url, "GET", "/connectors/"+victim+"/offsets", nil); res.code != http.StatusOK {
		t.Errorf("offsets of %s after the garbage: %s", victim, res)
	}
	for _, warning := range []string{
		"skipping malformed config record",
		"skipping config record with an unknown key",
		"skipping malformed status record",
		"skipping status record with an unknown key",
		"skipping offsets record with a malformed key",
		"skipping offsets record with a malformed value",
	} {
		eventually(t, 30*time.Second, "the worker logs "+warning, func() (bool, string) {
			g.alive(w)
			return strings.Contains(logText(w.log), warning), ""
		})
	}

	check := func(w *worker, after string) {
		t.Helper()
		g.alive(w)
		eventually(t, 30*time.Second, "GET /health 200 "+after, func() (bool, string) {
			res := do(ctx, w.url, "GET", "/health", nil, "")
			return res.code == http.StatusOK, res.String()
		})
		got, err := readState(ctx, w.url)
		if err != nil {
			t.Fatalf("%s: %v", after, err)
		}
		if !got.equal(want) {
			t.Fatalf("%s the connectors are %q, want %q unchanged: %v", after, got.names(), want.names(), got)
		}
		waitRunning(t, w.url, victim, 1)
		healthyAfter(t, w.url, g.topic, "hostile-after-"+strings.ReplaceAll(after, " ", "-"))
		g.alive(w)
	}
	check(w, "garbage")

	// A worker started now reads all of it from the beginning.
	g.stop(w)
	w2 := g.start()
	check(w2, "replay")
	if !strings.Contains(logText(w2.log), "skipping malformed config record") {
		t.Errorf("the restarted worker did not log the malformed config records it replayed")
	}
	var st status
	res := do(ctx, w2.url, "GET", "/connectors/"+victim+"/status", nil, "")
	if err := json.Unmarshal(res.body, &st); err != nil || st.Connector.State != "RUNNING" {
		t.Errorf("%s after the replay: %s", victim, res)
	}
}

// logText is a worker's whole log (the warnings come early, before what
// tail keeps).
func logText(path string) string {
	data, _ := os.ReadFile(path)
	return string(data)
}

// around returns the first line of log containing needle and the n lines
// after it (a panic's stack), where the log's tail would show later noise.
func around(log, needle string, n int) string {
	lines := strings.Split(log, "\n")
	for i, l := range lines {
		if strings.Contains(l, needle) {
			return strings.Join(lines[i:min(len(lines), i+1+n)], "\n")
		}
	}
	return ""
}
