package restapi

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/connectd/connectd/framework/rest/api"
	"github.com/connectd/connectd/framework/rest/client"
	"github.com/connectd/connectd/internal/kafkatest"
)

func jsonEq(t *testing.T, what string, code int, got, want string) {
	t.Helper()
	if code != 200 {
		t.Fatalf("%s: status %d, want 200; body %s", what, code, got)
	}
	var g, w any
	if err := json.Unmarshal([]byte(got), &g); err != nil {
		t.Fatalf("%s: body %q is not JSON: %v", what, got, err)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatal(err)
	}
	gb, _ := json.Marshal(g)
	wb, _ := json.Marshal(w)
	if string(gb) != string(wb) {
		t.Fatalf("%s:\n got  %s\n want %s", what, gb, wb)
	}
}

func wantError(t *testing.T, what string, code int, body string, wantCode int, parts ...string) {
	t.Helper()
	if code != wantCode {
		t.Fatalf("%s: status %d, want %d; body %s", what, code, wantCode, body)
	}
	var em struct {
		ErrorCode int    `json:"error_code"`
		Message   string `json:"message"`
	}
	if err := json.Unmarshal([]byte(body), &em); err != nil || em.ErrorCode != wantCode || em.Message == "" {
		t.Fatalf("%s: %q is not an error body with code %d", what, body, wantCode)
	}
	for _, p := range parts {
		if !strings.Contains(em.Message, p) {
			t.Fatalf("%s: message %q lacks %q", what, em.Message, p)
		}
	}
}

