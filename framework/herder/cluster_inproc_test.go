package herder

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/connectd/connectd/framework/configdef"
	"github.com/connectd/connectd/framework/herder/clusterstate"
	"github.com/connectd/connectd/framework/rest/api"
	"github.com/connectd/connectd/framework/worker"
	"github.com/connectd/connectd/internal/kafkatest"
	"github.com/connectd/connectd/internal/syncbuf"
	"github.com/connectd/connectd/plugins/host"
)

// The tests in this file run several herders in one process against the
// real broker, each driving recordRuntime: a stand-in for framework/worker
// that records what the herder asks it to run. They check the coordination
// itself (membership, leader fencing, assignment, config records);
// test/cluster runs real worker processes with real plugins.

type recordRuntime struct {
	mu         sync.Mutex
	h          *Herder
	connectors map[string]RuntimeTarget
	tasks      map[TaskID]map[string]string
	starts     map[TaskID]int
	fenced     map[string][]int
	failStarts map[TaskID]int // how many more starts of the task fail
}

func newRecordRuntime() *recordRuntime {
	return &recordRuntime{
		connectors: map[string]RuntimeTarget{},
		tasks:      map[TaskID]map[string]string{},
		starts:     map[TaskID]int{},
		fenced:     map[string][]int{},
		failStarts: map[TaskID]int{},
	}
}

func stateFor(t RuntimeTarget) State {
	switch clusterstate.TargetState(t) {
	case clusterstate.TargetPaused:
		return StatePaused
	case clusterstate.TargetStopped:
		return StateStopped
	}
	return StateRunning
}

func (r *recordRuntime) Validate(_ context.Context, props map[string]string) (configdef.ValidationResult, error) {
	res := configdef.ValidationResult{Name: props["connector.class"]}
	for _, k := range []string{"name", "connector.class", "tasks.max"} {
		v := props[k]
		cv := configdef.ConfigValue{Name: k, Value: &v, Visible: true}
		if k == "tasks.max" {
			if n, err := strconv.Atoi(v); v != "" && (err != nil || n < 1) {
				cv.Errors = []string{fmt.Sprintf("Invalid value %s for configuration tasks.max: must be at least 1", v)}
				res.ErrorCount++
			}
		}
		res.Configs = append(res.Configs, configdef.ConfigInfo{Value: cv})
	}
	return res, nil
}

func (r *recordRuntime) StartConnector(_ context.Context, name string, _ map[string]string, target RuntimeTarget, _ func(string)) error {
	r.mu.Lock()
	r.connectors[name] = target
	r.mu.Unlock()
	r.h.ConnectorState(name, stateFor(target), "")
	return nil
}

func (r *recordRuntime) ConnectorTaskConfigs(_ context.Context, name string, maxTasks int) ([]map[string]string, error) {
	out := make([]map[string]string, maxTasks)
	for i := range out {
		out[i] = map[string]string{"task.index": strconv.Itoa(i)}
	}
	return out, nil
}

func (r *recordRuntime) StopConnector(_ context.Context, name string) error {
	r.mu.Lock()
	delete(r.connectors, name)
	r.mu.Unlock()
	return nil
}

func (r *recordRuntime) StartTask(_ context.Context, id TaskID, _, taskProps map[string]string, target RuntimeTarget) error {
	r.mu.Lock()
	if r.failStarts[id] > 0 {
		// Like framework/worker when a task cannot start: an error, and
		// the runtime does not know the task.
		r.failStarts[id]--
		r.mu.Unlock()
		return errors.New("plugin refused to start")
	}
	r.tasks[id] = maps.Clone(taskProps)
	r.starts[id]++
	r.mu.Unlock()
	r.h.TaskState(id, stateFor(target), "")
	return nil
}

