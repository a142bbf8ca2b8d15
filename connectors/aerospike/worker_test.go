package aerospike

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"github.com/connectd/connectd/connectors/aerospike/aerofake"
	"github.com/connectd/connectd/connectors/aerospike/aerotest"
	"github.com/connectd/connectd/internal/kafkatest"
	"github.com/connectd/connectd/offsets"
)

const (
	datagenPkg    = "github.com/connectd/connectd/connectors/datagen/cmd/connectd-datagen"
	testWorkerPkg = "github.com/connectd/connectd/framework/worker/internal/testworker"
)

// workerEnv is a plugin catalog with DatagenSource and AerospikeSink and
// the worker's test binary, which runs one connector through the worker
// API in a process of its own.
type workerEnv struct {
	catalog, worker string
}

func newWorkerEnv(t *testing.T) workerEnv {
	t.Helper()
	if testing.Short() {
		t.Skip("runs worker processes against Kafka; skipped with -short")
	}
	b := builder
	catDir := filepath.Join(sharedDir, "plugins")
	if err := b.InstallAll(t, catDir, datagenPkg, pluginPkg); err != nil {
		t.Fatal(err)
	}
	return workerEnv{catalog: catDir, worker: b.Build(t, testWorkerPkg)}
}

// workerProc is one test worker process running one connector.
type workerProc struct {
	t       *testing.T
	name    string
	cmd     *exec.Cmd
	logPath string
	done    chan struct{}

	mu    sync.Mutex
	lines []string
}

// startWorker starts a worker process for the connector props["name"].
func (e workerEnv) startWorker(t *testing.T, bootstrap, offsetsTopic string, props map[string]string) *workerProc {
	t.Helper()
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "connector.json")
	raw, _ := json.Marshal(props)
	if err := os.WriteFile(cfgPath, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(dir, "worker.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()
	cmd := exec.Command(e.worker,
		"-bootstrap", bootstrap, "-group", "connect-"+props["name"], "-offsets-topic", offsetsTopic,
		"-plugins", e.catalog, "-eos=true", "-connector", props["name"], "-config", cfgPath,
		"-flush-interval", "300ms", "-backoff", "100ms", "-shutdown-timeout", "5s")
	cmd.Stderr = logFile
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w := &workerProc{t: t, name: props["name"], cmd: cmd, logPath: logPath, done: make(chan struct{})}
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			w.mu.Lock()
			w.lines = append(w.lines, sc.Text())
			w.mu.Unlock()
		}
		_ = cmd.Wait()
		close(w.done)
	}()
	t.Cleanup(func() {
		w.kill()
		if t.Failed() {
			w.mu.Lock()
			t.Logf("worker %s states:\n%s\nlog tail:\n%s", w.name, strings.Join(w.lines, "\n"), w.logTail())
			w.mu.Unlock()
		}
	})
	return w
}

func (w *workerProc) exited() bool {
	select {
	case <-w.done:
		return true
	default:
		return false
	}
}

// kill SIGKILLs the worker (its plugins die with it) and waits for it.
func (w *workerProc) kill() {
	if w.exited() {
		return
	}
	_ = w.cmd.Process.Signal(syscall.SIGKILL)
	<-w.done
}

// stop stops the worker gracefully: tasks flush and commit.
func (w *workerProc) stop() {
	w.t.Helper()
	if w.exited() {
		w.t.Fatalf("worker %s exited on its own:\n%s", w.name, w.logTail())
	}
	_ = w.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-w.done:
	case <-time.After(30 * time.Second):
		w.kill()
		w.t.Fatalf("worker %s did not stop within 30s:\n%s", w.name, w.logTail())
	}
}

// failed returns a FAILED state line, if any.
func (w *workerProc) failed() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, l := range w.lines {
		if strings.Contains(l, " FAILED ") {
			return l
		}
	}
	return ""
}

func (w *workerProc) logTail() string {
	raw, _ := os.ReadFile(w.logPath)
	lines := strings.Split(strings.TrimSpace(string(raw)), "\n")
	if len(lines) > 40 {
		lines = lines[len(lines)-40:]
	}
	return strings.Join(lines, "\n")
}

// topicState reads a topic read_committed and returns, per key, the last
// offset per "<topic>-<partition>" and the number of records.
func topicState(t *testing.T, topic string) (map[string]map[string]int64, int) {
	t.Helper()
	msgs := kafkatest.ReadAll(t, topic, kafkatest.ReadCommitted, 2*time.Second, time.Minute)
	last := map[string]map[string]int64{}
	for _, m := range msgs {
		k := string(m.Key)
		if last[k] == nil {
			last[k] = map[string]int64{}
		}
		p := fmt.Sprintf("%s-%d", topic, m.TopicPartition.Partition)
		if o := int64(m.TopicPartition.Offset); o > last[k][p] || last[k][p] == 0 {
			last[k][p] = o
		}
	}
	return last, len(msgs)
}

