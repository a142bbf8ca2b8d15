package quickstart_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"
	"github.com/confluentinc/confluent-kafka-go/v2/schemaregistry/serde"
	"github.com/confluentinc/confluent-kafka-go/v2/schemaregistry/serde/avrov2"

	"github.com/connectd/connectd/connectors/datagen"
	"github.com/connectd/connectd/internal/kafkatest"
	"github.com/connectd/connectd/internal/registrytest"
)

// counterValue is the Avro record DatagenSource's struct counter becomes
// (connectd.datagen.Counter), as confluent-kafka-go's deserializer reads it.
type counterValue struct {
	Key       string    `avro:"key"`
	Amount    int64     `avro:"amount"`
	Seq       int64     `avro:"seq"`
	CreatedAt time.Time `avro:"created_at"`
	Price     *big.Rat  `avro:"price"`
}

// The quickstart with --format avro, end to end on the real broker and
// registry: DatagenSource writes Avro through AvroConverter,
// KafkaReplicationSource copies the bytes, AerospikeSink reads them with
// AvroConverter and sums them into the Aerospike test server. The script's
// own check must pass (every counter equals its expected total, each
// record replicated and applied once); then the test reads both topics
// itself: exactly the records the seed predicts, each once, every value in
// the Confluent wire format under a schema id the registry knows, decoded
// by confluent-kafka-go's avrov2 deserializer field for field, and the
// replica's values byte for byte the source's.
func TestOnceAvroEndToEnd(t *testing.T) {
	dir := cleanClone(t)
	bootstrap := kafkatest.Bootstrap(t)
	url := registrytest.URL(t)
	const (
		tasks      = 2 // quickstart/connectors/avro/orders-datagen.json
		iterations = 500
	)
	env := []string{"KAFKA_BOOTSTRAP=" + bootstrap, "SCHEMA_REGISTRY_URL=" + url}

	start := time.Now()
	r := quickstart(t, dir, 10*time.Minute, env, "--once", "--format", "avro", "--records", "500",
		"--rest-port", "0", "--no-prometheus", "--keep-topics", "--timeout", "240")
	m := regexp.MustCompile(`(?m)^QUICKSTART_ORDERS_TOPIC=(\S+)$`).FindStringSubmatch(r.stdout)
	if m != nil {
		registerCleanup(t, dir, bootstrap, url, m[1])
	}
	if r.code != 0 {
		t.Fatalf("make quickstart --once --format avro failed\n%s", r)
	}
	t.Logf("the Avro quickstart took %s\n%s", time.Since(start).Round(time.Second), r.stdout)
	for _, want := range []string{
		"using the registry at SCHEMA_REGISTRY_URL=" + url,
		"deploying the pipeline: DatagenSource → KafkaReplicationSource → AerospikeSink",
		"1,000 records produced, replicated once each, applied once each; all 20 counters equal their expected totals",
		"quickstart: verified",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("output lacks %q\n%s", want, r)
		}
	}
	// Counted by the watcher from state that outlives the worker: the
	// sink's count bins and its stats record.
	for _, re := range []string{`(?m)^\s*applied\s+1,000 records to Aerospike`, `(?m)^\s*duplicates\s+0 redelivered`} {
		if !regexp.MustCompile(re).MatchString(r.stdout) {
			t.Errorf("output does not match %s\n%s", re, r)
		}
	}
	if m == nil {
		t.Fatalf("the script did not print QUICKSTART_ORDERS_TOPIC\n%s", r)
	}
	topic := m[1]

	orders := kafkatest.ReadAll(t, topic, kafkatest.ReadCommitted, 3*time.Second, time.Minute)
	replica := kafkatest.ReadAll(t, topic+".replica", kafkatest.ReadCommitted, 3*time.Second, time.Minute)
	if len(orders) != tasks*iterations || len(replica) != tasks*iterations {
		t.Fatalf("%d records in %s and %d in its replica, want %d each", len(orders), topic, len(replica), tasks*iterations)
	}

	checkAvroValues(t, topic, orders, tasks, iterations)
	if a, b := sortedValues(orders), sortedValues(replica); !equalValues(a, b) {
		t.Errorf("the replica's values are not the source's bytes (schema id and all)")
	}
}