// TestRESTContractOnWorkers runs the endpoint catalogue against two real
// worker processes. Writes go through both workers, so whichever is not
// the leader forwards them.
func TestRESTContractOnWorkers(t *testing.T) {
	c := newCluster(t, 2, nil)
	ctx := context.Background()
	a, b := c.client(0), c.client(1)
	urlA, urlB := c.workers[0].url, c.workers[1].url
	topic := kafkatest.Topic(t)

	// GET / and /health.
	code, _, body := raw(t, "GET", urlA+"/", "", true)
	var si api.ServerInfo
	if code != 200 || json.Unmarshal([]byte(body), &si) != nil || si.Version == "" || si.KafkaClusterID == "" {
		t.Fatalf("GET /: %d %s", code, body)
	}
	code, _, body = raw(t, "GET", urlB+"/health", "", true)
	if code != 200 || !strings.Contains(body, `"status":"healthy"`) {
		t.Fatalf("GET /health: %d %s", code, body)
	}
	// Authentication is enforced on every worker.
	code, hdr, body := raw(t, "GET", urlB+"/connectors", "", false)
	wantError(t, "no credentials", code, body, 401, "authentication required")
	if !strings.Contains(hdr.Get("WWW-Authenticate"), "Basic") {
		t.Fatalf("WWW-Authenticate = %q", hdr.Get("WWW-Authenticate"))
	}

	// Plugins.
	ps, err := a.Plugins(ctx, true)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, p := range ps {
		found = found || (strings.HasSuffix(p.Class, datagenClass) && p.Type == "source")
	}
	if !found {
		t.Fatalf("plugins %+v lack %s", ps, datagenClass)
	}
	keys, err := b.PluginConfig(ctx, datagenClass)
	if err != nil {
		t.Fatal(err)
	}
	hasTopicKey := false
	for _, k := range keys {
		hasTopicKey = hasTopicKey || k.Name == "kafka.topic"
	}
	if !hasTopicKey {
		t.Fatalf("plugin config lacks kafka.topic: %+v", keys)
	}
	code, _, body = raw(t, "GET", urlA+"/connector-plugins/NoSuchPlugin/config", "", true)
	wantError(t, "unknown plugin", code, body, 404)
	res, err := a.Validate(ctx, datagenClass, map[string]string{"connector.class": datagenClass, "tasks.max": "1"})
	if err != nil || res.ErrorCount == 0 {
		t.Fatalf("validate without kafka.topic: %+v %v", res, err)
	}

	// Create through B, which forwards if it is not the leader.
	name := "orders/v1 ✓"
	esc := url.PathEscape(name)
	cfg := map[string]string{"connector.class": datagenClass, "tasks.max": "2", "kafka.topic": topic, "max.interval": "50"}
	createBody, _ := json.Marshal(map[string]any{"name": name, "config": cfg})
	code, hdr, body = raw(t, "POST", urlB+"/connectors", string(createBody), true)
	if code != 201 || hdr.Get("Location") != urlB+"/connectors/"+esc {
		t.Fatalf("create: %d %v %s", code, hdr, body)
	}
	var info api.ConnectorInfo
	if err := json.Unmarshal([]byte(body), &info); err != nil || info.Name != name || info.Type != "source" || info.Config["name"] != name || info.Config["kafka.topic"] != topic {
		t.Fatalf("create body: %s", body)
	}
	code, hdr, body = raw(t, "POST", urlA+"/connectors", string(createBody), true)
	wantError(t, "create again", code, body, 409, "already exists")
	if hdr.Get("Retry-After") != "" {
		t.Fatal("already-exists 409 has Retry-After")
	}
	waitState(t, a, name, "RUNNING", 2, "RUNNING")

	// Reads answer on both workers with the same shapes.
	for _, w := range []string{urlA, urlB} {
		code, _, body = raw(t, "GET", w+"/connectors", "", true)
		jsonEq(t, "list", code, body, mustJSON([]string{name}))
		code, _, body = raw(t, "GET", w+"/connectors/"+esc+"/config", "", true)
		jsonEq(t, "config", code, body, mustJSON(map[string]string{"connector.class": datagenClass, "tasks.max": "2", "kafka.topic": topic, "max.interval": "50", "name": name}))
		code, _, body = raw(t, "GET", w+"/connectors/"+esc, "", true)
		jsonEq(t, "info", code, body, mustJSON(map[string]any{"name": name, "type": "source",
			"config": map[string]string{"connector.class": datagenClass, "tasks.max": "2", "kafka.topic": topic, "max.interval": "50", "name": name},
			"tasks":  []any{map[string]any{"connector": name, "task": 0}, map[string]any{"connector": name, "task": 1}}}))
		code, _, body = raw(t, "GET", w+"/connectors?expand=status&expand=info", "", true)
		var exp map[string]map[string]json.RawMessage
		if code != 200 || json.Unmarshal([]byte(body), &exp) != nil || exp[name]["status"] == nil || exp[name]["info"] == nil {
			t.Fatalf("expand: %d %s", code, body)
		}
		code, _, body = raw(t, "GET", w+"/connectors/"+esc+"/tasks", "", true)
		var tasks []api.TaskInfo
		if code != 200 || json.Unmarshal([]byte(body), &tasks) != nil || len(tasks) != 2 || tasks[1].ID != (api.ConnectorTaskID{Connector: name, Task: 1}) || len(tasks[0].Config) == 0 {
			t.Fatalf("tasks: %d %s", code, body)
		}
		code, _, body = raw(t, "GET", w+"/connectors/"+esc+"/tasks/1/status", "", true)
		var ts api.TaskState
		if code != 200 || json.Unmarshal([]byte(body), &ts) != nil || ts.ID != 1 || ts.State != "RUNNING" || ts.WorkerID == "" {
			t.Fatalf("task status: %d %s", code, body)
		}
	}
	st, _ := a.Status(ctx, name)
	workers := map[string]bool{}
	for _, ts := range st.Tasks {
		workers[ts.WorkerID] = true
	}
	t.Logf("tasks run on %v", workers)

	// Error paths on the real stack.
	code, _, body = raw(t, "GET", urlA+"/connectors/nope", "", true)
	wantError(t, "unknown connector", code, body, 404, "nope")
	code, _, body = raw(t, "GET", urlA+"/connectors/nope/status", "", true)
	wantError(t, "unknown status", code, body, 404, "nope")
	code, _, body = raw(t, "GET", urlA+"/connectors/"+esc+"/tasks/9/status", "", true)
	wantError(t, "unknown task", code, body, 404)
	code, _, body = raw(t, "PUT", urlB+"/connectors/"+esc+"/config", `{"name":"other","connector.class":"DatagenSource"}`, true)
	wantError(t, "name mismatch", code, body, 400, "Connector name configuration (other) doesn't match connector name in the URL ("+name+")")
	code, _, body = raw(t, "PUT", urlB+"/connectors/bad/config", `{"connector.class":"DatagenSource","tasks.max":"1"}`, true)
	wantError(t, "invalid config", code, body, 400, "Connector configuration is invalid and contains the following", "kafka.topic")
	code, _, body = raw(t, "PUT", urlB+"/connectors/bad/config", `{"connector.class":"`, true)
	wantError(t, "malformed JSON", code, body, 400, "JSON")
	code, _, body = raw(t, "PATCH", urlA+"/connectors/"+esc+"/offsets", `{"offsets":[{"partition":{"a":"b"},"offset":{"c":1}}]}`, true)
	wantError(t, "alter running", code, body, 400, "STOPPED")
	if names, _ := a.Connectors(ctx); len(names) != 1 {
		t.Fatalf("rejected requests created connectors: %v", names)
	}

	// PUT (update) and PATCH through A.
	cfg["max.interval"] = "20"
	if _, created, err := a.PutConfig(ctx, name, cfg); err != nil || created {
		t.Fatalf("update: created=%v %v", created, err)
	}
	v := "30"
	if info, err := b.PatchConfig(ctx, name, map[string]*string{"max.interval": &v}); err != nil || info.Config["max.interval"] != "30" {
		t.Fatalf("patch: %+v %v", info, err)
	}
	waitState(t, b, name, "RUNNING", 2, "RUNNING")

	// Restarts.
	code, _, body = raw(t, "POST", urlB+"/connectors/"+esc+"/restart", "", true)
	if code != 204 || body != "" {
		t.Fatalf("plain restart: %d %s", code, body)
	}
	code, _, body = raw(t, "POST", urlA+"/connectors/"+esc+"/restart?includeTasks=true", "", true)
	var plan api.ConnectorStateInfo
	if code != 202 || json.Unmarshal([]byte(body), &plan) != nil || plan.Name != name || len(plan.Tasks) != 2 || plan.Tasks[0].State != "RESTARTING" {
		t.Fatalf("restart plan: %d %s", code, body)
	}
	waitState(t, a, name, "RUNNING", 2, "RUNNING")
	if err := b.RestartTask(ctx, name, 1); err != nil {
		t.Fatalf("restart task: %v", err)
	}
	waitState(t, a, name, "RUNNING", 2, "RUNNING")

	// Topics (KIP-558): the shape is {"<name>":{"topics":[...]}}; the
	// running tasks report the topic they write to, a reset empties the
	// set, and the tasks, still running, fill it again.
	topicsOf := func(url string) (int, []string) {
		code, _, body := raw(t, "GET", url+"/connectors/"+esc+"/topics", "", true)
		var topics map[string]struct {
			Topics []string `json:"topics"`
		}
		if code != 200 {
			return code, nil
		}
		if json.Unmarshal([]byte(body), &topics) != nil || len(topics) != 1 || topics[name].Topics == nil {
			t.Fatalf("topics: %d %s", code, body)
		}
		return code, topics[name].Topics
	}
	usesTopic := func(url string) func() (bool, string) {
		return func() (bool, string) {
			code, got := topicsOf(url)
			return code == 200 && slices.Equal(got, []string{topic}), fmt.Sprintf("topics via %s: %d %q, want [%q]", url, code, got, topic)
		}
	}
	kafkatest.Eventually(t, 30*time.Second, usesTopic(urlB))
	kafkatest.Eventually(t, 30*time.Second, usesTopic(urlA))

	// Pause, reset the topics while nothing writes, resume: the set is
	// empty until the resumed tasks write again.
	code, _, _ = raw(t, "PUT", urlB+"/connectors/"+esc+"/pause", "", true)
	if code != 202 {
		t.Fatalf("pause: %d", code)
	}
	waitState(t, a, name, "PAUSED", 2, "PAUSED")
	code, _, _ = raw(t, "PUT", urlB+"/connectors/"+esc+"/topics/reset", "", true)
	if code != 202 {
		t.Fatalf("topics reset: %d", code)
	}
	for _, u := range []string{urlA, urlB} {
		kafkatest.Eventually(t, 30*time.Second, func() (bool, string) {
			code, got := topicsOf(u)
			return code == 200 && len(got) == 0, fmt.Sprintf("topics via %s after reset: %d %q", u, code, got)
		})
	}
	code, _, _ = raw(t, "PUT", urlA+"/connectors/"+esc+"/resume", "", true)
	if code != 202 {
		t.Fatalf("resume: %d", code)
	}
	waitState(t, b, name, "RUNNING", 2, "RUNNING")
	kafkatest.Eventually(t, 30*time.Second, usesTopic(urlB))

	// A cluster-wide log level (KIP-976): set through one worker, applied
	// by both (the leader writes a logger-cluster-<ns> record to the config
	// topic); a worker-scoped change stays on its worker.
	code, _, body = raw(t, "PUT", urlB+"/admin/loggers/connectd.worker?scope=cluster", `{"level":"debug"}`, true)
	if code != 204 || body != "" {
		t.Fatalf("cluster-scope logger: %d %s", code, body)
	}
	for _, u := range []string{urlA, urlB} {
		kafkatest.Eventually(t, 30*time.Second, func() (bool, string) {
			code, _, body := raw(t, "GET", u+"/admin/loggers/connectd.worker", "", true)
			return code == 200 && strings.Contains(body, `"level":"DEBUG"`), fmt.Sprintf("logger via %s: %d %s", u, code, body)
		})
	}
	code, _, body = raw(t, "PUT", urlA+"/admin/loggers/connectd.herder", `{"level":"warn"}`, true)
	if code != 200 || !strings.Contains(body, "connectd.herder") {
		t.Fatalf("worker-scope logger: %d %s", code, body)
	}
	if code, _, body = raw(t, "GET", urlB+"/admin/loggers/connectd.herder", "", true); code != 200 || strings.Contains(body, `"WARN"`) {
		t.Fatalf("a worker-scoped level reached the other worker: %d %s", code, body)
	}
	code, _, body = raw(t, "PUT", urlA+"/admin/loggers/connectd?scope=cluster", `{"level":"loud"}`, true)
	wantError(t, "invalid cluster level", code, body, 404, "loud")

	// Stop, then offsets.
	code, _, _ = raw(t, "PUT", urlB+"/connectors/"+esc+"/stop", "", true)
	if code != 204 {
		t.Fatalf("stop: %d", code)
	}
	waitState(t, a, name, "STOPPED", 0, "")
	code, _, body = raw(t, "GET", urlA+"/connectors/"+esc+"/tasks", "", true)
	jsonEq(t, "tasks after stop", code, body, `[]`)
	var offs api.ConnectorOffsets
	eventually(t, 30*time.Second, "committed offsets", func() (bool, string) {
		var err error
		offs, err = b.Offsets(ctx, name)
		return err == nil && len(offs.Offsets) > 0, fmt.Sprint(offs, err)
	})
	if offs.Offsets[0].Partition == nil || offs.Offsets[0].Offset == nil {
		t.Fatalf("offsets shape: %+v", offs)
	}
	alter := api.ConnectorOffsets{Offsets: []api.ConnectorOffset{{Partition: offs.Offsets[0].Partition, Offset: offs.Offsets[0].Offset}}}
	msg, err := a.AlterOffsets(ctx, name, alter)
	if err != nil || !strings.Contains(msg, "altered successfully") {
		t.Fatalf("alter: %q %v", msg, err)
	}
	code, _, body = raw(t, "PATCH", urlA+"/connectors/"+esc+"/offsets", `{"offsets":[]}`, true)
	wantError(t, "empty alter", code, body, 400, "Partitions / offsets need to be provided for an alter offsets request")
	msg, err = b.ResetOffsets(ctx, name)
	if err != nil || !strings.Contains(msg, "reset successfully") {
		t.Fatalf("reset: %q %v", msg, err)
	}
	eventually(t, 30*time.Second, "offsets reset", func() (bool, string) {
		offs, err = a.Offsets(ctx, name)
		return err == nil && len(offs.Offsets) == 0, fmt.Sprint(offs, err)
	})

	// Delete through A.
	code, _, _ = raw(t, "DELETE", urlA+"/connectors/"+esc, "", true)
	if code != 204 {
		t.Fatalf("delete: %d", code)
	}
	eventually(t, 30*time.Second, "deleted on both", func() (bool, string) {
		_, e1 := a.Connector(ctx, name)
		_, e2 := b.Connector(ctx, name)
		return client.IsNotFound(e1) && client.IsNotFound(e2), fmt.Sprint(e1, e2)
	})

	// Secrets never appear in a log line.
	if strings.Contains(c.logs(), password) {
		t.Fatal("a worker logged the REST password")
	}
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}
