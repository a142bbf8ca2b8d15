package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/connectd/connectd/framework/herder"
	"github.com/connectd/connectd/framework/rest"
	"github.com/connectd/connectd/framework/rest/api"
	"github.com/connectd/connectd/framework/rest/resttest"
)

type cli struct {
	t   *testing.T
	url string
	h   *resttest.Herder
}

func newCLI(t *testing.T, h rest.Herder) *cli {
	t.Helper()
	srv, err := rest.NewServer(rest.Config{}, h)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)
	c := &cli{t: t, url: ts.URL}
	if rh, ok := h.(*resttest.Herder); ok {
		c.h = rh
	}
	return c
}

// run runs the CLI with --url appended and returns exit code, stdout, stderr.
func (c *cli) run(args ...string) (int, string, string) {
	c.t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), append(args, "--url", c.url), &out, &errb)
	return code, out.String(), errb.String()
}

func (c *cli) must(want int, args ...string) string {
	c.t.Helper()
	code, out, errOut := c.run(args...)
	if code != want {
		c.t.Fatalf("connectd %s: exit %d, want %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), code, want, out, errOut)
	}
	return out + errOut
}

func writeTemp(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestConnectorsCLI(t *testing.T) {
	c := newCLI(t, resttest.New())
	create := writeTemp(t, "orders.json", `{"name":"orders","config":{"connector.class":"`+resttest.SourceClass+`","tasks.max":2}}`)
	flat := writeTemp(t, "orders-flat.json", `{"name":"orders","connector.class":"`+resttest.SourceClass+`","tasks.max":"1"}`)
	props := writeTemp(t, "sink.properties", "name=sink/1\nconnector.class="+resttest.SinkClass+"\ntopics=t\n")

	if out := c.must(exitOK, "connectors", "create", "-f", create); out != "connector orders created\n" {
		t.Fatalf("create: %q", out)
	}
	if out := c.must(exitConflict, "connectors", "create", "-f", create); !strings.Contains(out, "Connector orders already exists (HTTP 409)") {
		t.Fatalf("duplicate: %q", out)
	}
	if out := c.must(exitOK, "connectors", "apply", "-f", flat); out != "connector orders updated\n" {
		t.Fatalf("apply: %q", out)
	}
	if out := c.must(exitOK, "connectors", "apply", "-f", props); out != "connector sink/1 created\n" {
		t.Fatalf("apply properties: %q", out)
	}
	out := c.must(exitOK, "connectors", "list")
	wantList := "NAME    TYPE    STATE    TASKS RUNNING  WORKER\norders  source  RUNNING  1/1            127.0.0.1:8083\nsink/1  sink    RUNNING  1/1            127.0.0.1:8083\n"
	if out != wantList {
		t.Fatalf("list table:\n%s\nwant\n%s", out, wantList)
	}
	var listed map[string]map[string]api.ConnectorStateInfo
	if err := json.Unmarshal([]byte(c.must(exitOK, "connectors", "list", "--output", "json")), &listed); err != nil || listed["sink/1"]["status"].Connector.State != "RUNNING" {
		t.Fatalf("list json: %v %v", listed, err)
	}
	var info api.ConnectorInfo
	if err := json.Unmarshal([]byte(c.must(exitOK, "connectors", "get", "sink/1", "--output", "json")), &info); err != nil || info.Config["topics"] != "t" || info.Type != "sink" {
		t.Fatalf("get json: %+v %v", info, err)
	}
	if out := c.must(exitOK, "connectors", "get", "orders"); !strings.Contains(out, "tasks.max        1") || !strings.Contains(out, "type: source") {
		t.Fatalf("get table: %q", out)
	}
	c.must(exitOK, "connectors", "pause", "orders")
	if out := c.must(exitOK, "connectors", "status", "orders"); !strings.Contains(out, "orders     source  PAUSED") || !strings.Contains(out, "0     PAUSED") {
		t.Fatalf("status table: %q", out)
	}
	c.must(exitOK, "connectors", "resume", "orders")
	c.h.FailTask("orders", 0, "boom\n\tat x")
	var plan api.ConnectorStateInfo
	if err := json.Unmarshal([]byte(c.must(exitOK, "connectors", "restart", "orders", "--include-tasks", "--only-failed", "--output", "json")), &plan); err != nil || plan.Tasks[0].State != "RESTARTING" {
		t.Fatalf("restart plan: %+v %v", plan, err)
	}
	if out := c.must(exitOK, "connectors", "restart", "orders"); out != "connector orders restarted\n" {
		t.Fatalf("restart: %q", out)
	}
	if out := c.must(exitOK, "connectors", "restart", "orders", "--task", "0"); out != "task orders-0 restarted\n" {
		t.Fatalf("restart task: %q", out)
	}
	c.must(exitNotFound, "connectors", "restart", "orders", "--task", "9")

	// Offsets.
	offs := writeTemp(t, "offs.json", `{"offsets":[{"partition":{"file":"a"},"offset":{"pos":9007199254740993}}]}`)
	if out := c.must(exitFailure, "connectors", "offsets", "alter", "orders", "-f", offs); !strings.Contains(out, "STOPPED") {
		t.Fatalf("alter running: %q", out)
	}
	c.must(exitOK, "connectors", "stop", "orders")
	c.must(exitOK, "connectors", "offsets", "alter", "orders", "-f", offs)
	if out := c.must(exitOK, "connectors", "offsets", "get", "orders"); !strings.Contains(out, `{"file":"a"}  {"pos":9007199254740993}`) {
		t.Fatalf("offsets table: %q", out)
	}
	c.must(exitOK, "connectors", "offsets", "reset", "orders")
	if out := c.must(exitOK, "connectors", "offsets", "get", "orders", "--output", "json"); !strings.Contains(out, `"offsets": []`) {
		t.Fatalf("offsets json: %q", out)
	}

	// Plugins.
	if out := c.must(exitOK, "plugins", "list"); !strings.Contains(out, resttest.SinkClass+"    sink    1.0.0") {
		t.Fatalf("plugins: %q", out)
	}
	if out := c.must(exitOK, "plugins", "list", "--all", "--output", "json"); !strings.Contains(out, `"type": "converter"`) {
		t.Fatalf("plugins --all: %q", out)
	}

	// Delete and not-found exit codes.
	c.must(exitOK, "connectors", "delete", "sink/1")
	for _, args := range [][]string{
		{"connectors", "get", "sink/1"},
		{"connectors", "status", "sink/1"},
		{"connectors", "delete", "sink/1"},
		{"connectors", "pause", "nope"},
		{"connectors", "offsets", "get", "nope"},
	} {
		if out := c.must(exitNotFound, args...); !strings.Contains(out, "(HTTP 404)") {
			t.Fatalf("%v: %q", args, out)
		}
	}
}

func TestConnectorsCLIUsageErrors(t *testing.T) {
	c := newCLI(t, resttest.New())
	bad := writeTemp(t, "bad.json", `{"config":{"connector.class":"x"}}`)
	for _, args := range [][]string{
		{"connectors", "get"},
		{"connectors", "get", "a", "b"},
		{"connectors", "create"},
		{"connectors", "create", "-f", "/nonexistent.json"},
		{"connectors", "create", "-f", bad},
		{"connectors", "list", "--output", "yaml"},
		{"connectors", "list", "--bogus"},
		{"connectors", "restart", "x", "--task", "1", "--include-tasks"},
		{"connectors", "offsets", "alter", "x"},
		{"connectors", "frobnicate"},
	} {
		if code, _, _ := c.run(args...); code != exitUsage {
			t.Errorf("%v: exit %d, want %d", args, code, exitUsage)
		}
	}
	// A server error that is neither 404 nor 409 is exit 1, with the message.
	code, _, errOut := c.run("connectors", "apply", "-f", writeTemp(t, "inv.json", `{"name":"x","connector.class":"no.Such"}`))
	if code != exitFailure || !strings.Contains(errOut, "Connector configuration is invalid") || !strings.Contains(errOut, "(HTTP 400)") {
		t.Fatalf("invalid config: %d %q", code, errOut)
	}
	// Nothing listening: exit 1.
	var out, e bytes.Buffer
	if code := run(context.Background(), []string{"connectors", "list", "--url", "http://127.0.0.1:1"}, &out, &e); code != exitFailure {
		t.Fatalf("unreachable worker: exit %d", code)
	}
}

// rebalancing answers creates with a rebalance conflict n times.
type rebalancing struct {
	*resttest.Herder
	n int
}

func (r *rebalancing) PutConnectorConfig(ctx context.Context, name string, p map[string]string, replace bool, s api.InitialState) (api.ConnectorInfo, bool, error) {
	if r.n > 0 {
		r.n--
		return api.ConnectorInfo{}, false, &herder.RebalanceError{Msg: "rebalance in progress", RetryAfter: time.Millisecond}
	}
	return r.Herder.PutConnectorConfig(ctx, name, p, replace, s)
}

func TestConnectorsCLIRetriesRebalance(t *testing.T) {
	h := &rebalancing{Herder: resttest.New(), n: 2}
	c := newCLI(t, h)
	f := writeTemp(t, "c.json", `{"name":"c","connector.class":"`+resttest.SourceClass+`"}`)
	c.must(exitOK, "connectors", "apply", "-f", f)
	if h.n != 0 {
		t.Fatalf("%d rebalance answers left; the CLI did not retry", h.n)
	}
	// Persisting conflicts end with exit 4 and the rebalance message.
	h.n = 100
	if out := c.must(exitConflict, "connectors", "apply", "-f", f, "--retries", "1"); !strings.Contains(out, "rebalance") {
		t.Fatalf("persisting rebalance: %q", out)
	}
}