func (r *recordRuntime) StopTasks(_ context.Context, ids []TaskID) error {
	var stopped []TaskID
	r.mu.Lock()
	for _, id := range ids {
		if _, ok := r.tasks[id]; ok {
			stopped = append(stopped, id)
		}
		delete(r.tasks, id)
	}
	r.mu.Unlock()
	// Like framework/worker: a stopped task reports UNASSIGNED.
	for _, id := range stopped {
		r.h.TaskState(id, StateUnassigned, "")
	}
	return nil
}

func (r *recordRuntime) SetTargetState(_ context.Context, c string, target RuntimeTarget) error {
	r.mu.Lock()
	var ids []TaskID
	for id := range r.tasks {
		if id.Connector == c {
			ids = append(ids, id)
		}
	}
	_, conn := r.connectors[c]
	if conn {
		r.connectors[c] = target
	}
	r.mu.Unlock()
	if conn {
		r.h.ConnectorState(c, stateFor(target), "")
	}
	for _, id := range ids {
		r.h.TaskState(id, stateFor(target), "")
	}
	return nil
}

func (r *recordRuntime) RestartTask(_ context.Context, id TaskID) error {
	r.mu.Lock()
	if _, ok := r.tasks[id]; !ok {
		r.mu.Unlock()
		return fmt.Errorf("restart %s: %w", id, worker.ErrUnknownTask)
	}
	r.starts[id]++
	r.mu.Unlock()
	r.h.TaskState(id, StateRunning, "")
	return nil
}

func (r *recordRuntime) FenceZombies(_ context.Context, c string, n int) error {
	r.mu.Lock()
	r.fenced[c] = append(r.fenced[c], n)
	r.mu.Unlock()
	return nil
}

func (r *recordRuntime) RunningTasks() []TaskID {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []TaskID
	for id := range r.tasks {
		out = append(out, id)
	}
	return out
}

func (r *recordRuntime) running() map[TaskID]bool {
	out := map[TaskID]bool{}
	for _, id := range r.RunningTasks() {
		out[id] = true
	}
	return out
}

// directClient hands task configs to the leader's herder in-process, in
// place of the signed HTTP call.
type directClient struct {
	mu    sync.Mutex
	byURL map[string]*Herder
}

func (d *directClient) PutTaskConfigs(ctx context.Context, leaderURL, c string, configs []map[string]string) error {
	d.mu.Lock()
	h := d.byURL[leaderURL]
	d.mu.Unlock()
	if h == nil {
		return fmt.Errorf("no worker at %s", leaderURL)
	}
	return h.PutTaskConfigs(ctx, c, configs)
}

type cluster struct {
	t       *testing.T
	base    Config
	client  *directClient
	herders []*Herder
	rts     []*recordRuntime
	regs    []*prometheus.Registry
	// logs collects every worker's log lines; a failing test prints them.
	logs *syncbuf.Buffer
}

func newCluster(t *testing.T, eos bool) *cluster {
	bootstrap := kafkatest.Bootstrap(t)
	group := kafkatest.UniqueName(t, "g")
	admin := kafkatest.Admin(t)
	cfg := Config{
		GroupID:                 group,
		BootstrapServers:        bootstrap,
		ConfigTopic:             group + "-configs",
		StatusTopic:             group + "-status",
		OffsetsTopic:            group + "-offsets",
		SessionTimeout:          6 * time.Second,
		HeartbeatInterval:       time.Second,
		TaskShutdownTimeout:     2 * time.Second,
		MembershipPoll:          500 * time.Millisecond,
		StaticMembership:        true,
		ExactlyOnceSource:       eos,
		TopicTracking:           true,
		TopicTrackingAllowReset: true,
		Plugins:                 manifestCatalog(t),
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := EnsureTopics(ctx, admin, slog.Default(),
		TopicSpec{Purpose: "config", Key: "config.storage.topic", Name: cfg.ConfigTopic, Partitions: 1, ReplicationFactor: 1, ExactPartitions: 1},
		TopicSpec{Purpose: "status", Key: "status.storage.topic", Name: cfg.StatusTopic, Partitions: 5, ReplicationFactor: 1},
		TopicSpec{Purpose: "offsets", Key: "offset.storage.topic", Name: cfg.OffsetsTopic, Partitions: 5, ReplicationFactor: 1},
	); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { kafkatest.DeleteTopics(t, cfg.ConfigTopic, cfg.StatusTopic, cfg.OffsetsTopic) })
	logs := &syncbuf.Buffer{}
	t.Cleanup(func() {
		// Registered before any worker's Stop, so it runs after them and
		// includes their shutdown.
		if t.Failed() {
			t.Logf("worker logs:\n%s", logs.String())
		}
	})
	return &cluster{t: t, base: cfg, client: &directClient{byURL: map[string]*Herder{}}, logs: logs}
}

