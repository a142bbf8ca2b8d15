// Package cluster tests connectd clusters of real `connectd worker`
// processes (built with go build) against the real Kafka broker, running
// the real DatagenSource plugin, driven through the REST API.
package cluster

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"github.com/connectd/connectd/framework/herder/clusterstate"
	"github.com/connectd/connectd/framework/rest/client"
	"github.com/connectd/connectd/internal/kafkatest"
	"github.com/connectd/connectd/internal/repo"
)

var (
	buildOnce sync.Once
	binDir    string
	buildErr  error
)

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := repo.Root()
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// binaries builds connectd and the datagen plugin once per test binary.
func binaries(t *testing.T) (connectd, datagen string) {
	t.Helper()
	buildOnce.Do(func() {
		binDir, buildErr = os.MkdirTemp("", "connectd-cluster-bin-")
		if buildErr != nil {
			return
		}
		root := repoRoot(t)
		for _, b := range []struct{ out, pkg string }{
			{"connectd", "./cmd/connectd"},
			{"connectd-datagen", "./connectors/datagen/cmd/connectd-datagen"},
		} {
			cmd := exec.Command("go", "build", "-o", filepath.Join(binDir, b.out), b.pkg)
			cmd.Dir = root
			if out, err := cmd.CombinedOutput(); err != nil {
				buildErr = fmt.Errorf("go build %s: %v\n%s", b.pkg, err, out)
				return
			}
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return filepath.Join(binDir, "connectd"), filepath.Join(binDir, "connectd-datagen")
}

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// cluster is a set of worker processes sharing one group and topics.
type cluster struct {
	t         *testing.T
	bin       string
	dir       string
	pluginDir string
	bootstrap string
	group     string
	topics    [3]string // config, offsets, status
	extra     map[string]string
	workers   []*workerProc
}

type workerProc struct {
	c       *cluster
	name    string
	url     string
	props   string
	cmd     *exec.Cmd
	logPath string
	exited  chan struct{}
	exitErr error
	stopped bool
}

func newCluster(t *testing.T, extra map[string]string) *cluster {
	t.Helper()
	bootstrap := kafkatest.Bootstrap(t)
	connectd, datagen := binaries(t)
	dir := t.TempDir()
	c := &cluster{t: t, bin: connectd, dir: dir, pluginDir: filepath.Join(dir, "plugins"), bootstrap: bootstrap, extra: extra}
	c.group = kafkatest.UniqueName(t, "cl")
	c.topics = [3]string{c.group + "-configs", c.group + "-offsets", c.group + "-status"}
	out, err := exec.Command(connectd, "plugin", "install", "--plugin-path", c.pluginDir, datagen).CombinedOutput()
	if err != nil {
		t.Fatalf("plugin install: %v\n%s", err, out)
	}
	t.Cleanup(func() {
		for _, w := range c.workers {
			w.kill()
		}
		// CLUSTER_LOGS=<dir> keeps the worker logs for inspection.
		if keep := os.Getenv("CLUSTER_LOGS"); keep != "" {
			for _, w := range c.workers {
				if b, err := os.ReadFile(w.logPath); err == nil {
					_ = os.WriteFile(filepath.Join(keep, t.Name()+"-"+w.name+".log"), b, 0o644)
				}
			}
		}
		kafkatest.DeleteTopics(t, c.topics[:]...)
	})
	return c
}

// props renders a worker.properties for a worker on port.
func (c *cluster) props(port int) map[string]string {
	p := map[string]string{
		"bootstrap.servers":                 c.bootstrap,
		"group.id":                          c.group,
		"config.storage.topic":              c.topics[0],
		"offset.storage.topic":              c.topics[1],
		"status.storage.topic":              c.topics[2],
		"config.storage.replication.factor": "1",
		"offset.storage.replication.factor": "1",
		"status.storage.replication.factor": "1",
		"offset.storage.partitions":         "5",
		"key.converter":                     "org.apache.kafka.connect.storage.StringConverter",
		"value.converter":                   "org.apache.kafka.connect.storage.StringConverter",
		"plugin.path":                       c.pluginDir,
		"listeners":                         fmt.Sprintf("http://127.0.0.1:%d", port),
		"session.timeout.ms":                "6000",
		"heartbeat.interval.ms":             "1000",
		"task.shutdown.graceful.timeout.ms": "3000",
		"offset.flush.interval.ms":          "1000",
		"exactly.once.source.support":       "enabled",
		"log.level":                         "INFO",
	}
	for k, v := range c.extra {
		p[k] = v
	}
	return p
}

func writeProps(t *testing.T, path string, props map[string]string) {
	t.Helper()
	keys := make([]string, 0, len(props))
	for k := range props {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%s=%s\n", k, props[k])
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// start launches one more worker and waits until its REST API is healthy.
func (c *cluster) start() *workerProc {
	c.t.Helper()
	port := freePort(c.t)
	name := fmt.Sprintf("w%d", len(c.workers)+1)
	w := &workerProc{c: c, name: name, url: fmt.Sprintf("http://127.0.0.1:%d", port),
		props: filepath.Join(c.dir, name+".properties"), logPath: filepath.Join(c.dir, name+".log"), exited: make(chan struct{})}
	writeProps(c.t, w.props, c.props(port))
	w.launch()
	c.workers = append(c.workers, w)
	w.waitHealthy(60 * time.Second)
	return w
}

func (w *workerProc) launch() {
	t := w.c.t
	logf, err := os.OpenFile(w.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	w.cmd = exec.Command(w.c.bin, "worker", w.props)
	w.cmd.Stdout, w.cmd.Stderr = logf, logf
	// The worker dies with the test binary even if the test panics (a
	// timeout skips cleanups): Pdeathsig fires when the thread that
	// started the child exits, so that thread stays locked until the
	// child is gone.
	w.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	w.exited = make(chan struct{})
	w.stopped = false
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		if err := w.cmd.Start(); err != nil {
			started <- err
			logf.Close()
			close(w.exited)
			return
		}
		started <- nil
		w.exitErr = w.cmd.Wait()
		logf.Close()
		close(w.exited)
	}()
	if err := <-started; err != nil {
		t.Fatal(err)
	}
}

func (w *workerProc) client() *client.Client {
	cl, err := client.New(w.url, client.WithRebalanceRetries(20, 200*time.Millisecond, 2*time.Second))
	if err != nil {
		w.c.t.Fatal(err)
	}
	return cl
}

func (w *workerProc) waitHealthy(timeout time.Duration) {
	t := w.c.t
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		h, err := w.client().Health(ctx)
		cancel()
		if err == nil && h.Status == "healthy" {
			return
		}
		select {
		case <-w.exited:
			t.Fatalf("%s exited while starting: %v\n%s", w.name, w.exitErr, w.logTail(40))
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s not healthy after %v (%+v, %v)\n%s", w.name, timeout, h, err, w.logTail(40))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (w *workerProc) signal(sig syscall.Signal) {
	if err := w.cmd.Process.Signal(sig); err != nil {
		w.c.t.Fatalf("signal %v to %s: %v", sig, w.name, err)
	}
}

func (w *workerProc) kill() {
	if w.cmd == nil || w.cmd.Process == nil {
		return
	}
	select {
	case <-w.exited:
		return
	default:
	}
	_ = w.cmd.Process.Signal(syscall.SIGCONT)
	_ = w.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-w.exited:
	case <-time.After(20 * time.Second):
		_ = w.cmd.Process.Kill()
		<-w.exited
	}
}

func (w *workerProc) log() string {
	b, _ := os.ReadFile(w.logPath)
	return string(b)
}

func (w *workerProc) logTail(n int) string {
	lines := strings.Split(strings.TrimRight(w.log(), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return w.name + " log:\n" + strings.Join(lines, "\n")
}

var startingTask = regexp.MustCompile(`msg="starting task".* connector=(\S+) task=(\d+) target=\S+ generation=(\d+)`)

// taskStart is one "starting task" log line of the herder.
type taskStart struct {
	connector  string
	task       int
	generation int32
}

// taskStartsIn parses the herder's "starting task" lines of a log.
func taskStartsIn(log string) []taskStart {
	var out []taskStart
	sc := bufio.NewScanner(strings.NewReader(log))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if m := startingTask.FindStringSubmatch(sc.Text()); m != nil {
			var ts taskStart
			ts.connector = m[1]
			fmt.Sscan(m[2], &ts.task)
			fmt.Sscan(m[3], &ts.generation)
			out = append(out, ts)
		}
	}
	return out
}

// taskStarts counts the herder's "starting task" lines per task in the
// worker's log.
func (w *workerProc) taskStarts(connector string) map[int]int {
	out := map[int]int{}
	for _, ts := range taskStartsIn(w.log()) {
		if ts.connector == connector {
			out[ts.task]++
		}
	}
	return out
}

func (c *cluster) logs() string {
	var b strings.Builder
	for _, w := range c.workers {
		b.WriteString(w.logTail(60))
		b.WriteString("\n")
	}
	return b.String()
}

func ctxT(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

func datagenConfig(topic string, tasks int) map[string]string {
	return map[string]string{
		"connector.class": "DatagenSource",
		"tasks.max":       fmt.Sprint(tasks),
		"kafka.topic":     topic,
		"max.interval":    "50",
	}
}

// placement returns worker_id -> running task ids of connector, when every
// one of want tasks is RUNNING.
func placement(ctx context.Context, w *workerProc, connector string, want int) (map[string][]int, string) {
	st, err := w.client().Status(ctx, connector)
	if err != nil {
		return nil, err.Error()
	}
	if len(st.Tasks) != want {
		return nil, fmt.Sprintf("%d of %d tasks have a status: %+v", len(st.Tasks), want, st)
	}
	out := map[string][]int{}
	for _, ts := range st.Tasks {
		if ts.State != "RUNNING" {
			return nil, fmt.Sprintf("task %d is %s on %s", ts.ID, ts.State, ts.WorkerID)
		}
		out[ts.WorkerID] = append(out[ts.WorkerID], ts.ID)
	}
	return out, ""
}

// assignments reads every assignment record of the config topic, in order.
func (c *cluster) assignments(t *testing.T) []clusterstate.Assignment {
	t.Helper()
	cons, err := kafka.NewConsumer(&kafka.ConfigMap{
		"bootstrap.servers": c.bootstrap, "group.id": c.group + "-test-reader",
		"isolation.level": "read_committed", "enable.auto.commit": false, "enable.partition.eof": true,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer cons.Close()
	topic := c.topics[0]
	if err := cons.Assign([]kafka.TopicPartition{{Topic: &topic, Partition: 0, Offset: kafka.OffsetBeginning}}); err != nil {
		t.Fatal(err)
	}
	var out []clusterstate.Assignment
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		switch e := cons.Poll(200).(type) {
		case *kafka.Message:
			if string(e.Key) == "connectd-assignment" && e.Value != nil {
				var a clusterstate.Assignment
				if err := json.Unmarshal(e.Value, &a); err != nil {
					t.Fatalf("assignment record: %v", err)
				}
				out = append(out, a)
			}
		case kafka.PartitionEOF:
			return out
		}
	}
	t.Fatal("config topic not read to its end")
	return nil
}

func (c *cluster) leaderURL(t *testing.T) string {
	as := c.assignments(t)
	if len(as) == 0 {
		t.Fatal("no assignment yet")
	}
	return as[len(as)-1].Leader
}

func (c *cluster) byURL(url string) *workerProc {
	for _, w := range c.workers {
		if w.url == url {
			return w
		}
	}
	return nil
}

// counterSeqs reads every committed datagen counter record of topic and
// counts each sequence number.
func counterSeqs(t *testing.T, bootstrap, topic string) map[int64]int {
	t.Helper()
	out := map[int64]int{}
	eachRecord(t, bootstrap, topic, func(m *kafka.Message) {
		var v struct {
			Seq *int64 `json:"seq"`
		}
		if err := json.Unmarshal(m.Value, &v); err != nil || v.Seq == nil {
			t.Fatalf("record %s: not a counter record: %v", m.Value, err)
		}
		out[*v.Seq]++
	})
	return out
}

// eachRecord calls fn for every record of topic a read_committed consumer
// sees up to the partitions' ends as of the call.
func eachRecord(t *testing.T, bootstrap, topic string, fn func(*kafka.Message)) {
	t.Helper()
	cons, err := kafka.NewConsumer(&kafka.ConfigMap{
		"bootstrap.servers": bootstrap, "group.id": "count-" + topic, "isolation.level": "read_committed",
		"enable.auto.commit": false, "auto.offset.reset": "earliest", "enable.partition.eof": true,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer cons.Close()
	md, err := cons.GetMetadata(&topic, false, 5000)
	if err != nil {
		t.Fatal(err)
	}
	var tps []kafka.TopicPartition
	ends := map[int32]int64{}
	for _, p := range md.Topics[topic].Partitions {
		_, hi, err := cons.QueryWatermarkOffsets(topic, p.ID, 5000)
		if err != nil {
			t.Fatal(err)
		}
		if hi > 0 {
			ends[p.ID] = hi
			tps = append(tps, kafka.TopicPartition{Topic: &topic, Partition: p.ID, Offset: kafka.OffsetBeginning})
		}
	}
	if len(tps) == 0 {
		return
	}
	if err := cons.Assign(tps); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for len(ends) > 0 && time.Now().Before(deadline) {
		switch e := cons.Poll(100).(type) {
		case *kafka.Message:
			if end, ok := ends[e.TopicPartition.Partition]; ok {
				if int64(e.TopicPartition.Offset) < end {
					fn(e)
				}
				if int64(e.TopicPartition.Offset)+1 >= end {
					delete(ends, e.TopicPartition.Partition)
				}
			}
		case kafka.PartitionEOF:
			if end, ok := ends[e.Partition]; ok && int64(e.Offset) >= end {
				delete(ends, e.Partition)
			}
		}
	}
	if len(ends) > 0 {
		t.Fatalf("topic %s not read to its end within 60 s", topic)
	}
}

func execWorker(ctx context.Context, bin, path string) (string, error) {
	args := []string{"worker"}
	if path != "" {
		args = append(args, path)
	}
	out, err := exec.CommandContext(ctx, bin, args...).CombinedOutput()
	return string(out), err
}

func exitCode(err error) int {
	if err == nil {
		return 0
	}
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	return -1
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return lines[len(lines)-1]
}
