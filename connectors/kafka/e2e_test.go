package kafka

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	ckafka "github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"github.com/connectd/connectd/internal/kafkatest"
	"github.com/connectd/connectd/internal/proctest"
)

const testWorkerPkg = "github.com/connectd/connectd/framework/worker/internal/testworker"

// e2eEnv is a real worker process (the worker's test binary) running
// KafkaReplicationSource from an installed plugin against the test broker.
type e2eEnv struct {
	t         *testing.T
	bootstrap string
	worker    string // testworker binary
	pluginDir string
	group     string
	offsets   string
	config    string // connector properties (JSON file)
	name      string
}

func newE2E(t *testing.T, props map[string]string) *e2eEnv {
	t.Helper()
	e := &e2eEnv{t: t, bootstrap: kafkatest.Bootstrap(t), name: "repl", group: kafkatest.UniqueName(t, "g")}
	b := builder
	e.worker = b.Build(t, testWorkerPkg)
	e.pluginDir = t.TempDir()
	if err := b.InstallAll(t, e.pluginDir, pluginPkg); err != nil {
		t.Fatal(err)
	}
	e.offsets = kafkatest.Topic(t, kafkatest.Partitions(5), kafkatest.Config("cleanup.policy", "compact"))
	raw, _ := json.Marshal(props)
	e.config = filepath.Join(t.TempDir(), "connector.json")
	if err := os.WriteFile(e.config, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	return e
}

// workerProc is one running worker process.
type workerProc = proctest.Proc

func (e *e2eEnv) start() *workerProc {
	e.t.Helper()
	return proctest.Start(e.t, exec.Command(e.worker, "-bootstrap", e.bootstrap, "-group", e.group, "-offsets-topic", e.offsets,
		"-plugins", e.pluginDir, "-connector", e.name, "-config", e.config, "-eos=true",
		"-backoff", "200ms", "-shutdown-timeout", "10s"))
}

// e2eRecord builds record seq of source partition p: an identity that
// survives null keys (header "id"), values of varied size with null ones,
// headers with null, empty and repeated keys, and explicit timestamps.
func e2eRecord(topic string, base time.Time, p int32, seq int) *ckafka.Message {
	id := make([]byte, 12)
	binary.BigEndian.PutUint32(id, uint32(p))
	binary.BigEndian.PutUint64(id[4:], uint64(seq))
	m := &ckafka.Message{
		TopicPartition: ckafka.TopicPartition{Topic: &topic, Partition: p},
		Timestamp:      base.Add(time.Duration(int64(seq)*7+int64(p)) * time.Millisecond),
		Headers:        []ckafka.Header{{Key: "id", Value: id}},
	}
	if seq%7 != 0 {
		m.Key = id
	}
	if seq%11 != 0 {
		m.Value = bytes.Repeat([]byte{byte(seq), byte(p), 0xff}, (seq*31)%100)
	}
	switch seq % 5 {
	case 1:
		m.Headers = append(m.Headers, ckafka.Header{Key: "null", Value: nil})
	case 2:
		m.Headers = append(m.Headers, ckafka.Header{Key: "empty", Value: []byte{}}, ckafka.Header{Key: "id", Value: []byte("dup")})
	}
	return m
}

// TestExactlyOnceAcrossWorkerCrashes preloads 200k records across 6
// partitions, replicates them with a real worker process, SIGKILLs the
// worker at random moments and right as a producer starts committing a
// transaction (seen in librdkafka's EOS debug log), restarts it each time,
// and checks that a read_committed consumer of the target sees every source
// record exactly once, in source order per partition, byte for byte.
func TestExactlyOnceAcrossWorkerCrashes(t *testing.T) {
	if testing.Short() {
		t.Skip("long crash test; run without -short")
	}
	const partitions, perPartition = 6, 200_000 / 6
	src := kafkatest.Topic(t, kafkatest.Partitions(partitions))
	target := src + ".replica"
	t.Cleanup(func() { kafkatest.DeleteTopics(t, target) })
	// Recent timestamps: the broker's time-based retention deletes old ones.
	base := time.Now().Add(-time.Hour).Truncate(time.Millisecond)
	var msgs []*ckafka.Message
	for p := range int32(partitions) {
		for seq := range perPartition {
			msgs = append(msgs, e2eRecord(src, base, p, seq))
		}
	}
	produce(t, msgs...)
	want := kafkatest.ReadAll(t, src, kafkatest.ReadCommitted, 5*time.Second, 5*time.Minute)
	if len(want) != len(msgs) {
		t.Fatalf("source holds %d records, produced %d", len(want), len(msgs))
	}

	bs := kafkatest.Bootstrap(t)
	e := newE2E(t, map[string]string{
		"name": "repl", "connector.class": Class, "tasks.max": "3",
		"source.bootstrap.servers": bs, "target.bootstrap.servers": bs,
		"topics": src, "target.topic.format": "${topic}.replica",
		"key.converter":   "org.apache.kafka.connect.converters.ByteArrayConverter",
		"value.converter": "org.apache.kafka.connect.converters.ByteArrayConverter",
		// Small polls: many transactions, so kills land in all their phases.
		"poll.max.records": "300",
		// librdkafka's EOS debug log shows each transaction's commit.
		"producer.override.debug": "eos",
	})

	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 7))
	plans := []string{"random", "commit", "random", "commit", "random", "commit", "random", "commit"}
	commitKills := 0
	for i, plan := range plans {
		w := e.start()
		w.WaitLine(t, 2*time.Minute, "task repl-", "RUNNING")
		switch plan {
		case "random":
			// At least one task is producing; let it run a random while.
			// Transactions of 300 records last tens of milliseconds, so
			// any moment within 300 ms falls in a random phase of one;
			// the bound keeps the copy from finishing before the last
			// kill (with 1.5 s, four random kills could copy 200k).
			w.WaitLine(t, time.Minute, "BeginCommit")
			time.Sleep(time.Duration(rng.IntN(300)) * time.Millisecond)
		case "commit":
			// Skip a random number of commits, then kill as EndTxn goes out.
			for range rng.IntN(4) {
				w.WaitLine(t, time.Minute, "-> CommittingTransaction")
			}
			w.WaitLine(t, time.Minute, "-> CommittingTransaction")
			commitKills++
		}
		w.Kill()
		n := countOn(t, kafkatest.A(), target)
		t.Logf("kill %d (%s): target holds %d committed records", i+1, plan, n)
		if n >= len(want) {
			t.Fatalf("replication finished before kill %d of %d: the test no longer crashes it mid-flight", i+1, len(plans))
		}
	}
	if commitKills < 2 {
		t.Fatalf("only %d kills during a commit", commitKills)
	}

	// A last, undisturbed run finishes the copy.
	w := e.start()
	kafkatest.Eventually(t, 5*time.Minute, func() (bool, string) {
		n := countOn(t, kafkatest.A(), target)
		return n >= len(want), fmt.Sprintf("%d of %d records committed", n, len(want))
	})
	_ = w.Signal(syscall.SIGTERM)
	select {
	case <-w.Done():
	case <-time.After(time.Minute):
		t.Fatalf("worker did not stop on SIGTERM:\n%s", w.Tail())
	}

	got := kafkatest.ReadAll(t, target, kafkatest.ReadCommitted, 5*time.Second, 5*time.Minute)
	compareCopies(t, want, got)
}