// partitionEnds returns, per partition, the offset after its last record
// (what a consumer that applied everything commits; the end offset itself
// may be one higher, past a transaction marker).
func partitionEnds(last map[string]map[string]int64, topic string) map[int32]int64 {
	ends := map[int32]int64{}
	for _, perKey := range last {
		for tp, o := range perKey {
			var p int32
			fmt.Sscanf(strings.TrimPrefix(tp, topic+"-"), "%d", &p)
			ends[p] = max(ends[p], o+1)
		}
	}
	return ends
}

// committedAt reports whether the sink's consumer group has committed
// exactly ends.
func committedAt(admin *kafka.AdminClient, connector, topic string, ends map[int32]int64) (bool, string) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	offs, err := offsets.SinkOffsets(ctx, admin, connector)
	if err != nil {
		return false, err.Error()
	}
	committed := map[int32]int64{}
	for _, o := range offs {
		if o.Topic == topic {
			committed[o.Partition] = o.Offset
		}
	}
	if !maps.Equal(committed, ends) {
		return false, fmt.Sprintf("committed %v, want %v", committed, ends)
	}
	return true, ""
}

func total(m map[string]int64) int64 {
	var s int64
	for _, v := range m {
		s += v
	}
	return s
}

// counters returns the amount bin of every record in set, by user key
// (the sink must store it: send.key=true).
func counters(t *testing.T, srv *aerotest.Cluster, set string) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	for _, r := range srv.Scan(t, set) {
		k, ok := r.Key.(string)
		if !ok {
			t.Fatalf("record %x has no stored key (send.key=true is needed)", r.Digest)
		}
		if n, ok := r.Bins["amount"].(int64); ok {
			out[k] = n
		}
	}
	return out
}

func appliedSum(t *testing.T, srv *aerotest.Cluster) int64 {
	t.Helper()
	var s int64
	for _, r := range srv.Scan(t, "counters") {
		if n, ok := r.Bins["amount"].(int64); ok {
			s += n
		}
	}
	return s
}

func checkCounters(t *testing.T, srv *aerotest.Cluster, want map[string]int64, last map[string]map[string]int64) {
	t.Helper()
	if len(last) != len(want) {
		t.Fatalf("topic has %d keys, want %d", len(last), len(want))
	}
	for k, sum := range want {
		r := stored(t, srv, "counters", k)
		if r == nil {
			t.Errorf("%s: missing", k)
			continue
		}
		if r.Bins["amount"] != sum {
			t.Errorf("%s: amount %v, want %d", k, r.Bins["amount"], sum)
		}
		if pos := positionsOf(t, r, "kafka_pos"); !maps.Equal(pos, last[k]) {
			t.Errorf("%s: positions %v, want %v", k, pos, last[k])
		}
	}
}

