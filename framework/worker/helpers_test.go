package worker_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/connectd/connectd/framework/worker"
	"github.com/connectd/connectd/internal/kafkatest"
	"github.com/connectd/connectd/plugins/host"
	"github.com/connectd/connectd/plugins/plugintest"
)

const (
	datagenPkg    = "github.com/connectd/connectd/connectors/datagen/cmd/connectd-datagen"
	fileSinkPkg   = "github.com/connectd/connectd/framework/worker/internal/testplugins/filesink"
	testSourcePkg = "github.com/connectd/connectd/framework/worker/internal/testplugins/testsource"
	testWorkerPkg = "github.com/connectd/connectd/framework/worker/internal/testworker"
)

// builder builds the plugins and the test worker once per test process.
var builder *plugintest.Builder

// catalogDir holds the installed test plugins, shared by the tests.
var (
	catalogOnce sync.Once
	catalogDir  string
	catalogErr  error
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "connectd-worker-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	builder = plugintest.NewBuilder(dir)
	catalogDir = dir + "/plugins"
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// plugins returns the catalog directory with the datagen, test source and
// file sink plugins installed.
func plugins(t *testing.T) string {
	t.Helper()
	catalogOnce.Do(func() {
		catalogErr = builder.InstallAll(t, catalogDir, datagenPkg, fileSinkPkg, testSourcePkg)
	})
	if catalogErr != nil {
		t.Fatal(catalogErr)
	}
	return catalogDir
}

// statusLog records every state change a worker reports.
type statusLog struct {
	mu     sync.Mutex
	events []statusEvent
}

type statusEvent struct {
	kind, name string
	state      worker.State
	trace      string
	at         time.Time // when the test saw it
}

func (s *statusLog) ConnectorState(name string, st worker.State, trace string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.events = append(s.events, statusEvent{"connector", name, st, trace, time.Now()})
}

func (s *statusLog) TaskState(id worker.TaskID, st worker.State, trace string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.events = append(s.events, statusEvent{"task", id.String(), st, trace, time.Now()})
}

// count returns how many events were seen so far.
func (s *statusLog) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.events)
}

// find returns the first task event with state st (after skipping the
// first from events), and its index.
func (s *statusLog) find(name string, st worker.State, from int) (statusEvent, int, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := from; i < len(s.events); i++ {
		if e := s.events[i]; e.name == name && e.state == st {
			return e, i, true
		}
	}
	return statusEvent{}, 0, false
}

func (s *statusLog) waitFor(t *testing.T, name string, st worker.State, timeout time.Duration) statusEvent {
	t.Helper()
	var ev statusEvent
	kafkatest.Eventually(t, timeout, func() (bool, string) {
		e, _, ok := s.find(name, st, 0)
		ev = e
		return ok, fmt.Sprintf("%s never reached %s; events: %s", name, st, s.String())
	})
	return ev
}

func (s *statusLog) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var b strings.Builder
	for _, e := range s.events {
		fmt.Fprintf(&b, "\n  %s %s %s %q", e.kind, e.name, e.state, firstLine(e.trace))
	}
	return b.String()
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " …"
	}
	return s
}

// env is one test's Kafka side: its group, offsets topic and a worker
// configuration pointing at the shared plugin catalog.
type env struct {
	t         *testing.T
	bootstrap string
	group     string
	offsets   string
	pluginDir string
}

func newEnv(t *testing.T) *env {
	t.Helper()
	bootstrap := kafkatest.Bootstrap(t)
	return &env{
		t: t, bootstrap: bootstrap,
		group:     kafkatest.UniqueName(t, "g"),
		offsets:   kafkatest.Topic(t, kafkatest.Partitions(5), kafkatest.Config("cleanup.policy", "compact")),
		pluginDir: plugins(t),
	}
}

func (e *env) config(eos bool) worker.Config {
	cat, err := host.OpenCatalog(e.pluginDir)
	if err != nil {
		e.t.Fatal(err)
	}
	log := plugintest.TestLogger(e.t)
	return worker.Config{
		WorkerID: "test", GroupID: e.group, BootstrapServers: e.bootstrap, ExactlyOnceSource: eos,
		OffsetsTopic: e.offsets, OffsetFlushInterval: 300 * time.Millisecond, TaskShutdownTimeout: 10 * time.Second,
		RestartBackoffInitial: 100 * time.Millisecond, RestartBackoffMax: time.Second,
		Plugins: cat, PluginLaunch: host.LaunchOptions{Logger: log.With("src", "plugin")},
		Logger: log, Metrics: prometheus.NewRegistry(),
	}
}

func (e *env) start(cfg worker.Config) (*worker.Worker, *statusLog) {
	e.t.Helper()
	st := &statusLog{}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	w, err := worker.New(ctx, cfg, st)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_ = w.Close(ctx)
	})
	return w, st
}

