package aerospike

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	as "github.com/aerospike/aerospike-client-go/v7"

	"github.com/connectd/connectd/connectors/aerospike/aerofake"
	"github.com/connectd/connectd/connectors/aerospike/aerotest"
	"github.com/connectd/connectd/internal/kafkatest"
)

// Bad input for the record-driven mapping and the list mode, through the
// real worker: with errors.tolerance=all each bad record is a dead letter
// whose message names the field and the reason, and the good records
// around it are appended exactly once.
func TestWorkerBadInputDeadLetters(t *testing.T) {
	bootstrap := kafkatest.Bootstrap(t)
	env := newWorkerEnv(t)
	srv := startServer(t, aerofake.Config{Namespaces: []aerofake.NamespaceConfig{{Name: "test", AllowTTL: true}}})
	needTTL(t, srv)
	topic := kafkatest.Topic(t, kafkatest.Partitions(1))
	dlq := kafkatest.Topic(t)
	offsetsTopic := kafkatest.UniqueName(t, "offsets")
	kafkatest.CreateTopic(t, offsetsTopic, kafkatest.Partitions(1), kafkatest.Config("cleanup.policy", "compact"))
	props := clusterProps(srv)
	maps.Copy(props, map[string]string{
		"name": kafkatest.UniqueName(t, "sink"), "connector.class": Class, "tasks.max": "1", "topics": topic,
		"key.converter":   "org.apache.kafka.connect.storage.StringConverter",
		"value.converter": "org.apache.kafka.connect.json.JsonConverter", "value.converter.schemas.enable": "false",
		"errors.tolerance": "all", "errors.deadletterqueue.topic.name": dlq,
		"errors.deadletterqueue.topic.replication.factor": "1", "errors.deadletterqueue.context.headers.enable": "true",
		KeyNamespace: "${value.ns}", KeySet: srv.Set("s"), KeyWriteMode: ModeListAppend,
		KeyTTLField: "ttl", KeyBinsExclude: "ns,ttl",
	})
	// The records name the cluster's namespace (test on the test server).
	ns := srv.Namespace
	produce(t, topic,
		msg(0, "k", fmt.Sprintf(`{"ns":%q,"ttl":60,"l":"a"}`, ns)),
		msg(0, "k", fmt.Sprintf(`{"ns":%q,"ttl":-5,"l":"bad-ttl"}`, ns)),
		msg(0, "k", fmt.Sprintf(`{"ns":%q,"ttl":"soon","l":"bad-ttl-type"}`, ns)),
		msg(0, "k", `{"ns":"nope","ttl":60,"l":"bad-ns"}`),
		msg(0, "k", `{"ttl":60,"l":"no-ns"}`),
		msg(0, "k", fmt.Sprintf(`{"ns":%q,"ttl":60,"l":null}`, ns)),
		msg(0, "k", fmt.Sprintf(`{"ns":%q,"ttl":60,"l":["b","c"]}`, ns)),
	)
	sink := env.startWorker(t, bootstrap, offsetsTopic, props)
	t.Cleanup(sink.stop)
	kafkatest.Eventually(t, time.Minute, func() (bool, string) {
		r := stored(t, srv, "s", "k")
		return r != nil && reflect.DeepEqual(r.Bins["l"], []any{"a", "b", "c"}), fmt.Sprintf("record %+v", r)
	})
	namespaces := "test"
	if srv.External() {
		namespaces = clusterNamespaces(t, srv)
	}
	wants := map[string]string{
		"1": `ttl field "ttl" is -5; it must be 0 (the namespace default) or 1..315360000 seconds, not negative`,
		"2": `ttl field "ttl" has type string; it must be an integer number of seconds`,
		"3": fmt.Sprintf(`namespace "nope" does not exist on the cluster (namespaces: %s) (from value field "ns")`, namespaces),
		"4": `value field "ns", which names the namespace, is missing`,
		"5": `field "l": null cannot be appended to a list`,
	}
	dead := kafkatest.ReadAll(t, dlq, kafkatest.ReadUncommitted, 500*time.Millisecond, 30*time.Second)
	if len(dead) != len(wants) {
		t.Fatalf("%d dead letters, want %d", len(dead), len(wants))
	}
	for _, m := range dead {
		h := map[string]string{}
		for _, x := range m.Headers {
			h[x.Key] = string(x.Value)
		}
		off := h["__connect.errors.offset"]
		if want, ok := wants[off]; !ok || h["__connect.errors.stage"] != "TASK_PUT" || !strings.Contains(h["__connect.errors.exception.message"], want) {
			t.Errorf("dead letter at offset %s: stage %q message %q, want %q", off, h["__connect.errors.stage"], h["__connect.errors.exception.message"], want)
		}
		delete(wants, off)
	}
}

