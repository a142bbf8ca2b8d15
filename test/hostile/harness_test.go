package hostile

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/connectd/connectd/internal/kafkatest"
)

// datagenClass is the one plugin the suite installs: cheap, and it needs
// only a topic.
const datagenClass = "DatagenSource"

var (
	buildOnce sync.Once
	binDir    string
	buildErr  error
)

// binaries builds connectd and the datagen plugin once per test binary.
func binaries(t *testing.T) (connectd, datagen string) {
	t.Helper()
	buildOnce.Do(func() {
		binDir, buildErr = os.MkdirTemp("", "connectd-hostile-bin-")
		if buildErr != nil {
			return
		}
		for _, b := range []struct{ out, pkg string }{
			{"connectd", "github.com/connectd/connectd/cmd/connectd"},
			{"connectd-datagen", "github.com/connectd/connectd/connectors/datagen/cmd/connectd-datagen"},
		} {
			cmd := exec.Command("go", "build", "-o", filepath.Join(binDir, b.out), b.pkg)
			if out, err := cmd.CombinedOutput(); err != nil {
				buildErr = fmt.Errorf("go build %s: %w\n%s", b.pkg, err, out)
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

// group is one Connect cluster: its worker properties and internal topics.
// Workers of it are started one at a time (start), so a test can stop
// one and start another that replays the same topics.
type group struct {
	t         *testing.T
	dir       string
	bin       string
	pluginDir string
	id        string
	bootstrap string
	topic     string // the topic the test's datagen connectors write to
	workers   []*worker
}

type worker struct {
	url string
	cmd *exec.Cmd
	log string
	// exited is closed with err set once the process has exited.
	exited chan struct{}
	err    error
}

func newGroup(t *testing.T) *group {
	t.Helper()
	bootstrap := kafkatest.Bootstrap(t)
	connectd, datagen := binaries(t)
	dir := t.TempDir()
	g := &group{t: t, dir: dir, bin: connectd, pluginDir: filepath.Join(dir, "plugins"), bootstrap: bootstrap,
		id: kafkatest.UniqueName(t, "hostile")}
	if out, err := exec.Command(connectd, "plugin", "install", "--plugin-path", g.pluginDir, datagen).CombinedOutput(); err != nil {
		t.Fatalf("plugin install: %v\n%s", err, out)
	}
	// The broker does not create topics on demand; the connectors write
	// to this one.
	g.topic = kafkatest.Topic(t)
	t.Cleanup(func() {
		for _, w := range g.workers {
			g.stop(w)
		}
		kafkatest.DeleteTopics(t, g.configTopic(), g.offsetTopic(), g.statusTopic())
	})
	return g
}

func (g *group) configTopic() string { return g.id + "-configs" }
func (g *group) offsetTopic() string { return g.id + "-offsets" }
func (g *group) statusTopic() string { return g.id + "-status" }

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// start launches one more worker of the group and waits until it is
// healthy.
func (g *group) start() *worker {
	t := g.t
	t.Helper()
	port := freePort(t)
	props := map[string]string{
		"bootstrap.servers":                 g.bootstrap,
		"group.id":                          g.id,
		"config.storage.topic":              g.configTopic(),
		"offset.storage.topic":              g.offsetTopic(),
		"status.storage.topic":              g.statusTopic(),
		"config.storage.replication.factor": "1",
		"offset.storage.replication.factor": "1",
		"status.storage.replication.factor": "1",
		"offset.storage.partitions":         "3",
		"status.storage.partitions":         "2",
		"key.converter":                     "org.apache.kafka.connect.storage.StringConverter",
		"value.converter":                   "org.apache.kafka.connect.json.JsonConverter",
		"value.converter.schemas.enable":    "false",
		"offset.flush.interval.ms":          "500",
		"plugin.path":                       g.pluginDir,
		"listeners":                         fmt.Sprintf("http://127.0.0.1:%d", port),
		"rest.advertised.host.name":         "127.0.0.1",
		"session.timeout.ms":                "6000",
		"heartbeat.interval.ms":             "1000",
		"scheduled.rebalance.max.delay.ms":  "0",
	}
	var b strings.Builder
	for k, v := range props {
		fmt.Fprintf(&b, "%s=%s\n", k, strings.ReplaceAll(v, `\`, `\\`))
	}
	n := len(g.workers)
	propsFile := filepath.Join(g.dir, fmt.Sprintf("worker-%d.properties", n))
	if err := os.WriteFile(propsFile, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	logFile := filepath.Join(g.dir, fmt.Sprintf("worker-%d.log", n))
	lf, err := os.Create(logFile)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(g.bin, "worker", propsFile)
	cmd.Stdout, cmd.Stderr = lf, lf
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w := &worker{url: fmt.Sprintf("http://127.0.0.1:%d", port), cmd: cmd, log: logFile, exited: make(chan struct{})}
	go func() {
		w.err = cmd.Wait()
		lf.Close()
		close(w.exited)
	}()
	g.workers = append(g.workers, w)
	g.waitHealthy(w)
	return w
}

// alive fails the test if the worker process has exited.
func (g *group) alive(w *worker) {
	g.t.Helper()
	select {
	case <-w.exited:
		g.t.Fatalf("worker %s exited: %v\n%s", w.url, w.err, tail(w.log))
	default:
	}
}

func (g *group) waitHealthy(w *worker) {
	t := g.t
	t.Helper()
	eventually(t, 90*time.Second, "worker "+w.url+" healthy", func() (bool, string) {
		g.alive(w)
		res := do(context.Background(), w.url, "GET", "/health", nil, "")
		return res.code == http.StatusOK, res.String()
	})
}

// stop sends SIGTERM and waits for the exit; a worker that does not stop
// within 30 s is killed and the test fails.
func (g *group) stop(w *worker) {
	select {
	case <-w.exited:
		return
	default:
	}
	w.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-w.exited:
	case <-time.After(30 * time.Second):
		w.cmd.Process.Kill()
		<-w.exited
		g.t.Errorf("worker %s did not stop within 30s of SIGTERM\n%s", w.url, tail(w.log))
	}
	if g.t.Failed() {
		g.t.Logf("log of %s:\n%s", w.url, tail(w.log))
	}
}

func tail(path string) string {
	data, _ := os.ReadFile(path)
	if len(data) > 8000 {
		data = data[len(data)-8000:]
	}
	return string(data)
}

// eventually polls cond until it holds or the deadline passes.
func eventually(t testing.TB, timeout time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	last := ""
	for {
		ok, state := cond()
		if ok {
			return
		}
		last = state
		if time.Now().After(deadline) {
			t.Fatalf("%s: not reached within %v; last: %s", what, timeout, last)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// response is one answer, or the transport error that replaced it.
type response struct {
	code   int
	header http.Header
	body   []byte
	err    error
}

func (r response) String() string {
	if r.err != nil {
		return "error: " + r.err.Error()
	}
	b := r.body
	if len(b) > 300 {
		b = b[:300]
	}
	return fmt.Sprintf("%d %s", r.code, b)
}

// requestTimeout bounds every request: an answer that takes longer is a
// hang.
const requestTimeout = 30 * time.Second

var httpClient = &http.Client{Timeout: requestTimeout}

// do sends one request; escapedPath is used as it is (it may hold
// percent-escapes the router must decode).
func do(ctx context.Context, base, method, escapedPath string, body []byte, contentType string, headers ...string) response {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	u, err := url.Parse(base)
	if err != nil {
		return response{err: err}
	}
	path, query, _ := strings.Cut(escapedPath, "?")
	u.Opaque = "//" + u.Host + path
	u.RawQuery = query
	req, err := http.NewRequestWithContext(ctx, method, base, rd)
	if err != nil {
		return response{err: err}
	}
	req.URL = u
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := httpClient.Do(req)
	if err != nil {
		return response{err: err}
	}
	defer res.Body.Close()
	b, err := io.ReadAll(io.LimitReader(res.Body, 4<<20))
	return response{code: res.StatusCode, header: res.Header, body: b, err: err}
}

// retrying repeats a request answered 409 with Retry-After (a rebalance),
// as every client of the API does, for up to 30 s.
func retrying(ctx context.Context, base, method, path string, body []byte) response {
	deadline := time.Now().Add(30 * time.Second)
	for {
		res := do(ctx, base, method, path, body, "application/json")
		if res.err != nil || res.code != http.StatusConflict || res.header.Get("Retry-After") == "" || time.Now().After(deadline) {
			return res
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// checkErrorBody reports what is wrong with a 4xx or 5xx answer's body:
// it must be Kafka Connect's {"error_code": <the status>, "message": ...}.
func checkErrorBody(method string, res response) string {
	if method == http.MethodHead {
		return "" // no body by definition
	}
	var em struct {
		ErrorCode *int    `json:"error_code"`
		Message   *string `json:"message"`
	}
	if err := json.Unmarshal(res.body, &em); err != nil {
		return fmt.Sprintf("error body is not JSON: %v", err)
	}
	switch {
	case em.ErrorCode == nil || em.Message == nil:
		return "error body lacks error_code or message"
	case *em.ErrorCode != res.code:
		return fmt.Sprintf("error_code %d differs from the status %d", *em.ErrorCode, res.code)
	case strings.TrimSpace(*em.Message) == "":
		return "error body has an empty message"
	}
	return ""
}

// datagenConfig is a cheap, valid DatagenSource config writing to topic.
func datagenConfig(name, topic string) map[string]string {
	return map[string]string{
		"name":            name,
		"connector.class": datagenClass,
		"tasks.max":       "1",
		"kafka.topic":     topic,
		"max.interval":    "500",
	}
}

// status is GET /connectors/{name}/status.
type status struct {
	Connector struct {
		State string `json:"state"`
		Trace string `json:"trace"`
	} `json:"connector"`
	Tasks []struct {
		ID    int    `json:"id"`
		State string `json:"state"`
		Trace string `json:"trace"`
	} `json:"tasks"`
}

// waitRunning waits until the connector and its tasks tasks are RUNNING.
func waitRunning(t testing.TB, base, name string, tasks int) {
	t.Helper()
	eventually(t, 60*time.Second, name+" RUNNING", func() (bool, string) {
		res := do(context.Background(), base, "GET", "/connectors/"+url.PathEscape(name)+"/status", nil, "")
		if res.err != nil || res.code != http.StatusOK {
			return false, res.String()
		}
		var st status
		if err := json.Unmarshal(res.body, &st); err != nil {
			return false, err.Error()
		}
		if st.Connector.State != "RUNNING" || len(st.Tasks) != tasks {
			return false, string(res.body)
		}
		for _, ts := range st.Tasks {
			if ts.State != "RUNNING" {
				return false, string(res.body)
			}
		}
		return true, ""
	})
}

// createRunning creates a datagen connector (retrying rebalance answers)
// and waits until it runs.
func createRunning(t testing.TB, base, name, topic string) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"name": name, "config": datagenConfig(name, topic)})
	res := retrying(context.Background(), base, "POST", "/connectors", body)
	if res.err != nil || res.code != http.StatusCreated {
		t.Fatalf("create %s: %s", name, res)
	}
	waitRunning(t, base, name, 1)
}

// createWhenReady is the first create on a fresh worker: /health may
// answer 200 before the worker takes writes (a 409 without a known leader,
// or a 500 from a config topic whose metadata is not known yet; see
// TestHealthyMeansWritesWork), so until the first create succeeds those
// answers are retried and logged rather than failed. Everything after it
// is held to the contract.
func createWhenReady(t testing.TB, base, name, topic string) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"name": name, "config": datagenConfig(name, topic)})
	eventually(t, 60*time.Second, "first create on "+base, func() (bool, string) {
		res := do(context.Background(), base, "POST", "/connectors", body, "application/json")
		if res.err == nil && (res.code == http.StatusConflict || res.code >= 500) {
			t.Logf("first create, before the worker takes writes: %s", res)
		}
		// An earlier try may have been written before its answer was lost.
		exists := res.code == http.StatusConflict && bytes.Contains(res.body, []byte("already exists"))
		return res.err == nil && (res.code == http.StatusCreated || exists), res.String()
	})
	waitRunning(t, base, name, 1)
}

// deleteGone deletes a connector and waits until it is gone.
func deleteGone(t testing.TB, base, name string) {
	t.Helper()
	p := "/connectors/" + url.PathEscape(name)
	res := retrying(context.Background(), base, "DELETE", p, nil)
	if res.err != nil || (res.code != http.StatusNoContent && res.code != http.StatusNotFound) {
		t.Fatalf("delete %s: %s", name, res)
	}
	eventually(t, 30*time.Second, name+" gone", func() (bool, string) {
		res := do(context.Background(), base, "GET", p, nil, "")
		return res.code == http.StatusNotFound, res.String()
	})
}

// healthyAfter checks that the worker still does its job: GET / and
// /health answer 200, and a new connector is created, runs and is deleted.
func healthyAfter(t testing.TB, base, topic, name string) {
	t.Helper()
	if res := do(context.Background(), base, "GET", "/", nil, ""); res.err != nil || res.code != http.StatusOK || !bytes.Contains(res.body, []byte(`"version"`)) {
		t.Fatalf("GET / afterwards: %s", res)
	}
	eventually(t, 30*time.Second, "GET /health 200 afterwards", func() (bool, string) {
		res := do(context.Background(), base, "GET", "/health", nil, "")
		return res.code == http.StatusOK, res.String()
	})
	createRunning(t, base, name, topic)
	deleteGone(t, base, name)
}