// run starts connector name with props and all its tasks.
func (e *env) run(w *worker.Worker, name string, props map[string]string) []worker.TaskID {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	configs := e.startConnector(w, name, props)
	var ids []worker.TaskID
	for i, tc := range configs {
		id := worker.TaskID{Connector: name, Task: i}
		if err := w.StartTask(ctx, id, props, tc, worker.TargetStarted); err != nil {
			e.t.Fatal(err)
		}
		ids = append(ids, id)
	}
	return ids
}

// startConnector starts a connector instance without its tasks and
// returns the task configs (tasks.max of them at most).
func (e *env) startConnector(w *worker.Worker, name string, props map[string]string) []map[string]string {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := w.StartConnector(ctx, name, props, worker.TargetStarted, nil); err != nil {
		e.t.Fatal(err)
	}
	n := 1
	fmt.Sscan(props["tasks.max"], &n)
	configs, err := w.ConnectorTaskConfigs(ctx, name, n)
	if err != nil {
		e.t.Fatal(err)
	}
	return configs
}

// readCommitted waits until topic holds at least want committed records,
// then reads it read_committed until it has been quiet for a while, so
// that late duplicates would be counted too.
func readCommitted(t *testing.T, topic string, want int, timeout time.Duration) []*kafka.Message {
	t.Helper()
	kafkatest.Eventually(t, timeout, func() (bool, string) {
		n := len(committedNow(t, topic))
		return n >= want, fmt.Sprintf("%s holds %d of %d records", topic, n, want)
	})
	return kafkatest.ReadAll(t, topic, kafkatest.ReadCommitted, 500*time.Millisecond, time.Minute)
}

// seqRecord is what the counter quickstart and the test source write.
type seqRecord struct {
	Seq int64 `json:"seq"`
}

// checkExactlyOnce checks that msgs hold every seq of tasks tasks of
// perTask records exactly once, and that each task's records are in seq
// order within every partition.
func checkExactlyOnce(t *testing.T, msgs []*kafka.Message, tasks int, perTask int64) {
	t.Helper()
	seen := map[int64]int{}
	last := map[[2]int64]int64{} // (partition, task) → last seq
	var dups, disorder []string
	for _, m := range msgs {
		var r seqRecord
		if err := json.Unmarshal(m.Value, &r); err != nil {
			t.Fatalf("record %s: value %q: %v", m.TopicPartition, m.Value, err)
		}
		seen[r.Seq]++
		if seen[r.Seq] == 2 {
			dups = append(dups, fmt.Sprint(r.Seq))
		}
		k := [2]int64{int64(m.TopicPartition.Partition), r.Seq % int64(tasks)}
		if prev, ok := last[k]; ok && r.Seq <= prev {
			disorder = append(disorder, fmt.Sprintf("p%d: %d after %d", k[0], r.Seq, prev))
		}
		last[k] = r.Seq
	}
	var missing []int64
	for task := 0; task < tasks; task++ {
		for i := int64(0); i < perTask; i++ {
			if seen[int64(task)+i*int64(tasks)] == 0 {
				missing = append(missing, int64(task)+i*int64(tasks))
			}
		}
	}
	sort.Slice(missing, func(i, j int) bool { return missing[i] < missing[j] })
	if len(dups) > 0 || len(missing) > 0 || len(disorder) > 0 || len(msgs) != tasks*int(perTask) {
		t.Fatalf("not exactly once: %d records for %d expected; %d duplicated (%s); %d missing (%v); %d out of order (%s)",
			len(msgs), tasks*int(perTask), len(dups), head(dups), len(missing), headInts(missing), len(disorder), head(disorder))
	}
}

func head(s []string) string {
	if len(s) > 10 {
		return strings.Join(s[:10], ", ") + ", …"
	}
	return strings.Join(s, ", ")
}

func headInts(s []int64) []int64 {
	if len(s) > 10 {
		return s[:10]
	}
	return s
}

// metricSum adds up the samples of a metric family whose labels include
// all of match.
func metricSum(t *testing.T, cfg worker.Config, name string, match map[string]string) float64 {
	t.Helper()
	fams, err := cfg.Metrics.(prometheus.Gatherer).Gather()
	if err != nil {
		t.Fatal(err)
	}
	var total float64
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
	next:
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			for k, v := range match {
				if labels[k] != v {
					continue next
				}
			}
			switch {
			case m.Counter != nil:
				total += m.GetCounter().GetValue()
			case m.Gauge != nil:
				total += m.GetGauge().GetValue()
			case m.Histogram != nil:
				total += float64(m.GetHistogram().GetSampleCount())
			}
		}
	}
	return total
}

// committedNow reads topic read_committed from the beginning up to its
// high watermark at the start (waiting for the transactions open then to
// end), without waiting for the topic to go quiet (kafkatest.ReadAll
// does, which a running source never does).
// transient reports a client error that a retry may not see again.
func transient(err error) bool {
	var ke kafka.Error
	return errors.As(err, &ke) && (ke.IsRetriable() || ke.Code() == kafka.ErrTransport || ke.Code() == kafka.ErrAllBrokersDown || ke.Code() == kafka.ErrTimedOut)
}

