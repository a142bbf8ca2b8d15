package aerospike

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/connectd/connectd/connectors/aerospike/aerofake"
	"github.com/connectd/connectd/connectors/datagen"
	"github.com/connectd/connectd/internal/kafkatest"
)

const connectdPkg = "github.com/connectd/connectd/cmd/connectd"

// daemon is a `connectd worker` process with its REST API on loopback.
type daemon struct {
	t       *testing.T
	bin     string
	props   string
	url     string
	logPath string
	cmd     *exec.Cmd
	done    chan struct{}
}

// newDaemon writes worker.properties for a one-worker cluster and returns
// a daemon ready to start (and restart on the same port).
func newDaemon(t *testing.T, bootstrap, catalog string) *daemon {
	t.Helper()
	bin := builder.Build(t, connectdPkg)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	group := kafkatest.UniqueName(t, "cluster")
	topics := []string{group + "-configs", group + "-offsets", group + "-status"}
	t.Cleanup(func() { kafkatest.DeleteTopics(t, topics...) })
	props := strings.Join([]string{
		"bootstrap.servers=" + bootstrap,
		"group.id=" + group,
		"config.storage.topic=" + topics[0],
		"offset.storage.topic=" + topics[1],
		"status.storage.topic=" + topics[2],
		"config.storage.replication.factor=1",
		"offset.storage.replication.factor=1",
		"offset.storage.partitions=3",
		"status.storage.replication.factor=1",
		"status.storage.partitions=1",
		"key.converter=org.apache.kafka.connect.storage.StringConverter",
		"value.converter=org.apache.kafka.connect.json.JsonConverter",
		"value.converter.schemas.enable=false",
		"plugin.path=" + catalog,
		"listeners=http://" + addr,
		"exactly.once.source.support=enabled",
		"offset.flush.interval.ms=300",
		"session.timeout.ms=6000",
		"heartbeat.interval.ms=1000",
		"consumer.session.timeout.ms=6000",
		"consumer.heartbeat.interval.ms=1000",
		"task.shutdown.graceful.timeout.ms=5000",
		"task.restart.backoff.initial.ms=100",
	}, "\n") + "\n"
	tmp := t.TempDir()
	path := filepath.Join(tmp, "worker.properties")
	if err := os.WriteFile(path, []byte(props), 0o600); err != nil {
		t.Fatal(err)
	}
	return &daemon{t: t, bin: bin, props: path, url: "http://" + addr, logPath: filepath.Join(tmp, "worker.log")}
}

func (d *daemon) start() {
	d.t.Helper()
	logFile, err := os.OpenFile(d.logPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		d.t.Fatal(err)
	}
	defer logFile.Close()
	d.cmd = exec.Command(d.bin, "worker", d.props)
	d.cmd.Stdout, d.cmd.Stderr = logFile, logFile
	if err := d.cmd.Start(); err != nil {
		d.t.Fatal(err)
	}
	d.done = make(chan struct{})
	cmd, done := d.cmd, d.done
	go func() { _ = cmd.Wait(); close(done) }()
	d.t.Cleanup(func() {
		d.kill()
		if d.t.Failed() {
			raw, _ := os.ReadFile(d.logPath)
			lines := strings.Split(strings.TrimSpace(string(raw)), "\n")
			if len(lines) > 60 {
				lines = lines[len(lines)-60:]
			}
			d.t.Logf("connectd worker log tail:\n%s", strings.Join(lines, "\n"))
		}
	})
	kafkatest.Eventually(d.t, time.Minute, func() (bool, string) {
		select {
		case <-done:
			d.t.Fatalf("connectd worker exited at start-up; log in %s", d.logPath)
		default:
		}
		code, _ := d.call("GET", "/", nil)
		return code == http.StatusOK, "REST API not answering yet"
	})
}

func (d *daemon) kill() {
	if d.cmd == nil {
		return
	}
	select {
	case <-d.done:
		return
	default:
	}
	_ = d.cmd.Process.Signal(syscall.SIGKILL)
	<-d.done
}

func (d *daemon) stop() {
	d.t.Helper()
	_ = d.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-d.done:
	case <-time.After(40 * time.Second):
		d.kill()
		d.t.Fatal("connectd worker did not stop within 40s")
	}
}

func (d *daemon) call(method, path string, body any) (int, []byte) {
	var r io.Reader
	if body != nil {
		raw, _ := json.Marshal(body)
		r = bytes.NewReader(raw)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, method, d.url+path, r)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, []byte(err.Error())
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, out
}

// must calls the REST API and fails the test unless the status is one of ok.
func (d *daemon) must(method, path string, body any, ok ...int) []byte {
	d.t.Helper()
	var code int
	var out []byte
	// Writes answer 409 while the cluster rebalances: retry those.
	kafkatest.Eventually(d.t, time.Minute, func() (bool, string) {
		code, out = d.call(method, path, body)
		return code != http.StatusConflict && code != 0, fmt.Sprintf("%s %s: %d %s", method, path, code, out)
	})
	for _, c := range ok {
		if code == c {
			return out
		}
	}
	d.t.Fatalf("%s %s: %d %s", method, path, code, out)
	return nil
}

// state returns the connector state and its tasks' states.
func (d *daemon) state(name string) (string, []string) {
	code, out := d.call("GET", "/connectors/"+name+"/status", nil)
	if code != http.StatusOK {
		return fmt.Sprintf("HTTP %d", code), nil
	}
	var st struct {
		Connector struct{ State, Trace string }
		Tasks     []struct{ State, Trace string }
	}
	_ = json.Unmarshal(out, &st)
	var tasks []string
	for _, tk := range st.Tasks {
		if tk.State == "FAILED" {
			d.t.Fatalf("connector %s task FAILED: %s", name, tk.Trace)
		}
		tasks = append(tasks, tk.State)
	}
	return st.Connector.State, tasks
}

