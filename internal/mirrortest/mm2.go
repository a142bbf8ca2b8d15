package mirrortest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/connectd/connectd/framework/rest/api"
	"github.com/connectd/connectd/framework/rest/client"
	"github.com/connectd/connectd/internal/kafkatest"
	"github.com/connectd/connectd/internal/repo"
)

// mm2Pom resolves Kafka Connect 4.1.1 with MirrorMaker 2's connectors; the
// benchmarks start Kafka Connect from the same pom.
const mm2Pom = "bench/kafkaconnect/pom.xml"

// MM2Classpath returns the classpath of Kafka Connect 4.1.1 with MM2's
// connectors, resolved by Maven from Maven Central and cached under the
// user's cache directory while the pom is unchanged.
func MM2Classpath(t testing.TB) string {
	t.Helper()
	needTools(t)
	root, err := repo.Root()
	if err != nil {
		t.Fatalf("mirrortest: %v", err)
	}
	pom, err := os.ReadFile(filepath.Join(root, mm2Pom))
	if err != nil {
		t.Fatalf("mirrortest: %v", err)
	}
	sum := sha256.Sum256(pom)
	cache, err := os.UserCacheDir()
	if err != nil {
		t.Fatalf("mirrortest: %v", err)
	}
	dir := filepath.Join(cache, "connectd", "mm2-classpath", hex.EncodeToString(sum[:8]))
	file := filepath.Join(dir, "classpath.txt")
	if cp, ok := jarsExist(file); ok {
		return cp
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatalf("mirrortest: %v", err)
	}
	tmp := fmt.Sprintf("%s.%d", file, os.Getpid())
	goals := []string{"-f", filepath.Join(root, mm2Pom), "org.apache.maven.plugins:maven-dependency-plugin:3.8.1:build-classpath", "-Dmdep.outputFile=" + tmp}
	if err := maven(t, dir, goals); err != nil {
		t.Fatalf("mirrortest: resolving MirrorMaker 2: %v", err)
	}
	if err := os.Rename(tmp, file); err != nil {
		t.Fatalf("mirrortest: %v", err)
	}
	cp, ok := jarsExist(file)
	if !ok {
		t.Fatalf("mirrortest: %s names missing jars", file)
	}
	return cp
}

func jarsExist(file string) (string, bool) {
	b, err := os.ReadFile(file)
	if err != nil {
		return "", false
	}
	cp := strings.TrimSpace(string(b))
	for _, jar := range strings.Split(cp, string(os.PathListSeparator)) {
		if _, err := os.Stat(jar); err != nil {
			return "", false
		}
	}
	return cp, cp != ""
}

// MM2 is a Kafka Connect 4.1.1 distributed worker with MirrorMaker 2's
// connectors, like an MM2 deployment on Connect: its producer writes to
// the cluster it was started on.
type MM2 struct {
	URL    string
	log    string
	cmd    *exec.Cmd
	exited chan struct{}
}