// manifestCatalog is a real plugin catalog holding manifests (no
// binaries: recordRuntime runs nothing) for a "Source" and a "Sink" class.
func manifestCatalog(t *testing.T) *host.Catalog {
	dir := t.TempDir()
	for class, typ := range map[string]string{"Source": "source", "Sink": "sink"} {
		m := fmt.Sprintf(`{"name":%q,"version":"1.0","type":%q,"binary":"x","sha256":"%064d","protocol_versions":[1]}`, class, typ, 0)
		if err := os.WriteFile(filepath.Join(dir, class+".json"), []byte(m), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	c, err := host.OpenCatalog(dir)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// testLogger logs a worker at debug level to stderr when HERDER_TEST_LOGS
// is set, and otherwise at info level to the cluster's sink, which a
// failing test prints.
func (c *cluster) testLogger(name string) *slog.Logger {
	if os.Getenv("HERDER_TEST_LOGS") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug})).With("w", name)
	}
	return slog.New(slog.NewTextHandler(c.logs, nil)).With("w", name)
}

// add starts one more worker.
func (c *cluster) add() (*Herder, *recordRuntime) {
	c.t.Helper()
	return c.addAs(fmt.Sprintf("http://127.0.0.1:%d", 18000+len(c.herders)))
}

// addAs starts one more worker advertising url.
func (c *cluster) addAs(url string) (*Herder, *recordRuntime) {
	c.t.Helper()
	i := len(c.herders)
	cfg := c.base
	cfg.WorkerURL = url
	cfg.Logger = c.testLogger(strconv.Itoa(i))
	rt := newRecordRuntime()
	reg := prometheus.NewRegistry()
	cfg.Metrics = reg
	h, err := New(cfg, c.client)
	if err != nil {
		c.t.Fatal(err)
	}
	rt.h = h
	c.client.mu.Lock()
	c.client.byURL[cfg.WorkerURL] = h
	c.client.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := h.Start(ctx, rt); err != nil {
		c.t.Fatal(err)
	}
	c.t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		h.Stop(ctx)
	})
	c.herders = append(c.herders, h)
	c.rts = append(c.rts, rt)
	c.regs = append(c.regs, reg)
	return h, rt
}

func (c *cluster) running() int {
	n := 0
	for _, h := range c.herders {
		if h.started.Load() {
			n++
		}
	}
	return n
}

func (c *cluster) leader() *Herder {
	for _, h := range c.herders {
		if h.IsLeader() {
			return h
		}
	}
	return nil
}

