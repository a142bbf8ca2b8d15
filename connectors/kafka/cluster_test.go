package kafka

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	ckafka "github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"github.com/connectd/connectd/framework/herder"
	"github.com/connectd/connectd/framework/rest/api"
	"github.com/connectd/connectd/framework/rest/client"
	"github.com/connectd/connectd/internal/kafkatest"
)

const connectdPkg = "github.com/connectd/connectd/cmd/connectd"

// daemon is one `connectd worker` process of a test cluster.
type daemon struct {
	name, url, props, log string
	cmd                   *exec.Cmd
	exited                chan struct{}
}

type testCluster struct {
	t         *testing.T
	bin       string
	dir       string
	pluginDir string
	props     map[string]string
	workers   []*daemon
}

func newTestCluster(t *testing.T) *testCluster {
	t.Helper()
	b := builder
	c := &testCluster{t: t, bin: b.Build(t, connectdPkg), dir: t.TempDir()}
	c.pluginDir = filepath.Join(c.dir, "plugins")
	if out, err := exec.Command(c.bin, "plugin", "install", "--plugin-path", c.pluginDir, b.Build(t, pluginPkg)).CombinedOutput(); err != nil {
		t.Fatalf("plugin install: %v\n%s", err, out)
	}
	group := kafkatest.UniqueName(t, "cl")
	c.props = map[string]string{
		"bootstrap.servers":                 kafkatest.Bootstrap(t),
		"group.id":                          group,
		"config.storage.topic":              group + "-configs",
		"offset.storage.topic":              group + "-offsets",
		"status.storage.topic":              group + "-status",
		"config.storage.replication.factor": "1",
		"offset.storage.replication.factor": "1",
		"status.storage.replication.factor": "1",
		"offset.storage.partitions":         "5",
		"key.converter":                     "org.apache.kafka.connect.converters.ByteArrayConverter",
		"value.converter":                   "org.apache.kafka.connect.converters.ByteArrayConverter",
		"plugin.path":                       c.pluginDir,
		"session.timeout.ms":                "6000",
		"heartbeat.interval.ms":             "1000",
		"task.shutdown.graceful.timeout.ms": "3000",
		"exactly.once.source.support":       "enabled",
	}
	t.Cleanup(func() {
		for _, w := range c.workers {
			w.stop()
		}
		kafkatest.DeleteTopics(t, group+"-configs", group+"-offsets", group+"-status")
	})
	return c
}