// compareCopies checks that got holds exactly want's records, partition by
// partition in order, with identical keys, values, headers and timestamps.
func compareCopies(t *testing.T, want, got []*ckafka.Message) {
	t.Helper()
	byPart := func(ms []*ckafka.Message) map[int32][]*ckafka.Message {
		out := map[int32][]*ckafka.Message{}
		for _, m := range ms {
			out[m.TopicPartition.Partition] = append(out[m.TopicPartition.Partition], m)
		}
		return out
	}
	w, g := byPart(want), byPart(got)
	if len(got) != len(want) {
		t.Errorf("target holds %d records, source %d", len(got), len(want))
	}
	for p, ws := range w {
		gs := g[p]
		if len(gs) != len(ws) {
			t.Errorf("partition %d: %d records, want %d", p, len(gs), len(ws))
		}
		bad := 0
		for i := range min(len(ws), len(gs)) {
			if msg := diffRecord(ws[i], gs[i]); msg != "" {
				if bad++; bad <= 5 {
					t.Errorf("partition %d record %d (source offset %d): %s", p, i, ws[i].TopicPartition.Offset, msg)
				}
			}
		}
		if bad > 5 {
			t.Errorf("partition %d: %d records differ in all", p, bad)
		}
	}
}

func diffRecord(w, g *ckafka.Message) string {
	eq := func(a, b []byte) bool { return (a == nil) == (b == nil) && bytes.Equal(a, b) }
	switch {
	case !eq(w.Key, g.Key):
		return fmt.Sprintf("key %x, want %x (null: %v/%v)", g.Key, w.Key, g.Key == nil, w.Key == nil)
	case !eq(w.Value, g.Value):
		return fmt.Sprintf("value of %d bytes (null %v), want %d (null %v)", len(g.Value), g.Value == nil, len(w.Value), w.Value == nil)
	case !w.Timestamp.Equal(g.Timestamp):
		return fmt.Sprintf("timestamp %v, want %v", g.Timestamp, w.Timestamp)
	case len(w.Headers) != len(g.Headers):
		return fmt.Sprintf("%d headers, want %d", len(g.Headers), len(w.Headers))
	}
	for i := range w.Headers {
		if w.Headers[i].Key != g.Headers[i].Key || !eq(w.Headers[i].Value, g.Headers[i].Value) {
			return fmt.Sprintf("header %d = %q:%x, want %q:%x", i, g.Headers[i].Key, g.Headers[i].Value, w.Headers[i].Key, w.Headers[i].Value)
		}
	}
	return ""
}