// StartMM2 starts a worker on the cluster at bootstrap, with its own group
// and internal topics (deleted at cleanup), and waits until its REST API
// answers. It is stopped at cleanup.
func StartMM2(t testing.TB, cluster kafkatest.Cluster) *MM2 {
	t.Helper()
	cp := MM2Classpath(t)
	bootstrap := cluster.Bootstrap(t)
	dir := t.TempDir()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	m := &MM2{URL: "http://" + l.Addr().String(), log: filepath.Join(dir, "connect.log"), exited: make(chan struct{})}
	l.Close()
	group := kafkatest.UniqueName(t, "mm2")
	topics := []string{group + "-configs", group + "-offsets", group + "-status"}
	props := fmt.Sprintf(`bootstrap.servers=%s
group.id=%s
config.storage.topic=%s
offset.storage.topic=%s
status.storage.topic=%s
config.storage.replication.factor=1
offset.storage.replication.factor=1
status.storage.replication.factor=1
offset.storage.partitions=1
status.storage.partitions=1
key.converter=org.apache.kafka.connect.converters.ByteArrayConverter
value.converter=org.apache.kafka.connect.converters.ByteArrayConverter
listeners=%s
offset.flush.interval.ms=1000
`, bootstrap, group, topics[0], topics[1], topics[2], m.URL)
	log4j := "status = error\nrootLogger.level = INFO\nrootLogger.appenderRef.file.ref = FILE\n" +
		"appender.file.type = File\nappender.file.name = FILE\nappender.file.fileName = " + m.log + "\n" +
		"appender.file.layout.type = PatternLayout\nappender.file.layout.pattern = [%d] %p %m (%c)%n\n"
	propsFile, log4jFile := filepath.Join(dir, "worker.properties"), filepath.Join(dir, "log4j2.properties")
	if err := os.WriteFile(propsFile, []byte(props), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(log4jFile, []byte(log4j), 0o644); err != nil {
		t.Fatal(err)
	}
	m.cmd = exec.Command("java", "-Xms128M", "-Xmx768M", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
		"-Djava.awt.headless=true", "-Dlog4j2.configurationFile="+log4jFile,
		"-cp", cp, "org.apache.kafka.connect.cli.ConnectDistributed", propsFile)
	out, err := os.Create(filepath.Join(dir, "stdout.log"))
	if err != nil {
		t.Fatal(err)
	}
	m.cmd.Stdout, m.cmd.Stderr = out, out
	m.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := m.cmd.Start(); err != nil {
		t.Fatalf("mirrortest: starting Kafka Connect: %v", err)
	}
	go func() { _ = m.cmd.Wait(); out.Close(); close(m.exited) }()
	t.Cleanup(func() {
		_ = m.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-m.exited:
		case <-time.After(20 * time.Second):
			_ = m.cmd.Process.Kill()
			<-m.exited
		}
		if t.Failed() {
			t.Logf("MM2 worker log tail:\n%s", m.Tail())
		}
		cluster.DeleteTopics(t, topics...)
	})
	kafkatest.Eventually(t, 120*time.Second, func() (bool, string) {
		select {
		case <-m.exited:
			t.Fatalf("mirrortest: Kafka Connect exited while starting:\n%s", m.Tail())
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		_, err := m.client(t).Connectors(ctx)
		return err == nil, fmt.Sprintf("Kafka Connect REST at %s: %v", m.URL, err)
	})
	return m
}

func (m *MM2) client(t testing.TB) *client.Client {
	cl, err := client.New(m.URL, client.WithRebalanceRetries(30, 200*time.Millisecond, 2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	return cl
}

// Tail is the end of the worker's log.
func (m *MM2) Tail() string {
	b, _ := os.ReadFile(m.log)
	if len(b) == 0 {
		b, _ = os.ReadFile(filepath.Join(filepath.Dir(m.log), "stdout.log"))
	}
	if len(b) > 8000 {
		b = b[len(b)-8000:]
	}
	return string(b)
}

// Create deploys an MM2 connector and waits until it runs with at least
// one running task (none when minTasks is 0).
func (m *MM2) Create(t testing.TB, name string, cfg map[string]string, minTasks int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, err := m.client(t).Create(ctx, name, cfg, api.InitialRunning); err != nil {
		t.Fatalf("mirrortest: creating %s: %v", name, err)
	}
	kafkatest.Eventually(t, 90*time.Second, func() (bool, string) {
		st, err := m.client(t).Status(context.Background(), name)
		if err != nil {
			return false, err.Error()
		}
		if st.Connector.State == "FAILED" {
			t.Fatalf("mirrortest: %s failed: %s", name, st.Connector.Trace)
		}
		running := 0
		for _, ts := range st.Tasks {
			if ts.State == "FAILED" {
				t.Fatalf("mirrortest: %s task %d failed: %s", name, ts.ID, ts.Trace)
			}
			if ts.State == "RUNNING" {
				running++
			}
		}
		return st.Connector.State == "RUNNING" && running >= minTasks, fmt.Sprintf("%s status %+v", name, st)
	})
}