func (c *cluster) waitLeader() *Herder {
	c.t.Helper()
	var l *Herder
	kafkatest.Eventually(c.t, 30*time.Second, func() (bool, string) {
		l = c.leader()
		if l == nil {
			return false, "no leader"
		}
		// Every worker knows where to forward writes.
		for _, h := range c.herders {
			if !h.started.Load() {
				continue
			}
			a := h.configs.Snapshot().Assignment()
			if a == nil || a.Leader != l.cfg.WorkerURL || len(a.Workers) != c.running() {
				return false, fmt.Sprintf("%s has assignment %+v", h.cfg.WorkerURL, a)
			}
		}
		return true, ""
	})
	return l
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestClusterInProcAssignsAndRebalances(t *testing.T) {
	c := newCluster(t, false)
	c.add()
	c.add()
	c.add()
	l := c.waitLeader()
	ctx := ctxT(t)
	info, created, err := l.PutConnectorConfig(ctx, "c1", map[string]string{"connector.class": "Source", "tasks.max": "6"}, false, "")
	if err != nil || !created || info.Name != "c1" {
		t.Fatalf("create: %v %v %+v", err, created, info)
	}
	// 6 tasks spread 2/2/2, all RUNNING in the status topic.
	kafkatest.Eventually(t, 30*time.Second, func() (bool, string) {
		counts := ""
		for _, rt := range c.rts {
			n := len(rt.running())
			counts += strconv.Itoa(n) + " "
			if n != 2 {
				return false, "task counts " + counts
			}
		}
		st, err := c.herders[1].ConnectorStatus(ctx, "c1")
		if err != nil || len(st.Tasks) != 6 {
			return false, fmt.Sprintf("status %+v %v", st, err)
		}
		for _, ts := range st.Tasks {
			if ts.State != StateRunning {
				return false, fmt.Sprintf("task %d %s", ts.ID, ts.State)
			}
		}
		return true, ""
	})

	// A fourth worker takes a fair share; tasks that stay are not
	// restarted.
	before := map[TaskID]int{}
	for _, rt := range c.rts {
		rt.mu.Lock()
		maps.Copy(before, rt.starts)
		rt.mu.Unlock()
	}
	_, rt4 := c.add()
	kafkatest.Eventually(t, 30*time.Second, func() (bool, string) {
		n := len(rt4.running())
		total := 0
		for _, rt := range c.rts {
			total += len(rt.running())
		}
		return n >= 1 && total == 6, fmt.Sprintf("new worker runs %d, total %d", n, total)
	})
	restarted := 0
	for _, rt := range c.rts[:3] {
		rt.mu.Lock()
		for id := range rt.tasks {
			if rt.starts[id] != before[id] {
				restarted++
			}
		}
		rt.mu.Unlock()
	}
	if restarted != 0 {
		t.Fatalf("%d unaffected tasks were restarted by the join", restarted)
	}

	// The worker and rebalance metrics agree with what happened: one
	// leader, four workers in the assignment, six tasks between them, and
	// the join counted as a rebalance that took time on a worker that was
	// already there.
	leaders, tasks := 0.0, 0.0
	kafkatest.Eventually(t, 20*time.Second, func() (bool, string) {
		leaders, tasks = 0, 0
		for i, reg := range c.regs {
			leaders += gauge(t, reg, "connectd_worker_leader")
			tasks += gauge(t, reg, "connectd_worker_assigned_tasks")
			if w := gauge(t, reg, "connectd_cluster_workers"); w != 4 {
				return false, fmt.Sprintf("worker %d: connectd_cluster_workers = %v", i, w)
			}
			if r := gauge(t, reg, "connectd_worker_rebalancing"); r != 0 {
				return false, fmt.Sprintf("worker %d still rebalancing", i)
			}
		}
		return leaders == 1 && tasks == 6, fmt.Sprintf("leaders %v, assigned tasks %v", leaders, tasks)
	})
	if n := gauge(t, c.regs[0], "connectd_worker_rebalances_total"); n < 2 {
		t.Errorf("worker 0 counted %v rebalances; it saw at least the connector and the fourth worker", n)
	}
	var h dto.Metric
	if err := c.herders[0].rebal.duration.Write(&h); err != nil {
		t.Fatal(err)
	}
	if h.GetHistogram().GetSampleCount() < 2 || h.GetHistogram().GetSampleSum() <= 0 {
		t.Errorf("rebalance durations: %d observed, sum %vs; want the fourth worker's join to take time", h.GetHistogram().GetSampleCount(), h.GetHistogram().GetSampleSum())
	}
	if g := gauge(t, c.regs[3], "connectd_worker_assignment_generation"); g < 1 || g != gauge(t, c.regs[0], "connectd_worker_assignment_generation") {
		t.Errorf("generations differ: %v vs %v", g, gauge(t, c.regs[0], "connectd_worker_assignment_generation"))
	}

	// A worker leaves gracefully: its tasks run elsewhere at once.
	ctxStop, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	gone := c.herders[1]
	if err := gone.Stop(ctxStop); err != nil {
		t.Fatal(err)
	}
	kafkatest.Eventually(t, 20*time.Second, func() (bool, string) {
		total := 0
		for i, rt := range c.rts {
			if i != 1 {
				total += len(rt.running())
			}
		}
		return total == 6, fmt.Sprintf("%d tasks on the remaining workers", total)
	})
}

func TestClusterInProcConfigLifecycle(t *testing.T) {
	c := newCluster(t, true)
	h0, _ := c.add()
	h1, rt1 := c.add()
	l := c.waitLeader()
	other := h0
	if l == h0 {
		other = h1
	}
	ctx := ctxT(t)

	// A non-leader sends writes to the leader.
	_, _, err := other.PutConnectorConfig(ctx, "c", map[string]string{"connector.class": "Source", "tasks.max": "2"}, false, "")
	nl, ok := err.(*NotLeaderError)
	if !ok || nl.LeaderURL != l.cfg.WorkerURL {
		t.Fatalf("non-leader write: %v, want NotLeaderError for %s", err, l.cfg.WorkerURL)
	}
	if _, _, err := l.PutConnectorConfig(ctx, "c", map[string]string{"connector.class": "Source", "tasks.max": "2"}, false, ""); err != nil {
		t.Fatal(err)
	}
	if _, _, err := l.PutConnectorConfig(ctx, "c", map[string]string{"connector.class": "Source"}, false, ""); err == nil {
		t.Fatal("second create succeeded")
	} else if _, ok := err.(*AlreadyExistsError); !ok {
		t.Fatalf("second create: %T %v", err, err)
	}
	if _, _, err := l.PutConnectorConfig(ctx, "bad", map[string]string{"connector.class": "Source", "tasks.max": "0"}, false, ""); err == nil {
		t.Fatal("invalid config accepted")
	} else if br, ok := err.(*BadRequestError); !ok {
		t.Fatalf("invalid config: %T %v", err, err)
	} else if want := "tasks.max: Invalid value 0"; !strings.Contains(br.Msg, want) {
		t.Fatalf("message %q does not name the key", br.Msg)
	}
	waitTasks := func(n int) {
		t.Helper()
		kafkatest.Eventually(t, 30*time.Second, func() (bool, string) {
			got := 0
			for _, h := range []*Herder{h0, h1} {
				ti, err := h.TaskConfigs(ctx, "c")
				if err != nil || len(ti) != n {
					return false, fmt.Sprintf("task configs %d %v", len(ti), err)
				}
			}
			for _, rt := range c.rts {
				got += len(rt.running())
			}
			return got == n, fmt.Sprintf("%d tasks running", got)
		})
	}
	waitTasks(2)
	// First generation: no previous tasks to fence.
	fenced := func() []int {
		var all []int
		for _, rt := range c.rts {
			rt.mu.Lock()
			all = append(all, rt.fenced["c"]...)
			rt.mu.Unlock()
		}
		return all
	}
	if f := fenced(); len(f) != 0 {
		t.Fatalf("first generation fenced %v", f)
	}

	// Update: 3 tasks; the leader fences the 2 previous task producers
	// before the new generation.
	if _, _, err := l.PutConnectorConfig(ctx, "c", map[string]string{"connector.class": "Source", "tasks.max": "3"}, true, ""); err != nil {
		t.Fatal(err)
	}
	waitTasks(3)
	if f := fenced(); len(f) != 1 || f[0] != 2 {
		t.Fatalf("fenced %v, want [2]", f)
	}
	if n, ok := l.configs.Snapshot().Fencing("c"); !ok || n != 3 {
		t.Fatalf("tasks-fencing record %d %v, want 3", n, ok)
	}

	// Pause from a non-leader: tasks pause.
	if err := other.PauseConnector(ctx, "c"); err != nil {
		t.Fatal(err)
	}
	kafkatest.Eventually(t, 20*time.Second, func() (bool, string) {
		st, err := h1.ConnectorStatus(ctx, "c")
		if err != nil {
			return false, err.Error()
		}
		for _, ts := range st.Tasks {
			if ts.State != StatePaused {
				return false, fmt.Sprintf("%+v", st)
			}
		}
		return len(st.Tasks) == 3 && st.Connector.State == StatePaused, fmt.Sprintf("%+v", st)
	})
	// Stop: no tasks, connector STOPPED.
	if err := l.StopConnector(ctx, "c"); err != nil {
		t.Fatal(err)
	}
	waitTasks(0)
	kafkatest.Eventually(t, 20*time.Second, func() (bool, string) {
		st, err := h0.ConnectorStatus(ctx, "c")
		return err == nil && st.Connector.State == StateStopped && len(st.Tasks) == 0, fmt.Sprintf("%+v %v", st, err)
	})
	// Resume from STOPPED: tasks come back; the 3 producers of the last
	// started generation are fenced first.
	if err := other.ResumeConnector(ctx, "c"); err != nil {
		t.Fatal(err)
	}
	waitTasks(3)
	if f := fenced(); len(f) != 2 || f[1] != 3 {
		t.Fatalf("fenced %v, want [2 3]", f)
	}

	// Restart with includeTasks: every task restarts once.
	before := map[TaskID]int{}
	for _, rt := range c.rts {
		rt.mu.Lock()
		maps.Copy(before, rt.starts)
		rt.mu.Unlock()
	}
	plan, err := l.RestartConnector(ctx, "c", true, false)
	if err != nil || plan == nil || plan.Connector.State != StateRestarting || len(plan.Tasks) != 3 {
		t.Fatalf("restart plan %+v %v", plan, err)
	}
	kafkatest.Eventually(t, 20*time.Second, func() (bool, string) {
		n := 0
		for _, rt := range c.rts {
			rt.mu.Lock()
			for id, s := range rt.starts {
				if id.Connector == "c" && s > before[id] {
					n++
				}
			}
			rt.mu.Unlock()
		}
		return n == 3, fmt.Sprintf("%d tasks restarted", n)
	})

	// Delete: config, tasks and statuses disappear everywhere.
	if err := other.DeleteConnector(ctx, "c"); err == nil {
		t.Fatal("delete on a non-leader did not ask for forwarding")
	}
	if err := l.DeleteConnector(ctx, "c"); err != nil {
		t.Fatal(err)
	}
	kafkatest.Eventually(t, 20*time.Second, func() (bool, string) {
		for _, h := range []*Herder{h0, h1} {
			if names, _ := h.Connectors(ctx); len(names) != 0 {
				return false, fmt.Sprintf("connectors %v", names)
			}
			if _, err := h.ConnectorStatus(ctx, "c"); err == nil {
				return false, "status still there"
			}
		}
		return len(rt1.running()) == 0, "tasks still running"
	})
	if _, err := l.ConnectorInfo(ctx, "c"); err == nil {
		t.Fatal("deleted connector still has info")
	} else if _, ok := err.(*NotFoundError); !ok {
		t.Fatalf("%T %v", err, err)
	}
}

// A leader whose transactional producer is fenced (here by another client
// initialising the same transactional.id, as a new leader would) must not
// get any write through with it, must step down, rejoin and lead again.
func TestClusterInProcFencedLeaderStepsDown(t *testing.T) {
	c := newCluster(t, false)
	c.add()
	c.add()
	l := c.waitLeader()
	ctx := ctxT(t)
	if _, _, err := l.PutConnectorConfig(ctx, "a", map[string]string{"connector.class": "Source", "tasks.max": "1"}, false, ""); err != nil {
		t.Fatal(err)
	}
	usurper, err := kafka.NewProducer(&kafka.ConfigMap{"bootstrap.servers": c.base.BootstrapServers, "transactional.id": TransactionalID(c.base.GroupID)})
	if err != nil {
		t.Fatal(err)
	}
	defer usurper.Close()
	if err := usurper.InitTransactions(ctx); err != nil {
		t.Fatal(err)
	}
	// The deposed leader's next write fails with a fence, not silently.
	_, _, err = l.PutConnectorConfig(ctx, "b", map[string]string{"connector.class": "Source", "tasks.max": "1"}, false, "")
	if err == nil {
		t.Fatal("a fenced leader's write succeeded")
	}
	t.Logf("write after fence: %v", err)
	if l.configs.Snapshot().Contains("b") {
		t.Fatal("the fenced write became visible")
	}
	// The cluster recovers: some worker leads again (after rejoining) and
	// writes go through.
	kafkatest.Eventually(t, 40*time.Second, func() (bool, string) {
		nl := c.leader()
		if nl == nil {
			return false, "no leader"
		}
		_, _, err := nl.PutConnectorConfig(ctx, "b", map[string]string{"connector.class": "Source", "tasks.max": "1"}, false, "")
		return err == nil, fmt.Sprint(err)
	})
}

// gauge reads an unlabelled gauge or counter from reg (0 when absent).
func gauge(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() == name && len(f.GetMetric()) == 1 {
			m := f.GetMetric()[0]
			if m.Counter != nil {
				return m.GetCounter().GetValue()
			}
			return m.GetGauge().GetValue()
		}
	}
	return 0
}