func committedNow(t *testing.T, topic string) []*kafka.Message {
	t.Helper()
	c, err := kafka.NewConsumer(&kafka.ConfigMap{
		"bootstrap.servers": kafkatest.Bootstrap(t), "group.id": "worker-test-reader",
		"enable.auto.commit": false, "isolation.level": "read_committed",
	})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	md, err := c.GetMetadata(&topic, false, 10000)
	for retry := 0; err != nil && transient(err) && retry < 5; retry++ {
		// A loaded broker can drop a connection (a crash test's workers
		// are being SIGKILLed meanwhile): ask again rather than fail the
		// count.
		time.Sleep(time.Duration(retry+1) * 200 * time.Millisecond)
		md, err = c.GetMetadata(&topic, false, 10000)
	}
	if err != nil {
		t.Fatal(err)
	}
	admin, err := kafka.NewAdminClientFromConsumer(c)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	req := map[kafka.TopicPartition]kafka.OffsetSpec{}
	for _, p := range md.Topics[topic].Partitions {
		req[kafka.TopicPartition{Topic: &topic, Partition: p.ID}] = kafka.LatestOffsetSpec
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := admin.ListOffsets(ctx, req, kafka.SetAdminIsolationLevel(kafka.IsolationLevelReadUncommitted))
	for retry := 0; err != nil && retry < 5 && (transient(err) || strings.Contains(err.Error(), "No leaders found")); retry++ {
		// Leaders are briefly unknown to a client of a loaded broker.
		time.Sleep(time.Duration(retry+1) * 200 * time.Millisecond)
		res, err = admin.ListOffsets(ctx, req, kafka.SetAdminIsolationLevel(kafka.IsolationLevelReadUncommitted))
	}
	if err != nil {
		t.Fatal(err)
	}
	target := map[int32]int64{}
	var tps []kafka.TopicPartition
	for tp, info := range res.ResultInfos {
		if info.Offset > 0 {
			target[tp.Partition] = int64(info.Offset)
			tps = append(tps, kafka.TopicPartition{Topic: &topic, Partition: tp.Partition, Offset: kafka.OffsetBeginning})
		}
	}
	if err := c.Assign(tps); err != nil {
		t.Fatal(err)
	}
	var out []*kafka.Message
	for polls := 0; len(target) > 0; polls++ {
		if ctx.Err() != nil {
			t.Fatalf("reading %s did not reach its high watermarks within a minute", topic)
		}
		ev := c.Poll(100)
		if m, ok := ev.(*kafka.Message); ok {
			out = append(out, m)
		}
		if ev != nil && polls%1000 != 0 {
			continue
		}
		var left []kafka.TopicPartition
		for p := range target {
			left = append(left, kafka.TopicPartition{Topic: &topic, Partition: p})
		}
		pos, err := c.Position(left)
		if err != nil {
			t.Fatal(err)
		}
		for _, tp := range pos {
			if tp.Offset >= 0 && int64(tp.Offset) >= target[tp.Partition] {
				delete(target, tp.Partition)
			}
		}
	}
	return out
}

// checkPrefixOnce checks output of tasks that were stopped before they
// finished: for every task, the records written are exactly its first k
// seqs (some k), each once, in seq order within every partition. It
// returns the number of records.
func checkPrefixOnce(t *testing.T, msgs []*kafka.Message, tasks int) int {
	t.Helper()
	perTask := map[int64]int64{}
	for _, m := range msgs {
		var r seqRecord
		if err := json.Unmarshal(m.Value, &r); err != nil {
			t.Fatalf("record %s: value %q: %v", m.TopicPartition, m.Value, err)
		}
		task := r.Seq % int64(tasks)
		perTask[task] = max(perTask[task], r.Seq/int64(tasks)+1)
	}
	total := int64(0)
	for task := range int64(tasks) {
		total += perTask[task]
	}
	seen := map[int64]int{}
	for _, m := range msgs {
		var r seqRecord
		_ = json.Unmarshal(m.Value, &r)
		seen[r.Seq]++
	}
	for task := range int64(tasks) {
		for i := int64(0); i < perTask[task]; i++ {
			seq := task + i*int64(tasks)
			if seen[seq] != 1 {
				t.Fatalf("task %d's seq %d was written %d times (prefix of %d records)", task, seq, seen[seq], perTask[task])
			}
		}
	}
	if int64(len(msgs)) != total {
		t.Fatalf("%d records for prefixes totalling %d", len(msgs), total)
	}
	last := map[[2]int64]int64{}
	for _, m := range msgs {
		var r seqRecord
		_ = json.Unmarshal(m.Value, &r)
		k := [2]int64{int64(m.TopicPartition.Partition), r.Seq % int64(tasks)}
		if prev, ok := last[k]; ok && r.Seq <= prev {
			t.Fatalf("partition %d: seq %d after %d", k[0], r.Seq, prev)
		}
		last[k] = r.Seq
	}
	return len(msgs)
}