// produce writes records synchronously with a plain producer.
func produce(t *testing.T, topic string, recs ...kafka.Message) {
	t.Helper()
	// message.max.bytes lets a test send a record over Aerospike's size
	// limit; the topic must take it too.
	p, err := kafka.NewProducer(&kafka.ConfigMap{"bootstrap.servers": kafkatest.Bootstrap(t), "enable.idempotence": true, "message.max.bytes": 16 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	done := make(chan kafka.Event, len(recs))
	for i := range recs {
		m := recs[i]
		m.TopicPartition.Topic = &topic
		if err := p.Produce(&m, done); err != nil {
			t.Fatal(err)
		}
	}
	for range recs {
		if m := (<-done).(*kafka.Message); m.TopicPartition.Error != nil {
			t.Fatal(m.TopicPartition.Error)
		}
	}
}

func msg(p int32, key string, value string) kafka.Message {
	m := kafka.Message{TopicPartition: kafka.TopicPartition{Partition: p}, Key: []byte(key)}
	if value != "" {
		m.Value = []byte(value)
	}
	return m
}

// Fault injection through the test server, with the real worker: transient
// failures are retried until the counters are exact; permanent failures
// go to the dead-letter queue with context headers naming the result code;
// while writes keep failing nothing is committed past the unwritten records.
func TestWorkerFaultsAndDeadLetters(t *testing.T) {
	bootstrap := kafkatest.Bootstrap(t)
	env := newWorkerEnv(t)
	// A namespace with max-record-size 64 KiB, so that a record too big
	// for it still fits in a Kafka message.
	srv := startServer(t, aerofake.Config{MaxRecordSize: 64 << 10})
	srv.NeedFake(t, "fault injection")
	topic := kafkatest.Topic(t, kafkatest.Partitions(3))
	dlq := kafkatest.Topic(t)
	offsetsTopic := kafkatest.UniqueName(t, "offsets")
	kafkatest.CreateTopic(t, offsetsTopic, kafkatest.Partitions(1), kafkatest.Config("cleanup.policy", "compact"))
	name := kafkatest.UniqueName(t, "sink")
	props := map[string]string{
		"name": name, "connector.class": Class, "tasks.max": "1", "topics": topic,
		"key.converter":   "org.apache.kafka.connect.storage.StringConverter",
		"value.converter": "org.apache.kafka.connect.json.JsonConverter", "value.converter.schemas.enable": "false",
		"errors.tolerance": "all", "errors.deadletterqueue.topic.name": dlq,
		"errors.deadletterqueue.topic.replication.factor": "1", "errors.deadletterqueue.context.headers.enable": "true",
		KeySet: srv.Set("counters"), KeyWriteMode: ModeIncrement, KeySendKey: "true",
		KeyClientRetries: "0", KeyRetryAttempts: "4", KeyRetryBackoff: "10", KeyRetryBackoffMx: "100",
	}
	maps.Copy(props, clusterProps(srv))
	admin := kafkatest.Admin(t)
	want := map[string]int64{}
	ends := map[int32]int64{}
	var good []kafka.Message
	add := func(p int32, k string, amount int64) {
		good = append(good, msg(p, k, fmt.Sprintf(`{"amount":%d}`, amount)))
		want[k] += amount
		ends[p]++
	}

	// Transient failures on reads, writes and whole batches.
	srv.Fake().InjectFault(aerofake.Fault{Ops: aerofake.OpWrite, Times: 20, ResultCode: aerofake.KeyBusy})
	srv.Fake().InjectFault(aerofake.Fault{Ops: aerofake.OpWrite, Times: 5, ResultCode: aerofake.Timeout, AfterApply: true})
	srv.Fake().InjectFault(aerofake.Fault{Ops: aerofake.OpRead, Times: 5, DropConnection: true})
	srv.Fake().InjectFault(aerofake.Fault{Ops: aerofake.OpBatch, Times: 3, ResultCode: aerofake.PartitionUnavailable})
	for i := range 300 {
		add(int32(i%3), keyName(i%17), int64(i%7+1))
	}
	produce(t, topic, good...)
	sink := env.startWorker(t, bootstrap, offsetsTopic, props)
	kafkatest.Eventually(t, 2*time.Minute, func() (bool, string) {
		got := counters(t, srv, "counters")
		return maps.Equal(got, want), fmt.Sprintf("%d of %d units applied; pending faults %d", total(got), total(want), len(srv.Fake().PendingFaults()))
	})
	if n := len(srv.Fake().PendingFaults()); n != 0 {
		t.Fatalf("%d fault rules were not hit", n)
	}
	kafkatest.Eventually(t, 30*time.Second, func() (bool, string) { return committedAt(admin, name, topic, ends) })

	// Permanent failures: a string where a counter is, a value that is not
	// JSON, an empty key, a record over the namespace's size limit. Good
	// records around them are still applied.
	produce(t, topic,
		msg(0, "strkey", `{"amount":"text"}`),
		msg(0, "strkey", `{"amount":5}`),
		msg(1, "k1", `{not json`),
		msg(2, "", `{"amount":1}`),
		msg(2, "bigone", `{"amount":1,"pad":"`+strings.Repeat("p", 100<<10)+`"}`),
	)
	ends[0] += 2
	ends[1]++
	ends[2] += 2
	want["strkey"] = 0 // the bin holds "text"; counters() skips it
	delete(want, "strkey")
	good = good[:0]
	add(0, "k1", 100)
	add(1, "k2", 100)
	produce(t, topic, good...)
	var dead []*kafka.Message
	kafkatest.Eventually(t, time.Minute, func() (bool, string) {
		dead = kafkatest.ReadAll(t, dlq, kafkatest.ReadUncommitted, 500*time.Millisecond, 30*time.Second)
		return len(dead) >= 4, fmt.Sprintf("%d dead letters", len(dead))
	})
	if len(dead) != 4 {
		t.Fatalf("%d dead letters, want 4", len(dead))
	}
	headers := func(m *kafka.Message) map[string]string {
		h := map[string]string{}
		for _, x := range m.Headers {
			h[x.Key] = string(x.Value)
		}
		return h
	}
	// Dead letters by partition@offset; their order across partitions is
	// the worker's business.
	checks := map[string]struct{ stage, message string }{
		fmt.Sprintf("0@%d", ends[0]-2): {"TASK_PUT", "result code 12 BIN_TYPE_ERROR"},
		fmt.Sprintf("1@%d", ends[1]-2): {"VALUE_CONVERTER", ""},
		fmt.Sprintf("2@%d", ends[2]-2): {"TASK_PUT", "record key is empty"},
		fmt.Sprintf("2@%d", ends[2]-1): {"TASK_PUT", "result code 13 RECORD_TOO_BIG"},
	}
	for i, m := range dead {
		h := headers(m)
		at := h["__connect.errors.partition"] + "@" + h["__connect.errors.offset"]
		c, ok := checks[at]
		if !ok || h["__connect.errors.stage"] != c.stage || h["__connect.errors.topic"] != topic ||
			!strings.Contains(h["__connect.errors.exception.message"], c.message) {
			t.Errorf("dead letter %d headers %v, want one of %v", i, h, checks)
		}
		delete(checks, at)
	}
	kafkatest.Eventually(t, time.Minute, func() (bool, string) {
		got := counters(t, srv, "counters")
		return maps.Equal(got, want), fmt.Sprintf("%v, want %v", got, want)
	})
	kafkatest.Eventually(t, 30*time.Second, func() (bool, string) { return committedAt(admin, name, topic, ends) })

	// Writes keep failing: the put fails as retriable again and again, and
	// the committed offsets stay where they are.
	srv.Fake().InjectFault(aerofake.Fault{Ops: aerofake.OpWrite, ResultCode: aerofake.KeyBusy})
	good = good[:0]
	before := maps.Clone(ends)
	for i := range 30 {
		add(int32(i%3), "late", 1)
	}
	produce(t, topic, good...)
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if ok, why := committedAt(admin, name, topic, before); !ok {
			t.Fatalf("offsets moved while the records could not be written: %s", why)
		}
		if stored(t, srv, "counters", "late") != nil {
			t.Fatal("a write succeeded through the fault")
		}
		time.Sleep(250 * time.Millisecond)
	}
	if l := sink.failed(); l != "" {
		t.Fatalf("the task failed instead of retrying: %s", l)
	}
	srv.Fake().ClearFaults()
	kafkatest.Eventually(t, time.Minute, func() (bool, string) {
		got := counters(t, srv, "counters")
		return maps.Equal(got, want), fmt.Sprintf("late = %d", got["late"])
	})
	kafkatest.Eventually(t, 30*time.Second, func() (bool, string) { return committedAt(admin, name, topic, ends) })
	sink.stop()
	if dead := kafkatest.ReadAll(t, dlq, kafkatest.ReadUncommitted, 500*time.Millisecond, 30*time.Second); len(dead) != 4 {
		t.Fatalf("%d dead letters at the end, want 4 (transient failures must not be dead-lettered)", len(dead))
	}
}

// Under errors.tolerance=none a record over the namespace's record-size
// limit fails the task, with the result code in its trace, instead of being
// retried for ever; nothing of it is written.
func TestWorkerTooBigRecordFailsTaskUnderToleranceNone(t *testing.T) {
	bootstrap := kafkatest.Bootstrap(t)
	env := newWorkerEnv(t)
	srv := startServer(t, aerofake.Config{MaxRecordSize: 64 << 10})
	// The record over the limit travels as one Kafka message: on a real
	// cluster (1 MiB or more) it needs a topic that takes messages past
	// the broker's default of about 1 MB.
	limit := srv.MaxRecordSize(t)
	topic := kafkatest.Topic(t, kafkatest.Partitions(1), kafkatest.Config("max.message.bytes", strconv.Itoa(limit+(1<<20))))
	offsetsTopic := kafkatest.UniqueName(t, "offsets")
	kafkatest.CreateTopic(t, offsetsTopic, kafkatest.Partitions(1), kafkatest.Config("cleanup.policy", "compact"))
	name := kafkatest.UniqueName(t, "sink")
	props := map[string]string{
		"name": name, "connector.class": Class, "tasks.max": "1", "topics": topic,
		"key.converter":   "org.apache.kafka.connect.storage.StringConverter",
		"value.converter": "org.apache.kafka.connect.json.JsonConverter", "value.converter.schemas.enable": "false",
		"errors.tolerance": "none",
		KeySet:             srv.Set("s"),
	}
	maps.Copy(props, clusterProps(srv))
	produce(t, topic,
		msg(0, "a", `{"v":1}`),
		msg(0, "big", `{"pad":"`+strings.Repeat("p", limit+(36<<10))+`"}`),
	)
	sink := env.startWorker(t, bootstrap, offsetsTopic, props)
	kafkatest.Eventually(t, time.Minute, func() (bool, string) {
		l := sink.failed()
		return strings.Contains(l, "result code 13 RECORD_TOO_BIG"), fmt.Sprintf("FAILED line %q", l)
	})
	if stored(t, srv, "s", "big") != nil {
		t.Fatal("the too-big record was written")
	}
}