// checkAvroValues checks every value of the generator's topic: the magic
// byte and a schema id the registry holds under the topic's subject (with
// the logical types), the avrov2 deserializer's reading field for field
// against the generator's seed, and each sequence number exactly once.
func checkAvroValues(t *testing.T, topic string, orders []*kafka.Message, tasks int, iterations int64) {
	t.Helper()
	const seed, cardinality = 42, 20 // quickstart/connectors/avro/orders-datagen.json
	client := registrytest.Client(t)
	de, err := avrov2.NewDeserializer(client, serde.ValueSerde, avrov2.NewDeserializerConfig())
	if err != nil {
		t.Fatal(err)
	}
	subject := topic + "-value"
	ids := map[uint32]bool{}
	seen := map[int64]bool{}
	for _, msg := range orders {
		b := msg.Value
		if len(b) < 5 || b[0] != 0 {
			t.Fatalf("value %x does not start with the magic byte 0 and a schema id", b[:min(len(b), 8)])
		}
		id := binary.BigEndian.Uint32(b[1:5])
		if !ids[id] {
			info, err := client.GetBySubjectAndID(subject, int(id))
			if err != nil {
				t.Fatalf("schema id %d of %s: the registry does not know it: %v", id, subject, err)
			}
			for _, want := range []string{"connectd.datagen.Counter", "timestamp-millis", "decimal"} {
				if !strings.Contains(info.Schema, want) {
					t.Errorf("registered schema %d lacks %s: %s", id, want, info.Schema)
				}
			}
			ids[id] = true
		}
		var v counterValue
		if err := de.DeserializeInto(topic, b, &v); err != nil {
			t.Fatalf("avrov2 deserializer: %v", err)
		}
		want := datagen.CounterAt(seed, cardinality, v.Seq)
		wantPrice := want.Price().Rat()
		if string(msg.Key) != want.Key || v.Key != want.Key || v.Amount != want.Amount ||
			!v.CreatedAt.Equal(want.CreatedAt()) || v.Price == nil || v.Price.Cmp(wantPrice) != 0 {
			t.Fatalf("seq %d: key %q value %+v, want %+v created_at %s price %s",
				v.Seq, msg.Key, v, want, want.CreatedAt(), wantPrice.FloatString(2))
		}
		if seen[v.Seq] {
			t.Fatalf("seq %d is in %s twice", v.Seq, topic)
		}
		seen[v.Seq] = true
	}
	for i := range tasks {
		for _, seq := range datagen.TaskSeqs(i, tasks, iterations) {
			if !seen[seq] {
				t.Fatalf("seq %d of task %d is missing from %s", seq, i, topic)
			}
		}
	}
	if len(ids) != 1 {
		t.Errorf("values carry %d schema ids, want one: every record has the same schema", len(ids))
	}
}

func sortedValues(msgs []*kafka.Message) [][]byte {
	out := make([][]byte, len(msgs))
	for i, m := range msgs {
		out[i] = m.Value
	}
	sort.Slice(out, func(i, j int) bool { return bytes.Compare(out[i], out[j]) < 0 })
	return out
}

func equalValues(a, b [][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !bytes.Equal(a[i], b[i]) {
			return false
		}
	}
	return true
}

// registerCleanup removes what --keep-topics left: the run's topics,
// groups and worker topics (through the clone's own cleanup command) and
// its subject in the registry.
func registerCleanup(t *testing.T, dir, bootstrap, url, topic string) {
	t.Helper()
	runID := strings.TrimSuffix(strings.TrimPrefix(topic, "quickstart-"), "-orders")
	client := registrytest.Client(t)
	t.Cleanup(func() {
		subject := topic + "-value"
		if _, err := client.DeleteSubject(subject, false); err == nil {
			_, _ = client.DeleteSubject(subject, true)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, filepath.Join(dir, "bin", "connectd-dev"), "quickstart", "cleanup",
			"--source", "quickstart/connectors/avro/orders-datagen.json",
			"--replication", "quickstart/connectors/orders-replication.json",
			"--sink", "quickstart/connectors/avro/orders-aerospike.json",
			"--bootstrap", bootstrap, "--worker-config", "quickstart/worker.properties")
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "KAFKA_BOOTSTRAP="+bootstrap, "SCHEMA_REGISTRY_URL="+url,
			"QUICKSTART_GROUP=connectd-quickstart-"+runID, "QUICKSTART_ORDERS_TOPIC="+topic,
			"QUICKSTART_ITERATIONS=1", "QUICKSTART_MAX_INTERVAL_MS=0", "QUICKSTART_REST_PORT=0", "AEROSPIKE_ADDR=127.0.0.1:1")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("quickstart cleanup: %v\n%s", err, out)
		}
	})
}