// TestUpstreamTransactionsThroughWorker replicates a topic written by a
// transactional producer that commits some transactions and aborts others,
// with one left open while replication runs: the target holds exactly the
// committed records, in order, and the open transaction's records appear
// once it commits.
func TestUpstreamTransactionsThroughWorker(t *testing.T) {
	src := kafkatest.Topic(t, kafkatest.Partitions(3))
	target := src + ".replica"
	t.Cleanup(func() { kafkatest.DeleteTopics(t, target) })
	bs := kafkatest.Bootstrap(t)
	p, err := ckafka.NewProducer(&ckafka.ConfigMap{"bootstrap.servers": bs, "transactional.id": kafkatest.UniqueName(t, "up")})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	go func() {
		for range p.Events() {
		}
	}()
	ctx := t.Context()
	if err := p.InitTransactions(ctx); err != nil {
		t.Fatal(err)
	}
	var committed []string
	txn := func(i int, commit bool) {
		t.Helper()
		if err := p.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		for j := range 30 {
			v := fmt.Sprintf("txn%d-%d", i, j)
			if err := p.Produce(&ckafka.Message{TopicPartition: ckafka.TopicPartition{Topic: &src, Partition: int32(j % 3)}, Value: []byte(v)}, nil); err != nil {
				t.Fatal(err)
			}
			if commit {
				committed = append(committed, v)
			}
		}
		if !commit {
			if err := p.AbortTransaction(ctx); err != nil {
				t.Fatal(err)
			}
			return
		}
		if err := p.CommitTransaction(ctx); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 20 {
		txn(i, i%3 != 1) // every third transaction aborts
	}
	// Leave one open while the worker starts.
	if err := p.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	for j := range 30 {
		v := fmt.Sprintf("late-%d", j)
		if err := p.Produce(&ckafka.Message{TopicPartition: ckafka.TopicPartition{Topic: &src, Partition: int32(j % 3)}, Value: []byte(v)}, nil); err != nil {
			t.Fatal(err)
		}
	}
	if p.Flush(30000) != 0 {
		t.Fatal("flush of the open transaction did not finish")
	}

	e := newE2E(t, map[string]string{
		"name": "repl", "connector.class": Class, "tasks.max": "2",
		"source.bootstrap.servers": bs, "target.bootstrap.servers": bs,
		"topics": src, "target.topic.format": "${topic}.replica",
		"key.converter":   "org.apache.kafka.connect.converters.ByteArrayConverter",
		"value.converter": "org.apache.kafka.connect.converters.ByteArrayConverter",
	})
	w := e.start()
	w.WaitLine(t, 2*time.Minute, "task repl-", "RUNNING")
	kafkatest.Eventually(t, 2*time.Minute, func() (bool, string) {
		n := countOn(t, kafkatest.A(), target)
		return n == len(committed), fmt.Sprintf("%d of %d committed upstream records copied", n, len(committed))
	})
	// Nothing of the open transaction is copied while it is open.
	time.Sleep(2 * time.Second)
	if n := countOn(t, kafkatest.A(), target); n != len(committed) {
		t.Fatalf("target holds %d records while the upstream transaction is open, want %d", n, len(committed))
	}
	if err := p.CommitTransaction(ctx); err != nil {
		t.Fatal(err)
	}
	for j := range 30 {
		committed = append(committed, fmt.Sprintf("late-%d", j))
	}
	kafkatest.Eventually(t, 2*time.Minute, func() (bool, string) {
		n := countOn(t, kafkatest.A(), target)
		return n == len(committed), fmt.Sprintf("%d of %d records copied", n, len(committed))
	})
	w.Kill()

	got := kafkatest.ReadAll(t, target, kafkatest.ReadCommitted, 2*time.Second, time.Minute)
	gotBy := map[int32][]string{}
	for _, m := range got {
		if strings.HasPrefix(string(m.Value), "txn") && isAborted(string(m.Value)) {
			t.Errorf("aborted upstream record %q was copied", m.Value)
		}
		gotBy[m.TopicPartition.Partition] = append(gotBy[m.TopicPartition.Partition], string(m.Value))
	}
	wantBy := map[int32][]string{}
	for _, v := range committed {
		var j int
		if _, err := fmt.Sscanf(v[strings.LastIndexByte(v, '-')+1:], "%d", &j); err != nil {
			t.Fatal(err)
		}
		wantBy[int32(j%3)] = append(wantBy[int32(j%3)], v)
	}
	for part, ws := range wantBy {
		if strings.Join(gotBy[part], " ") != strings.Join(ws, " ") {
			t.Errorf("partition %d:\n got %v\nwant %v", part, gotBy[part], ws)
		}
	}
}

func isAborted(v string) bool {
	var i, j int
	if _, err := fmt.Sscanf(v, "txn%d-%d", &i, &j); err != nil {
		return false
	}
	return i%3 == 1
}

// waitFailedTrace waits for the connector's FAILED trace, passing over
// "cluster unreachable" ones: on a loaded machine a first look at the
// (healthy) test broker can time out, a retriable failure the worker
// retries with backoff; the trace the test checks follows.
func waitFailedTrace(t *testing.T, w *workerProc) string {
	t.Helper()
	for range 3 {
		line := w.WaitLine(t, time.Minute, "connector repl FAILED")
		if !strings.Contains(line, "cluster unreachable") {
			return line
		}
		t.Logf("retriable failure first (the worker retries): %s", line)
	}
	t.Fatalf("the test broker stayed unreachable; output:\n%s", w.Tail())
	return ""
}

// TestBadInputThroughWorker runs bad configurations through a real worker
// process and checks the status lines it reports: a clear FAILED trace,
// and recovery by the worker's restart with backoff once the condition
// heals.
func TestBadInputThroughWorker(t *testing.T) {
	bs := kafkatest.Bootstrap(t)
	props := func(kv ...string) map[string]string {
		return with(map[string]string{
			"name": "repl", "connector.class": Class, "tasks.max": "1",
			"source.bootstrap.servers": bs, "target.bootstrap.servers": bs,
			"target.topic.format": "${topic}.replica",
			"key.converter":       "org.apache.kafka.connect.converters.ByteArrayConverter",
			"value.converter":     "org.apache.kafka.connect.converters.ByteArrayConverter",
		}, kv...)
	}

	t.Run("regex matching nothing heals when a topic appears", func(t *testing.T) {
		prefix := kafkatest.UniqueName(t, "none")
		e := newE2E(t, props("topics.regex", regexp.QuoteMeta(prefix)+`\..*`))
		w := e.start()
		line := waitFailedTrace(t, w)
		if !strings.Contains(line, "matches no topic") || !strings.Contains(line, prefix) {
			t.Errorf("trace %q does not say the regex matches nothing", line)
		}
		kafkatest.CreateTopic(t, prefix+".a", kafkatest.Partitions(2))
		t.Cleanup(func() { kafkatest.DeleteTopics(t, prefix+".a.replica") })
		produce(t, &ckafka.Message{TopicPartition: ckafka.TopicPartition{Topic: ptr(prefix + ".a"), Partition: 1}, Value: []byte("x")})
		w.WaitLine(t, 2*time.Minute, "task repl-0 RUNNING")
		kafkatest.Eventually(t, time.Minute, func() (bool, string) {
			n := countOn(t, kafkatest.A(), prefix+".a.replica")
			return n == 1, fmt.Sprintf("%d records copied", n)
		})
	})

	t.Run("missing topic heals when it is created", func(t *testing.T) {
		missing := kafkatest.UniqueName(t, "missing")
		e := newE2E(t, props("topics", missing))
		w := e.start()
		line := waitFailedTrace(t, w)
		if !strings.Contains(line, "do not exist on the source cluster") || !strings.Contains(line, missing) {
			t.Errorf("trace %q does not name the missing topic %s", line, missing)
		}
		kafkatest.CreateTopic(t, missing, kafkatest.Partitions(2))
		t.Cleanup(func() { kafkatest.DeleteTopics(t, missing, missing+".replica") })
		produce(t, &ckafka.Message{TopicPartition: ckafka.TopicPartition{Topic: ptr(missing), Partition: 0}, Value: []byte("y")})
		w.WaitLine(t, 2*time.Minute, "task repl-0 RUNNING")
		kafkatest.Eventually(t, time.Minute, func() (bool, string) {
			n := countOn(t, kafkatest.A(), missing+".replica")
			return n == 1, fmt.Sprintf("%d records copied", n)
		})
	})

	t.Run("target with too few partitions", func(t *testing.T) {
		src := kafkatest.Topic(t, kafkatest.Partitions(3))
		kafkatest.CreateTopic(t, src+".replica", kafkatest.Partitions(1))
		e := newE2E(t, props("topics", src))
		w := e.start()
		line := waitFailedTrace(t, w)
		for _, want := range []string{"fewer partitions than its source", `has 1 partitions but source topic`} {
			if !strings.Contains(line, want) {
				t.Errorf("trace %q lacks %q", line, want)
			}
		}
	})

	t.Run("unreachable source cluster", func(t *testing.T) {
		dead := deadAddress(t)
		e := newE2E(t, props("topics", "x", "source.bootstrap.servers", dead))
		w := e.start()
		line := w.WaitLine(t, time.Minute, "connector repl FAILED")
		if !strings.Contains(line, "cluster unreachable") || !strings.Contains(line, dead) {
			t.Errorf("trace %q does not name the unreachable source %s", line, dead)
		}
		// The worker keeps retrying with backoff.
		w.WaitLine(t, time.Minute, "connector repl FAILED")
	})
}

func ptr[T any](v T) *T { return &v }
