package heartbeat_test

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

	"github.com/connectd/connectd/connectors/kafka/heartbeat"
	"github.com/connectd/connectd/framework/rest/api"
	"github.com/connectd/connectd/framework/rest/client"
	"github.com/connectd/connectd/internal/kafkatest"
	"github.com/connectd/connectd/internal/mirrortest"
)

const (
	connectdPkg    = "github.com/connectd/connectd/cmd/connectd"
	heartbeatPkg   = "github.com/connectd/connectd/connectors/kafka/cmd/connectd-kafka-heartbeat"
	replicationPkg = "github.com/connectd/connectd/connectors/kafka/cmd/connectd-kafka-replication"
)

// worker is one `connectd worker` process whose producer writes to cluster.
type worker struct {
	url, log string
	cmd      *exec.Cmd
	exited   chan struct{}
}

// startWorker starts a worker on the cluster with the heartbeat and
// replication plugins installed; it is stopped and its topics deleted at
// cleanup.
func startWorker(t *testing.T, cluster kafkatest.Cluster) *worker {
	t.Helper()
	dir := t.TempDir()
	bin := builder.Build(t, connectdPkg)
	pluginDir := filepath.Join(dir, "plugins")
	for _, pkg := range []string{heartbeatPkg, replicationPkg} {
		if out, err := exec.Command(bin, "plugin", "install", "--plugin-path", pluginDir, builder.Build(t, pkg)).CombinedOutput(); err != nil {
			t.Fatalf("plugin install: %v\n%s", err, out)
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	w := &worker{url: fmt.Sprintf("http://%s", l.Addr()), log: filepath.Join(dir, "worker.log"), exited: make(chan struct{})}
	l.Close()
	group := kafkatest.UniqueName(t, "hbw")
	props := map[string]string{
		"bootstrap.servers": cluster.Bootstrap(t), "group.id": group, "listeners": w.url, "plugin.path": pluginDir,
		"config.storage.topic": group + "-configs", "offset.storage.topic": group + "-offsets", "status.storage.topic": group + "-status",
		"config.storage.replication.factor": "1", "offset.storage.replication.factor": "1", "status.storage.replication.factor": "1",
		"offset.storage.partitions": "1", "status.storage.partitions": "1",
		// JsonConverter defaults: heartbeats and their replicas must stay
		// MM2's bytes anyway (sdk.Spec.RawBytes).
		"key.converter":               "org.apache.kafka.connect.json.JsonConverter",
		"value.converter":             "org.apache.kafka.connect.json.JsonConverter",
		"exactly.once.source.support": "enabled", "task.shutdown.graceful.timeout.ms": "3000",
	}
	var sb strings.Builder
	for k, v := range props {
		fmt.Fprintf(&sb, "%s=%s\n", k, v)
	}
	propsFile := filepath.Join(dir, "worker.properties")
	if err := os.WriteFile(propsFile, []byte(sb.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	logf, err := os.Create(w.log)
	if err != nil {
		t.Fatal(err)
	}
	w.cmd = exec.Command(bin, "worker", propsFile)
	w.cmd.Stdout, w.cmd.Stderr = logf, logf
	w.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := w.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = w.cmd.Wait(); logf.Close(); close(w.exited) }()
	t.Cleanup(func() {
		_ = w.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-w.exited:
		case <-time.After(30 * time.Second):
			_ = w.cmd.Process.Kill()
			<-w.exited
		}
		if t.Failed() {
			t.Logf("worker %s log tail:\n%s", w.url, w.tail())
		}
		cluster.DeleteTopics(t, group+"-configs", group+"-offsets", group+"-status")
	})
	kafkatest.Eventually(t, 90*time.Second, func() (bool, string) {
		select {
		case <-w.exited:
			t.Fatalf("worker exited while starting:\n%s", w.tail())
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		h, err := w.client(t).Health(ctx)
		return err == nil && h.Status == "healthy", fmt.Sprintf("health %+v %v", h, err)
	})
	return w
}

func (w *worker) tail() string {
	b, _ := os.ReadFile(w.log)
	if len(b) > 6000 {
		b = b[len(b)-6000:]
	}
	return string(b)
}

func (w *worker) client(t *testing.T) *client.Client {
	cl, err := client.New(w.url, client.WithRebalanceRetries(20, 200*time.Millisecond, 2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	return cl
}

// create deploys a connector and waits until it and its tasks run.
func (w *worker) create(t *testing.T, name string, cfg map[string]string, tasks int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := w.client(t).Create(ctx, name, cfg, api.InitialRunning); err != nil {
		t.Fatal(err)
	}
	kafkatest.Eventually(t, 60*time.Second, func() (bool, string) {
		st, err := w.client(t).Status(context.Background(), name)
		if err != nil {
			return false, err.Error()
		}
		ok := st.Connector.State == "RUNNING" && len(st.Tasks) == tasks
		for _, ts := range st.Tasks {
			ok = ok && ts.State == "RUNNING"
		}
		return ok, fmt.Sprintf("status %+v", st)
	})
}

func heartbeatConfig(bootstrap, source, target string) map[string]string {
	return map[string]string{
		"connector.class": heartbeat.Class, "tasks.max": "1",
		heartbeat.KeyTargetBootstrap: bootstrap, heartbeat.KeyReplicationFactor: "1",
		heartbeat.KeySourceClusterAlias: source, heartbeat.KeyTargetClusterAlias: target,
	}
}

// alias returns a cluster alias unique to this run: the heartbeats topic
// is shared, and a test recognises its own heartbeats by their key.
func alias(t *testing.T, prefix string) string {
	name := kafkatest.UniqueName(t, prefix)
	return prefix + "-" + name[len(name)-8:]
}

// awaitHeartbeats reads topic with MM2's Heartbeat class until it holds n
// heartbeats of the flow source→target, and returns them.
func awaitHeartbeats(t *testing.T, tool *mirrortest.Tool, bootstrap, topic, source, target string, n int) []mirrortest.Record {
	t.Helper()
	var got []mirrortest.Record
	kafkatest.Eventually(t, 60*time.Second, func() (bool, string) {
		recs := tool.Read(t, bootstrap, topic, mirrortest.Heartbeat)
		got = mirrortest.Heartbeats(recs, source, target)
		return len(got) >= n, fmt.Sprintf("%d of %d heartbeats %s→%s in %s (%d records)", len(got), n, source, target, topic, len(recs))
	})
	return got
}

// checkBeats: each heartbeat's timestamp is its record's, and they come
// about a second apart.
func checkBeats(t *testing.T, beats []mirrortest.Record) {
	t.Helper()
	for i, b := range beats {
		if b.At == nil || b.At.Timestamp != b.Timestamp {
			t.Errorf("heartbeat %d: timestamp %d, record %+v", i, b.Timestamp, b.At)
		}
		if i == 0 {
			continue
		}
		if gap := b.Timestamp - beats[i-1].Timestamp; gap < 900 || gap > 3000 {
			t.Errorf("heartbeats %d and %d are %d ms apart, want about 1000", i-1, i, gap)
		}
	}
}

// TestHeartbeatsThroughWorker: a worker on cluster B runs
// KafkaHeartbeatSource; MM2's own Heartbeat class reads the beats from B's
// heartbeats topic, which the connector created compacted as MM2 does.
func TestHeartbeatsThroughWorker(t *testing.T) {
	tool := mirrortest.Build(t)
	b := kafkatest.B()
	bs := b.Bootstrap(t)
	w := startWorker(t, b)
	src, dst := alias(t, "src"), alias(t, "dst")
	w.create(t, "hb", heartbeatConfig(bs, src, dst), 1)

	beats := awaitHeartbeats(t, tool, bs, "heartbeats", src, dst, 3)
	checkBeats(t, beats)

	admin := b.Admin(t)
	res, err := admin.DescribeConfigs(t.Context(), []ckafka.ConfigResource{{Type: ckafka.ResourceTopic, Name: "heartbeats"}})
	if err != nil || res[0].Error.Code() != ckafka.ErrNoError {
		t.Fatalf("describe heartbeats: %v %v", err, res)
	}
	if p := res[0].Config["cleanup.policy"].Value; p != "compact" {
		t.Errorf("heartbeats topic has cleanup.policy=%s, want compact", p)
	}
}

// TestReplicatedHeartbeats: heartbeats written on cluster A and replicated
// to B by KafkaReplicationSource arrive as <alias of A>.heartbeats, and
// MM2's Heartbeat class reads them there.
func TestReplicatedHeartbeats(t *testing.T) {
	tool := mirrortest.Build(t)
	a, b := kafkatest.A(), kafkatest.B()
	wa, wb := startWorker(t, a), startWorker(t, b)
	aliasA, upstream := alias(t, "a"), alias(t, "up")
	remote := aliasA + ".heartbeats"
	t.Cleanup(func() { b.DeleteTopics(t, remote) })

	wa.create(t, "hb", heartbeatConfig(a.Bootstrap(t), upstream, aliasA), 1)
	wb.create(t, "repl", map[string]string{
		"connector.class": "KafkaReplicationSource", "tasks.max": "1",
		"source.bootstrap.servers": a.Bootstrap(t), "target.bootstrap.servers": b.Bootstrap(t),
		"source.cluster.alias": aliasA, "topics": "heartbeats", "replication.policy.class": "DefaultReplicationPolicy",
	}, 1)

	beats := awaitHeartbeats(t, tool, b.Bootstrap(t), remote, upstream, aliasA, 3)
	checkBeats(t, beats)

	// MM2's MirrorClient finds A upstream of B, one hop away, from the
	// replicated heartbeats topic.
	if up := tool.Upstream(t, b.Bootstrap(t)); up.Hops[aliasA] != 1 {
		t.Errorf("MirrorClient on B: upstream clusters %v, hops %v; want %s at 1 hop", up.Clusters, up.Hops, aliasA)
	}
}