// The motivating scenario on the real daemon: DatagenSource (counter
// quickstart, exactly-once) → topic → AerospikeSink (increment), the
// `connectd worker` process SIGKILLed at random moments while the sink
// applies records, and restarted. Every counter ends at the exact expected
// sum, its positions bin at the last offset. Then the sink's offsets are
// reset through the REST API (stop, DELETE offsets, resume) and the topic
// is consumed again from the beginning: nothing in Aerospike changes.
func TestDaemonCounterPipeline(t *testing.T) {
	bootstrap := kafkatest.Bootstrap(t)
	env := newWorkerEnv(t)
	srv := startServer(t, aerofake.Config{})
	const (
		partitions  = 6
		tasks       = 2
		iterations  = 5000
		cardinality = 40
		seed        = 23
	)
	topic := kafkatest.Topic(t, kafkatest.Partitions(partitions))
	d := newDaemon(t, bootstrap, env.catalog)
	srcName, sinkName := kafkatest.UniqueName(t, "src"), kafkatest.UniqueName(t, "sink")
	d.start()
	d.must("POST", "/connectors", map[string]any{"name": srcName, "config": map[string]string{
		"connector.class": "DatagenSource", "tasks.max": fmt.Sprint(tasks),
		datagen.KeyTopic: topic, datagen.KeyQuickstart: datagen.Counter, datagen.KeyIterations: fmt.Sprint(iterations),
		datagen.KeyCardinality: fmt.Sprint(cardinality), datagen.KeySeed: fmt.Sprint(seed), datagen.KeyMaxInterval: "2",
	}}, http.StatusCreated)
	sinkCfg := clusterProps(srv)
	maps.Copy(sinkCfg, map[string]string{
		"connector.class": Class, "tasks.max": fmt.Sprint(tasks), "topics": topic,
		KeySet: srv.Set("counters"), KeyWriteMode: ModeIncrement,
		KeyBinsInclude: "amount", KeySendKey: "true",
	})
	d.must("POST", "/connectors", map[string]any{"name": sinkName, "config": sinkCfg}, http.StatusCreated)
	want, _ := datagen.ExpectedSums(seed, cardinality, tasks, iterations)

	r := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 5))
	kills := 0
	for kills < 5 {
		from := appliedSum(t, srv)
		if from == total(want) {
			t.Fatalf("everything was applied after %d kills; the test needs more records or quicker kills", kills)
		}
		kafkatest.Eventually(t, 2*time.Minute, func() (bool, string) {
			d.state(sinkName) // fails the test on a FAILED task
			return appliedSum(t, srv) > from, "the sink has not applied anything since the restart"
		})
		time.Sleep(time.Duration(r.IntN(800)) * time.Millisecond)
		applied := appliedSum(t, srv)
		d.kill()
		kills++
		t.Logf("kill %d: %d of %d units applied", kills, applied, total(want))
		d.start()
	}
	kafkatest.Eventually(t, 4*time.Minute, func() (bool, string) {
		d.state(sinkName)
		got := counters(t, srv, "counters")
		if total(got) > total(want) {
			t.Fatalf("%d units applied, more than the %d produced", total(got), total(want))
		}
		return maps.Equal(got, want), fmt.Sprintf("%d of %d units applied", total(got), total(want))
	})
	last, n := topicState(t, topic)
	if n != tasks*iterations {
		t.Fatalf("topic holds %d records, want %d", n, tasks*iterations)
	}
	checkCounters(t, srv, want, last)
	admin := kafkatest.Admin(t)
	ends := partitionEnds(last, topic)
	kafkatest.Eventually(t, time.Minute, func() (bool, string) { return committedAt(admin, sinkName, topic, ends) })
	t.Logf("%d SIGKILLs of the worker; every counter exact", kills)

	// Replay through the REST API.
	before := generations(t, srv, "counters")
	fake := fakeOnly(t, srv, "the server's write counter")
	var writes int64
	if fake != nil {
		writes = fake.Stats().Writes
	}
	d.must("PUT", "/connectors/"+sinkName+"/stop", nil, http.StatusAccepted, http.StatusNoContent)
	kafkatest.Eventually(t, time.Minute, func() (bool, string) {
		st, _ := d.state(sinkName)
		return st == "STOPPED", "connector state " + st
	})
	d.must("DELETE", "/connectors/"+sinkName+"/offsets", nil, http.StatusOK)
	if ok, _ := committedAt(admin, sinkName, topic, map[int32]int64{}); !ok {
		t.Fatal("offsets still committed after DELETE /connectors/{c}/offsets")
	}
	d.must("PUT", "/connectors/"+sinkName+"/resume", nil, http.StatusAccepted, http.StatusNoContent)
	kafkatest.Eventually(t, 2*time.Minute, func() (bool, string) {
		d.state(sinkName)
		return committedAt(admin, sinkName, topic, ends)
	})
	if after := generations(t, srv, "counters"); !maps.Equal(before, after) {
		t.Errorf("the replay changed generations: %v → %v", before, after)
	}
	if fake != nil {
		if w := fake.Stats().Writes; w != writes {
			t.Errorf("the replay wrote %d times to Aerospike", w-writes)
		}
	}
	checkCounters(t, srv, want, last)
	d.stop()
}
