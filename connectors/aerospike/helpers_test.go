package aerospike

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/connectd/connectd/connectors/aerospike/aerofake"
	"github.com/connectd/connectd/connectors/aerospike/aerotest"
	"github.com/connectd/connectd/framework/sdk"
	"github.com/connectd/connectd/plugins/plugintest"
)

// sharedDir holds what the process-level tests build once per test run:
// the plugin binaries, the worker binaries and the plugin catalog.
var (
	sharedDir string
	builder   *plugintest.Builder
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "aerospike-sink-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	sharedDir, builder = dir, plugintest.NewBuilder(dir)
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// reported is one ReportError call.
type reported struct {
	rec *sdk.SinkRecord
	err error
}

// taskCtx is the framework's side of a sink task for tests that drive a
// SinkTask in-process: it records ReportError calls and owns a registry.
type taskCtx struct {
	reg *prometheus.Registry
	log *slog.Logger

	mu      sync.Mutex
	reports []reported
}

func newTaskCtx() *taskCtx {
	return &taskCtx{reg: prometheus.NewRegistry(), log: slog.New(slog.NewTextHandler(io.Discard, nil))}
}

func (c *taskCtx) Connector() string              { return "test-sink" }
func (c *taskCtx) TaskID() int                    { return 0 }
func (c *taskCtx) Logger() *slog.Logger           { return c.log }
func (c *taskCtx) Metrics() prometheus.Registerer { return c.reg }
func (c *taskCtx) ReportError(rec *sdk.SinkRecord, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.reports = append(c.reports, reported{rec, err})
}

func (c *taskCtx) Reports() []reported {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]reported(nil), c.reports...)
}

// counter reads a counter (or counter vec child) of the task's registry.
func (c *taskCtx) counter(t testing.TB, name string, labels ...string) float64 {
	t.Helper()
	mfs, err := c.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	metrics:
		for _, m := range mf.GetMetric() {
			for i := 0; i+1 < len(labels); i += 2 {
				found := false
				for _, lp := range m.GetLabel() {
					if lp.GetName() == labels[i] && lp.GetValue() == labels[i+1] {
						found = true
					}
				}
				if !found {
					continue metrics
				}
			}
			if m.GetCounter() != nil {
				return m.GetCounter().GetValue()
			}
			return float64(m.GetHistogram().GetSampleCount())
		}
	}
	return 0
}

// startServer gives one test its Aerospike cluster: the external one named
// by AEROSPIKE_HOSTS, else an in-process test server started with cfg (see
// package aerotest).
func startServer(t testing.TB, cfg aerofake.Config) *aerotest.Cluster {
	t.Helper()
	return aerotest.Start(t, cfg)
}

// fakeOnly returns the test server, or nil with why logged against an
// external cluster: for assertions on the server's internals (operation
// counters) inside a test whose other assertions hold on any cluster.
func fakeOnly(t testing.TB, srv *aerotest.Cluster, why string) *aerofake.Server {
	t.Helper()
	if srv.Fake() == nil {
		t.Logf("not checked against the external cluster (needs the test server): %s", why)
	}
	return srv.Fake()
}

// statsOf is the test server's counters, zero on an external cluster:
// assertions on them go through fakeOnly.
func statsOf(srv *aerotest.Cluster) aerofake.Stats {
	if srv.Fake() == nil {
		return aerofake.Stats{}
	}
	return srv.Fake().Stats()
}

// clusterProps are the sink properties that point at srv: hosts,
// namespace, credentials.
func clusterProps(srv *aerotest.Cluster) map[string]string {
	p := map[string]string{KeyHosts: srv.Hosts, KeyNamespace: srv.Namespace}
	if srv.User != "" {
		p[KeyUser], p[KeyPassword] = srv.User, srv.Password
	}
	return p
}

// baseProps is a sink config for srv: its namespace, set "s". A set given
// in kv is mapped through srv.Set, so the test's sets are its own on an
// external cluster; one taken from the record (${value.<field>},
// ${header.<name>}) is not, as a prefix would make it invalid: those tests
// map the set names their records carry.
func baseProps(srv *aerotest.Cluster, kv ...string) map[string]string {
	p := clusterProps(srv)
	p[KeySet] = srv.Set("s")
	p[KeyRetryBackoff] = "1"
	p[KeyRetryBackoffMx] = "20"
	for i := 0; i+1 < len(kv); i += 2 {
		v := kv[i+1]
		if kv[i] == KeySet && !strings.HasPrefix(v, "${value.") && !strings.HasPrefix(v, "${header.") {
			v = srv.Set(v)
		}
		p[kv[i]] = v
	}
	return p
}

// startTask starts a SinkTask against props and stops it at cleanup.
func startTask(t testing.TB, props map[string]string) (*SinkTask, *taskCtx) {
	t.Helper()
	tc := newTaskCtx()
	task := (&Connector{}).NewTask().(*SinkTask)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := task.Start(ctx, tc, props); err != nil {
		t.Fatalf("start task: %v", err)
	}
	t.Cleanup(func() { _ = task.Stop(context.Background()) })
	return task, tc
}

// rec builds a sink record consumed from topic-partition at offset.
func rec(topic string, partition int32, offset int64, key any, value any) *sdk.SinkRecord {
	return &sdk.SinkRecord{
		Topic: topic, Partition: partition, Offset: offset,
		Key: key, Value: value,
		OriginalTopic: topic, OriginalPartition: partition, OriginalOffset: offset,
	}
}

// stored reads set/key through the client, nil when absent; set is the
// test's name for it (mapped through srv.Set).
func stored(t testing.TB, srv *aerotest.Cluster, set string, key any) *aerotest.Record {
	t.Helper()
	return srv.Get(t, set, key)
}

// positions returns a record's positions bin as topic-partition → offset.
func positionsOf(t testing.TB, r *aerotest.Record, bin string) map[string]int64 {
	t.Helper()
	if r == nil {
		return nil
	}
	raw, ok := r.Bins[bin]
	if !ok {
		return nil
	}
	m, ok := raw.(map[any]any)
	if !ok {
		t.Fatalf("positions bin %q is %T", bin, raw)
	}
	out := map[string]int64{}
	for k, v := range m {
		out[k.(string)] = v.(int64)
	}
	return out
}

func mustPut(t testing.TB, task *SinkTask, recs ...*sdk.SinkRecord) {
	t.Helper()
	if err := task.Put(context.Background(), recs); err != nil {
		t.Fatalf("put: %v", err)
	}
}

func keyName(i int) string { return "k" + strconv.Itoa(i) }

func errorsAs[T error](err error) (T, bool) {
	var target T
	ok := errors.As(err, &target)
	return target, ok
}

func describe(r reported) string {
	return fmt.Sprintf("%s-%d@%d: %v", r.rec.OriginalTopic, r.rec.OriginalPartition, r.rec.OriginalOffset, r.err)
}