// Under errors.tolerance=none the first bad record fails the task with
// the field and the reason in its trace; nothing of it is written.
func TestWorkerBadTTLFailsTaskUnderToleranceNone(t *testing.T) {
	bootstrap := kafkatest.Bootstrap(t)
	env := newWorkerEnv(t)
	srv := startServer(t, aerofake.Config{Namespaces: []aerofake.NamespaceConfig{{Name: "test", AllowTTL: true}}})
	needTTL(t, srv)
	topic := kafkatest.Topic(t, kafkatest.Partitions(1))
	offsetsTopic := kafkatest.UniqueName(t, "offsets")
	kafkatest.CreateTopic(t, offsetsTopic, kafkatest.Partitions(1), kafkatest.Config("cleanup.policy", "compact"))
	props := clusterProps(srv)
	maps.Copy(props, map[string]string{
		"name": kafkatest.UniqueName(t, "sink"), "connector.class": Class, "tasks.max": "1", "topics": topic,
		"key.converter":   "org.apache.kafka.connect.storage.StringConverter",
		"value.converter": "org.apache.kafka.connect.json.JsonConverter", "value.converter.schemas.enable": "false",
		"errors.tolerance": "none",
		KeySet:             srv.Set("s"), KeyWriteMode: ModeListAppend, KeyTTLField: "ttl",
	})
	produce(t, topic,
		msg(0, "a", `{"ttl":60,"l":"x"}`),
		msg(0, "b", `{"ttl":-1,"l":"y"}`),
	)
	sink := env.startWorker(t, bootstrap, offsetsTopic, props)
	kafkatest.Eventually(t, time.Minute, func() (bool, string) {
		l := sink.failed()
		return strings.Contains(l, "ttl field") && strings.Contains(l, "is -1; it must be 0"), fmt.Sprintf("FAILED line %q", l)
	})
	if stored(t, srv, "s", "b") != nil {
		t.Fatal("the record with the bad TTL was written")
	}
}

// needTTL skips t with the reason logged when the external cluster's
// namespace refuses writes with a TTL (nsup off, allow-ttl-without-nsup
// unset): the test writes records with TTLs. The test server's namespace
// is configured to allow them.
func needTTL(t *testing.T, srv *aerotest.Cluster) {
	t.Helper()
	if srv.External() && !srv.AllowsTTL(t) {
		t.Skipf("namespace %s of the external cluster refuses TTLs (nsup-period 0, allow-ttl-without-nsup false)", srv.Namespace)
	}
}

// clusterNamespaces is the external cluster's namespaces as the sink lists
// them in its errors: sorted, comma-separated.
func clusterNamespaces(t *testing.T, srv *aerotest.Cluster) string {
	t.Helper()
	nodes := srv.Client(t).GetNodes()
	if len(nodes) == 0 {
		t.Fatal("the Aerospike client knows no node")
	}
	info, err := nodes[0].RequestInfo(as.NewInfoPolicy(), "namespaces")
	if err != nil {
		t.Fatalf("info namespaces: %v", err)
	}
	list := strings.Split(strings.TrimSpace(info["namespaces"]), ";")
	slices.Sort(list)
	return strings.Join(list, ", ")
}