// A worker that crashed (no LeaveGroup) and comes back under the same URL
// takes its place in the group at once: as a static member it replaces its
// previous incarnation instead of waiting for that one's session to expire.
// The same wait is what a whole cluster sees after a group coordinator
// restart, when every worker rejoins.
func TestClusterInProcRestartedWorkerReplacesItsPreviousIncarnation(t *testing.T) {
	c := newCluster(t, false)
	// Long enough that waiting for the dead incarnation cannot pass.
	c.base.SessionTimeout = 45 * time.Second
	c.base.RebalanceTimeout = 90 * time.Second
	c.add()
	c.waitLeader()

	// The previous incarnation of worker 18001: a static member with its
	// id that dies without leaving (librdkafka sends no LeaveGroup when a
	// static member closes).
	const url = "http://127.0.0.1:18001"
	prev, err := kafka.NewConsumer(&kafka.ConfigMap{
		"bootstrap.servers":             c.base.BootstrapServers,
		"group.id":                      c.base.GroupID,
		"group.instance.id":             WorkerID(url),
		"client.id":                     url,
		"partition.assignment.strategy": "cooperative-sticky",
		"session.timeout.ms":            int(c.base.SessionTimeout.Milliseconds()),
		"heartbeat.interval.ms":         1000,
		"max.poll.interval.ms":          int(c.base.RebalanceTimeout.Milliseconds()),
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := prev.Subscribe(c.base.ConfigTopic, nil); err != nil {
		t.Fatal(err)
	}
	kafkatest.Eventually(t, 30*time.Second, func() (bool, string) {
		prev.Poll(100)
		a, err := prev.Assignment()
		return err == nil && len(a) > 0 || c.leader() != nil && listedURL(c.leader(), url), "the previous incarnation has not joined"
	})
	prev.Close()

	start := time.Now()
	h, _ := c.addAs(url)
	kafkatest.Eventually(t, c.base.SessionTimeout/2, func() (bool, string) {
		return h.member.Joined(), "the restarted worker has not joined the group"
	})
	t.Logf("the restarted worker joined after %v (its previous session: %v)", time.Since(start).Round(time.Millisecond), c.base.SessionTimeout)
	c.waitLeader()
}

func listedURL(h *Herder, url string) bool {
	urls, err := h.member.Members(context.Background())
	if err != nil {
		return false
	}
	for _, u := range urls {
		if u == url {
			return true
		}
	}
	return false
}

// Two live workers advertising the same URL share a group.instance.id: the
// coordinator fences the older one, which reports it through Failed
// instead of running work it no longer owns.
func TestClusterInProcSameURLFencesTheOlderWorker(t *testing.T) {
	c := newCluster(t, false)
	old, _ := c.add()
	c.waitLeader()
	c.addAs(old.cfg.WorkerURL)
	select {
	case err := <-old.Failed():
		if !strings.Contains(err.Error(), "group.instance.id") {
			t.Fatalf("the failure does not say why: %v", err)
		}
		t.Logf("older worker: %v", err)
	case <-time.After(45 * time.Second):
		t.Fatal("the older worker was not told it was fenced")
	}
}

// A restart request for a task whose start failed starts it again (the
// runtime does not know such a task, which once made the request a 500).
func TestClusterInProcRestartStartsATaskWhoseStartFailed(t *testing.T) {
	c := newCluster(t, false)
	h, rt := c.add()
	c.waitLeader()
	ctx := ctxT(t)
	id := api.ConnectorTaskID{Connector: "c", Task: 0}
	rt.mu.Lock()
	rt.failStarts[toRuntimeID(id)] = 1
	rt.mu.Unlock()
	if _, _, err := h.PutConnectorConfig(ctx, "c", map[string]string{"connector.class": "Source", "tasks.max": "1"}, false, ""); err != nil {
		t.Fatal(err)
	}
	waitState := func(want string) {
		t.Helper()
		kafkatest.Eventually(t, 30*time.Second, func() (bool, string) {
			st, err := h.TaskStatus(ctx, id)
			return err == nil && st.State == want, fmt.Sprintf("task state %q (%v), want %s", st.State, err, want)
		})
	}
	waitState(StateFailed)
	if err := h.RestartTask(ctx, id); err != nil {
		t.Fatalf("restart of a task whose start failed: %v", err)
	}
	waitState(StateRunning)
	if !rt.running()[toRuntimeID(id)] {
		t.Fatal("the runtime does not run the task after the restart")
	}
}

// A change of work commits together with the assignment it makes necessary:
// a new connector's config and a new task generation are each followed in
// their transaction by the assignment, with no commit marker between them
// (a marker takes an offset of its own). That halves the serial
// config-topic transactions between a POST and a running task.
func TestClusterInProcNewWorkCommitsWithItsAssignment(t *testing.T) {
	c := newCluster(t, false)
	c.add()
	l := c.waitLeader()
	ctx := ctxT(t)
	if _, _, err := l.PutConnectorConfig(ctx, "c", map[string]string{"connector.class": "Source", "tasks.max": "2"}, false, ""); err != nil {
		t.Fatal(err)
	}
	kafkatest.Eventually(t, 30*time.Second, func() (bool, string) {
		n := len(c.rts[0].running())
		return n == 2, fmt.Sprintf("%d tasks running", n)
	})
	recs := kafkatest.ReadAll(t, c.base.ConfigTopic, kafkatest.ReadCommitted, 2*time.Second, 30*time.Second)
	followedByAssignment := func(key string) {
		t.Helper()
		for i, m := range recs {
			if string(m.Key) != key {
				continue
			}
			if i+1 == len(recs) {
				t.Fatalf("%s is the last config record; want the assignment after it", key)
			}
			next := recs[i+1]
			if string(next.Key) != "connectd-assignment" || next.TopicPartition.Offset != m.TopicPartition.Offset+1 {
				t.Errorf("%s at offset %d is followed by %s at offset %d; want the assignment in the same transaction (offset %d)",
					key, m.TopicPartition.Offset, next.Key, next.TopicPartition.Offset, m.TopicPartition.Offset+1)
			}
			return
		}
		t.Fatalf("no %s record in the config topic", key)
	}
	followedByAssignment("connector-c")
	followedByAssignment("commit-c")
}