// --format avro's bad input: an unknown format, and no registry to use
// with no Java to start one, each a one-line message before any build.
func TestAvroBadInputIsOneLine(t *testing.T) {
	dir := cleanClone(t)
	for _, tc := range []struct {
		name string
		env  func(t *testing.T) []string
		args []string
		want []string
	}{
		{"unknown format", func(*testing.T) []string { return []string{"KAFKA_BOOTSTRAP=127.0.0.1:1"} },
			[]string{"--once", "--format", "xml"}, []string{"--format must be json or avro", "xml"}},
		{"no registry and no Java", func(t *testing.T) []string {
			// An empty run directory: no registry.sh registry to reuse.
			return []string{"PATH=" + pathWithout(t, "java"), "KAFKA_BOOTSTRAP=127.0.0.1:1",
				"SCHEMA_REGISTRY_URL=", "CONNECTD_RUN_DIR=" + t.TempDir()}
		}, []string{"--once", "--format", "avro"}, []string{"Java is not installed", "--format avro", "SCHEMA_REGISTRY_URL"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := quickstart(t, dir, time.Minute, tc.env(t), tc.args...)
			oneLine(t, r, tc.want...)
			if strings.Contains(r.stdout, "building") {
				t.Errorf("the quickstart built before refusing:\n%s", r)
			}
			assertNothingLeft(t, dir)
		})
	}
}

// Without SCHEMA_REGISTRY_URL and without a registry scripts/registry.sh
// runs, --format avro starts one (scripts/registry.sh, in its own run
// directory), runs the pipeline through it and stops it again: no
// registry process and no registry.env are left.
func TestAvroStartsAndStopsItsOwnRegistry(t *testing.T) {
	dir := cleanClone(t)
	bootstrap := kafkatest.Bootstrap(t)
	registrytest.URL(t) // the registry's build and Java are on this machine
	runDir := t.TempDir()
	env := []string{"KAFKA_BOOTSTRAP=" + bootstrap, "SCHEMA_REGISTRY_URL=", "CONNECTD_RUN_DIR=" + runDir}
	r := quickstart(t, dir, 10*time.Minute, env, "--once", "--format", "avro", "--records", "200",
		"--rest-port", "0", "--no-prometheus", "--timeout", "240")
	t.Cleanup(func() {
		// Should the script have failed to stop it: stop it here, by its run directory.
		down := exec.Command(filepath.Join(dir, "scripts", "registry.sh"), "down")
		down.Env = append(os.Environ(), "CONNECTD_RUN_DIR="+runDir)
		_ = down.Run()
	})
	if r.code != 0 {
		t.Fatalf("make quickstart --once --format avro failed\n%s", r)
	}
	for _, want := range []string{
		"starting one with scripts/registry.sh",
		"400 records produced, replicated once each, applied once each; all 20 counters equal their expected totals",
		"quickstart: verified",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("output lacks %q\n%s", want, r)
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for left := processesUnder(runDir); len(left) > 0; left = processesUnder(runDir) {
		if time.Now().After(deadline) {
			t.Fatalf("the registry the quickstart started is still running:\n%s", strings.Join(left, "\n"))
		}
		time.Sleep(200 * time.Millisecond)
	}
	if exists(filepath.Join(runDir, "registry.env")) {
		t.Errorf("registry.env is left in the run directory")
	}
	assertNothingLeft(t, dir)
}
