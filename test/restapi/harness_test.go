package restapi

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/connectd/connectd/framework/rest/api"
	"github.com/connectd/connectd/framework/rest/client"
	"github.com/connectd/connectd/internal/kafkatest"
)

const (
	user     = "ops"
	password = "worker-test-Passw0rd"
	// DatagenClass is the datagen plugin's class.
	datagenClass = "DatagenSource"
)

var (
	buildOnce sync.Once
	binDir    string
	buildErr  error
)

// binaries builds connectd and the datagen plugin once per test binary.
func binaries(t *testing.T) (connectd, datagen string) {
	t.Helper()
	buildOnce.Do(func() {
		binDir, buildErr = os.MkdirTemp("", "connectd-restapi-bin-")
		if buildErr != nil {
			return
		}
		for _, b := range []struct{ out, pkg string }{
			{"connectd", "github.com/connectd/connectd/cmd/connectd"},
			{"connectd-datagen", "github.com/connectd/connectd/connectors/datagen/cmd/connectd-datagen"},
		} {
			cmd := exec.Command("go", "build", "-o", filepath.Join(binDir, b.out), b.pkg)
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

// cluster is a set of worker processes sharing a group and topics.
type cluster struct {
	t         *testing.T
	dir       string
	bin       string
	pluginDir string
	creds     string
	group     string
	bootstrap string
	workers   []*workerProc
	// tlsConf, when set, makes the listeners https and is the clients'
	// TLS configuration.
	tlsConf *tls.Config
}

type workerProc struct {
	url  string
	cmd  *exec.Cmd
	log  string
	done chan error
}

func newCluster(t *testing.T, n int, extra map[string]string) *cluster {
	t.Helper()
	return newClusterTLS(t, n, extra, nil)
}

// newClusterTLS starts workers with https listeners when tlsConf is set;
// extra must then carry the listeners.https.ssl.* keys.
func newClusterTLS(t *testing.T, n int, extra map[string]string, tlsConf *tls.Config) *cluster {
	t.Helper()
	bootstrap := kafkatest.Bootstrap(t)
	connectd, datagen := binaries(t)
	dir := t.TempDir()
	c := &cluster{t: t, dir: dir, bin: connectd, pluginDir: filepath.Join(dir, "plugins"), bootstrap: bootstrap,
		group: kafkatest.UniqueName(t, "restapi"), tlsConf: tlsConf}
	if out, err := exec.Command(connectd, "plugin", "install", "--plugin-path", c.pluginDir, datagen).CombinedOutput(); err != nil {
		t.Fatalf("plugin install: %v\n%s", err, out)
	}
	hash, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	c.creds = filepath.Join(dir, "credentials")
	if err := os.WriteFile(c.creds, []byte(user+":"+string(hash)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		c.start(i, extra)
	}
	for _, w := range c.workers {
		c.waitHealthy(w)
	}
	t.Cleanup(c.stop)
	return c
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

func (c *cluster) start(i int, extra map[string]string) {
	t := c.t
	port := freePort(t)
	scheme := "http"
	if c.tlsConf != nil {
		scheme = "https"
	}
	props := map[string]string{
		"bootstrap.servers":                 c.bootstrap,
		"group.id":                          c.group,
		"config.storage.topic":              c.group + "-configs",
		"offset.storage.topic":              c.group + "-offsets",
		"status.storage.topic":              c.group + "-status",
		"config.storage.replication.factor": "1",
		"offset.storage.replication.factor": "1",
		"status.storage.replication.factor": "1",
		"offset.storage.partitions":         "3",
		"status.storage.partitions":         "2",
		"key.converter":                     "org.apache.kafka.connect.storage.StringConverter",
		"value.converter":                   "org.apache.kafka.connect.json.JsonConverter",
		"value.converter.schemas.enable":    "false",
		"offset.flush.interval.ms":          "500",
		"plugin.path":                       c.pluginDir,
		"listeners":                         fmt.Sprintf("%s://127.0.0.1:%d", scheme, port),
		"rest.advertised.host.name":         "127.0.0.1",
		"rest.auth.basic.credentials.file":  c.creds,
		"session.timeout.ms":                "6000",
		"heartbeat.interval.ms":             "1000",
		"scheduled.rebalance.max.delay.ms":  "0",
	}
	for k, v := range extra {
		props[k] = v
	}
	var b strings.Builder
	for k, v := range props {
		fmt.Fprintf(&b, "%s=%s\n", k, strings.ReplaceAll(v, `\`, `\\`))
	}
	propsFile := filepath.Join(c.dir, fmt.Sprintf("worker-%d.properties", i))
	if err := os.WriteFile(propsFile, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	logFile := filepath.Join(c.dir, fmt.Sprintf("worker-%d.log", i))
	lf, err := os.Create(logFile)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(c.bin, "worker", propsFile)
	cmd.Stdout, cmd.Stderr = lf, lf
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w := &workerProc{url: fmt.Sprintf("%s://127.0.0.1:%d", scheme, port), cmd: cmd, log: logFile, done: make(chan error, 1)}
	go func() { w.done <- cmd.Wait(); lf.Close() }()
	c.workers = append(c.workers, w)
}

func (c *cluster) clientOpts() []client.Option {
	opts := []client.Option{client.WithBasicAuth(user, password)}
	if c.tlsConf != nil {
		opts = append(opts, client.WithTLSConfig(c.tlsConf))
	}
	return opts
}

func (c *cluster) client(i int) *client.Client {
	cl, err := client.New(c.workers[i].url, append(c.clientOpts(), client.WithRebalanceRetries(20, 200*time.Millisecond, 2*time.Second))...)
	if err != nil {
		c.t.Fatal(err)
	}
	return cl
}

func (c *cluster) waitHealthy(w *workerProc) {
	t := c.t
	cl, _ := client.New(w.url, c.clientOpts()...)
	deadline := time.Now().Add(90 * time.Second)
	for {
		select {
		case err := <-w.done:
			t.Fatalf("worker %s exited during start-up: %v\n%s", w.url, err, tail(w.log))
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		h, err := cl.Health(ctx)
		cancel()
		if err == nil && h.Status == "healthy" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("worker %s not healthy after 90s (last: %+v %v)\n%s", w.url, h, err, tail(w.log))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// stop sends SIGTERM to every worker and waits for a clean exit.
func (c *cluster) stop() {
	for _, w := range c.workers {
		if w.cmd.ProcessState == nil {
			w.cmd.Process.Signal(syscall.SIGTERM)
		}
	}
	for _, w := range c.workers {
		select {
		case <-w.done:
		case <-time.After(30 * time.Second):
			w.cmd.Process.Kill()
			<-w.done
			c.t.Errorf("worker %s did not stop within 30s of SIGTERM\n%s", w.url, tail(w.log))
		}
	}
	if c.t.Failed() {
		for _, w := range c.workers {
			c.t.Logf("log of %s:\n%s", w.url, tail(w.log))
		}
	}
}

func (c *cluster) logs() string {
	var b strings.Builder
	for _, w := range c.workers {
		data, _ := os.ReadFile(w.log)
		b.Write(data)
	}
	return b.String()
}

func tail(path string) string {
	data, _ := os.ReadFile(path)
	if len(data) > 8000 {
		data = data[len(data)-8000:]
	}
	return string(data)
}

// eventually polls cond until it holds or the deadline passes.
func eventually(t *testing.T, timeout time.Duration, what string, cond func() (bool, string)) {
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

func waitState(t *testing.T, cl *client.Client, name, connState string, tasks int, taskState string) api.ConnectorStateInfo {
	t.Helper()
	var st api.ConnectorStateInfo
	eventually(t, 60*time.Second, name+" "+connState, func() (bool, string) {
		var err error
		st, err = cl.Status(context.Background(), name)
		if err != nil {
			return false, err.Error()
		}
		if st.Connector.State != connState || len(st.Tasks) != tasks {
			return false, fmt.Sprintf("%+v", st)
		}
		for _, ts := range st.Tasks {
			if ts.State != taskState {
				return false, fmt.Sprintf("%+v", st)
			}
		}
		return true, ""
	})
	return st
}

// raw does one HTTP request and returns code, headers and body. Like every
// client of the API it retries rebalance conflicts (409 with Retry-After),
// for up to 30 s.
func raw(t *testing.T, method, url, body string, auth bool) (int, http.Header, string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		code, hdr, b := rawOnce(t, method, url, body, auth)
		if code != http.StatusConflict || hdr.Get("Retry-After") == "" || time.Now().After(deadline) {
			return code, hdr, b
		}
		time.Sleep(250 * time.Millisecond)
	}
}

func rawOnce(t *testing.T, method, url, body string, auth bool) (int, http.Header, string) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if auth {
		req.SetBasicAuth(user, password)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var b bytes.Buffer
	b.ReadFrom(res.Body)
	return res.StatusCode, res.Header, b.String()
}