func (c *testCluster) start() *daemon {
	c.t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		c.t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	w := &daemon{name: fmt.Sprintf("w%d", len(c.workers)+1), url: fmt.Sprintf("http://127.0.0.1:%d", port)}
	w.props = filepath.Join(c.dir, w.name+".properties")
	w.log = filepath.Join(c.dir, w.name+".log")
	var b strings.Builder
	for k, v := range c.props {
		fmt.Fprintf(&b, "%s=%s\n", k, v)
	}
	fmt.Fprintf(&b, "listeners=%s\n", w.url)
	if err := os.WriteFile(w.props, []byte(b.String()), 0o644); err != nil {
		c.t.Fatal(err)
	}
	logf, err := os.Create(w.log)
	if err != nil {
		c.t.Fatal(err)
	}
	w.cmd = exec.Command(c.bin, "worker", w.props)
	w.cmd.Stdout, w.cmd.Stderr = logf, logf
	w.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := w.cmd.Start(); err != nil {
		c.t.Fatal(err)
	}
	w.exited = make(chan struct{})
	go func() { _ = w.cmd.Wait(); logf.Close(); close(w.exited) }()
	c.workers = append(c.workers, w)
	kafkatest.Eventually(c.t, 90*time.Second, func() (bool, string) {
		select {
		case <-w.exited:
			c.t.Fatalf("%s exited while starting:\n%s", w.name, w.tail())
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		h, err := w.client(c.t).Health(ctx)
		return err == nil && h.Status == "healthy", fmt.Sprintf("%s health %+v %v", w.name, h, err)
	})
	return w
}

func (w *daemon) client(t *testing.T) *client.Client {
	cl, err := client.New(w.url, client.WithRebalanceRetries(20, 200*time.Millisecond, 2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	return cl
}

func (w *daemon) sigkill() {
	_ = w.cmd.Process.Signal(syscall.SIGKILL)
	<-w.exited
}

func (w *daemon) stop() {
	select {
	case <-w.exited:
		return
	default:
	}
	_ = w.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-w.exited:
	case <-time.After(30 * time.Second):
		w.sigkill()
	}
}

func (w *daemon) tail() string {
	b, _ := os.ReadFile(w.log)
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}

// placement returns, per worker ID, the tasks RUNNING there, and whether
// every one of want tasks is RUNNING.
func placement(t *testing.T, w *daemon, connector string, want int) (map[string][]int, bool, string) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	st, err := w.client(t).Status(ctx, connector)
	if err != nil {
		return nil, false, err.Error()
	}
	out := map[string][]int{}
	running := 0
	for _, ts := range st.Tasks {
		if ts.State == "RUNNING" {
			out[ts.WorkerID] = append(out[ts.WorkerID], ts.ID)
			running++
		}
	}
	return out, running == want && len(st.Tasks) == want, fmt.Sprintf("%+v", st)
}

// TestTwoWorkersFailover runs the connector on two `connectd worker`
// processes, SIGKILLs the worker running tasks mid-copy (twice, the second
// time the other one after the first rejoined), and checks that the tasks
// move to the survivor and the target still holds every source record
// exactly once, in order, byte for byte.
func TestTwoWorkersFailover(t *testing.T) {
	if testing.Short() {
		t.Skip("long cluster test; run without -short")
	}
	const partitions, perPartition, tasks = 6, 40_000, 4
	src := kafkatest.Topic(t, kafkatest.Partitions(partitions))
	target := src + ".replica"
	t.Cleanup(func() { kafkatest.DeleteTopics(t, target) })
	base := time.Now().Add(-time.Hour).Truncate(time.Millisecond)
	var msgs []*ckafka.Message
	for p := range int32(partitions) {
		for seq := range perPartition {
			msgs = append(msgs, e2eRecord(src, base, p, seq))
		}
	}
	produce(t, msgs...)
	want := kafkatest.ReadAll(t, src, kafkatest.ReadCommitted, 5*time.Second, 5*time.Minute)

	c := newTestCluster(t)
	w1, w2 := c.start(), c.start()
	bs := kafkatest.Bootstrap(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := w1.client(t).Create(ctx, "repl", map[string]string{
		"connector.class": Class, "tasks.max": fmt.Sprint(tasks),
		"source.bootstrap.servers": bs, "target.bootstrap.servers": bs,
		"topics": src, "target.topic.format": "${topic}.replica",
		// Small transactions (one per poll) keep the copy slow enough
		// that both kills land mid-copy.
		"poll.max.records": "50",
	}, api.InitialRunning); err != nil {
		t.Fatal(err)
	}

	// Kill whichever worker runs tasks, while it copies; the other takes
	// them over. Then the killed one rejoins and the other is killed.
	alive := []*daemon{w1, w2}
	for round := range 2 {
		var where map[string][]int
		kafkatest.Eventually(t, 2*time.Minute, func() (bool, string) {
			var ok bool
			var why string
			where, ok, why = placement(t, alive[0], "repl", tasks)
			return ok, why
		})
		n := countOn(t, kafkatest.A(), target)
		kafkatest.Eventually(t, 2*time.Minute, func() (bool, string) {
			m := countOn(t, kafkatest.A(), target)
			return m > n, fmt.Sprintf("no progress beyond %d records", n)
		})
		victim, survivor := alive[0], alive[1]
		if len(where[workerID(victim)]) == 0 {
			victim, survivor = survivor, victim
		}
		t.Logf("round %d: tasks %v; SIGKILL %s (%s) at %d committed records", round+1, where, victim.name, victim.url, countOn(t, kafkatest.A(), target))
		victim.sigkill()
		if countOn(t, kafkatest.A(), target) >= len(want) {
			t.Fatalf("copy finished before the kill of round %d", round+1)
		}
		kafkatest.Eventually(t, 2*time.Minute, func() (bool, string) {
			got, ok, why := placement(t, survivor, "repl", tasks)
			if !ok {
				return false, why
			}
			return len(got) == 1 && len(got[workerID(survivor)]) == tasks, fmt.Sprintf("tasks at %v, want all on %s", got, workerID(survivor))
		})
		if round == 0 {
			alive = []*daemon{survivor, c.start()}
		}
	}

	kafkatest.Eventually(t, 5*time.Minute, func() (bool, string) {
		n := countOn(t, kafkatest.A(), target)
		return n >= len(want), fmt.Sprintf("%d of %d records copied", n, len(want))
	})
	got := kafkatest.ReadAll(t, target, kafkatest.ReadCommitted, 5*time.Second, 5*time.Minute)
	compareCopies(t, want, got)
	if t.Failed() {
		for _, w := range c.workers {
			t.Logf("%s log tail:\n%s", w.name, w.tail())
		}
	}
}

// workerID is the ID the herder reports for a worker.
func workerID(w *daemon) string { return herder.WorkerID(w.url) }
