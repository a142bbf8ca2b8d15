package rest_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/connectd/connectd/framework/herder"
	"github.com/connectd/connectd/framework/rest"
	"github.com/connectd/connectd/framework/rest/api"
	"github.com/connectd/connectd/framework/rest/resttest"
)

const src = resttest.SourceClass

func TestRootAndHealth(t *testing.T) {
	e := newEnv(t, rest.Config{})
	e.do("GET", "/", nil).want(t, 200, `{"version":"test","commit":"0000000","kafka_cluster_id":"test-cluster"}`)
	e.do("GET", "/health", nil).want(t, 200, `{"status":"healthy","message":"Worker has completed startup and is ready to handle requests."}`)
	e.h.SetHealth(api.Health{Status: "starting", Message: "Worker is still starting up."})
	e.do("GET", "/health", nil).want(t, 503, `{"status":"starting","message":"Worker is still starting up."}`)
	e.h.SetHealth(api.Health{Status: "unhealthy", Message: "Worker was unable to handle this request and may be unable to handle other requests."})
	e.do("GET", "/health", nil).want(t, 503, `{"status":"unhealthy","message":"Worker was unable to handle this request and may be unable to handle other requests."}`)
}

func TestConnectorLifecycle(t *testing.T) {
	e := newEnv(t, rest.Config{})
	e.do("GET", "/connectors", nil).want(t, 200, `[]`)

	r := e.do("POST", "/connectors", map[string]any{"name": " src ", "config": map[string]string{"connector.class": src, "tasks.max": "2"}})
	r.want(t, 201, `{"name":"src","config":{"connector.class":"`+src+`","tasks.max":"2","name":"src"},"tasks":[{"connector":"src","task":0},{"connector":"src","task":1}],"type":"source"}`)
	// JAX-RS resolves Location against the request's base URI.
	if loc := r.header.Get("Location"); loc != e.ts.URL+"/connectors/src" {
		t.Fatalf("Location = %q", loc)
	}
	e.do("GET", "/connectors", nil).want(t, 200, `["src"]`)
	e.do("GET", "/connectors/src", nil).want(t, 200, `{"name":"src","config":{"connector.class":"`+src+`","tasks.max":"2","name":"src"},"tasks":[{"connector":"src","task":0},{"connector":"src","task":1}],"type":"source"}`)
	e.do("GET", "/connectors/src/config", nil).want(t, 200, `{"connector.class":"`+src+`","tasks.max":"2","name":"src"}`)
	status := `{"name":"src","connector":{"state":"RUNNING","worker_id":"127.0.0.1:8083"},"tasks":[{"id":0,"state":"RUNNING","worker_id":"127.0.0.1:8083"},{"id":1,"state":"RUNNING","worker_id":"127.0.0.1:8083"}],"type":"source"}`
	e.do("GET", "/connectors/src/status", nil).want(t, 200, status)
	e.do("GET", "/connectors?expand=status", nil).want(t, 200, `{"src":{"status":`+status+`}}`)
	e.do("GET", "/connectors?expand=info&expand=status&expand=bogus", nil).want(t, 200,
		`{"src":{"status":`+status+`,"info":{"name":"src","config":{"connector.class":"`+src+`","tasks.max":"2","name":"src"},"tasks":[{"connector":"src","task":0},{"connector":"src","task":1}],"type":"source"}}}`)
	e.do("GET", "/connectors/src/tasks", nil).want(t, 200,
		`[{"id":{"connector":"src","task":0},"config":{"task.class":"`+src+`Task","task.id":"0"}},{"id":{"connector":"src","task":1},"config":{"task.class":"`+src+`Task","task.id":"1"}}]`)
	e.do("GET", "/connectors/src/tasks-config", nil).want(t, 200,
		`{"src-0":{"task.class":"`+src+`Task","task.id":"0"},"src-1":{"task.class":"`+src+`Task","task.id":"1"}}`)
	e.do("GET", "/connectors/src/tasks/1/status", nil).want(t, 200, `{"id":1,"state":"RUNNING","worker_id":"127.0.0.1:8083"}`)

	// PUT config: 200 on update, 201 + Location on create.
	e.do("PUT", "/connectors/src/config", map[string]string{"connector.class": src, "tasks.max": "1"}).want(t, 200,
		`{"name":"src","config":{"connector.class":"`+src+`","tasks.max":"1","name":"src"},"tasks":[{"connector":"src","task":0}],"type":"source"}`)
	r = e.do("PUT", "/connectors/other/config", map[string]any{"connector.class": src, "tasks.max": 3})
	r.want(t, 201, `{"name":"other","config":{"connector.class":"`+src+`","tasks.max":"3","name":"other"},"tasks":[{"connector":"other","task":0},{"connector":"other","task":1},{"connector":"other","task":2}],"type":"source"}`)
	if loc := r.header.Get("Location"); loc != e.ts.URL+"/connectors/other" {
		t.Fatalf("Location = %q", loc)
	}
	// PATCH merges; null removes.
	e.do("PATCH", "/connectors/other/config", `{"tasks.max":"1","extra":"x"}`).want(t, 200,
		`{"name":"other","config":{"connector.class":"`+src+`","tasks.max":"1","name":"other","extra":"x"},"tasks":[{"connector":"other","task":0}],"type":"source"}`)
	e.do("PATCH", "/connectors/other/config", `{"extra":null}`).want(t, 200,
		`{"name":"other","config":{"connector.class":"`+src+`","tasks.max":"1","name":"other"},"tasks":[{"connector":"other","task":0}],"type":"source"}`)

	// Restarts: plain 204; with includeTasks/onlyFailed 202 + plan.
	e.do("POST", "/connectors/src/restart", nil).want(t, 204, "")
	e.h.FailTask("src", 0, "java.lang.RuntimeException: boom")
	e.do("GET", "/connectors/src/tasks/0/status", nil).want(t, 200, `{"id":0,"state":"FAILED","worker_id":"127.0.0.1:8083","trace":"java.lang.RuntimeException: boom"}`)
	e.do("POST", "/connectors/src/restart?includeTasks=true&onlyFailed=true", nil).want(t, 202,
		`{"name":"src","connector":{"state":"RUNNING","worker_id":"127.0.0.1:8083"},"tasks":[{"id":0,"state":"RESTARTING","worker_id":"127.0.0.1:8083"}],"type":"source"}`)
	e.do("POST", "/connectors/src/restart?includeTasks=true", nil).want(t, 202,
		`{"name":"src","connector":{"state":"RESTARTING","worker_id":"127.0.0.1:8083"},"tasks":[{"id":0,"state":"RESTARTING","worker_id":"127.0.0.1:8083"}],"type":"source"}`)
	e.do("POST", "/connectors/src/tasks/0/restart", nil).want(t, 204, "")

	// Pause / resume / stop.
	e.do("PUT", "/connectors/src/pause", nil).want(t, 202, "")
	e.do("GET", "/connectors/src/status", nil).want(t, 200, `{"name":"src","connector":{"state":"PAUSED","worker_id":"127.0.0.1:8083"},"tasks":[{"id":0,"state":"PAUSED","worker_id":"127.0.0.1:8083"}],"type":"source"}`)
	e.do("PUT", "/connectors/src/resume", nil).want(t, 202, "")
	e.do("GET", "/connectors/src/status", nil).want(t, 200, `{"name":"src","connector":{"state":"RUNNING","worker_id":"127.0.0.1:8083"},"tasks":[{"id":0,"state":"RUNNING","worker_id":"127.0.0.1:8083"}],"type":"source"}`)

	// Topics.
	e.h.RecordTopics("src", "t1", "t2")
	e.do("GET", "/connectors/src/topics", nil).want(t, 200, `{"src":{"topics":["t1","t2"]}}`)
	e.do("PUT", "/connectors/src/topics/reset", nil).want(t, 202, "")
	e.do("GET", "/connectors/src/topics", nil).want(t, 200, `{"src":{"topics":[]}}`)

	// Offsets: readable in any state; changes need STOPPED.
	e.do("GET", "/connectors/src/offsets", nil).want(t, 200, `{"offsets":[]}`)
	offs := `{"offsets":[{"partition":{"filename":"test.txt"},"offset":{"position":9007199254740993}}]}`
	e.do("PATCH", "/connectors/src/offsets", offs).wantError(t, 400,
		"Connectors must be in the STOPPED state before their offsets can be modified. This can be done for the specified connector by issuing a 'PUT' request to the '/connectors/src/stop' endpoint")
	e.do("PUT", "/connectors/src/stop", nil).want(t, 204, "")
	e.do("GET", "/connectors/src/status", nil).want(t, 200, `{"name":"src","connector":{"state":"STOPPED","worker_id":"127.0.0.1:8083"},"tasks":[],"type":"source"}`)
	e.do("GET", "/connectors/src/tasks", nil).want(t, 200, `[]`)
	e.do("PATCH", "/connectors/src/offsets", offs).want(t, 200, `{"message":"The offsets for this connector have been altered successfully"}`)
	r = e.do("GET", "/connectors/src/offsets", nil)
	r.want(t, 200, offs)
	if !strings.Contains(string(r.body), "9007199254740993") {
		t.Fatalf("64-bit offset lost precision: %s", r.body)
	}
	e.do("PATCH", "/connectors/src/offsets", `{"offsets":[{"partition":{"filename":"test.txt"},"offset":null}]}`).want(t, 200, `{"message":"The offsets for this connector have been altered successfully"}`)
	e.do("GET", "/connectors/src/offsets", nil).want(t, 200, `{"offsets":[]}`)
	e.do("DELETE", "/connectors/src/offsets", nil).want(t, 200, `{"message":"The offsets for this connector have been reset successfully"}`)
	e.do("PUT", "/connectors/src/resume", nil).want(t, 202, "")
	e.do("GET", "/connectors/src/status", nil).want(t, 200, `{"name":"src","connector":{"state":"RUNNING","worker_id":"127.0.0.1:8083"},"tasks":[{"id":0,"state":"RUNNING","worker_id":"127.0.0.1:8083"}],"type":"source"}`)

	// Delete.
	e.do("DELETE", "/connectors/src", nil).want(t, 204, "")
	e.do("GET", "/connectors/src", nil).wantError(t, 404, "Connector src not found")
	e.do("GET", "/connectors", nil).want(t, 200, `["other"]`)

	// initial_state.
	e.do("POST", "/connectors", `{"name":"paused","config":{"connector.class":"`+src+`"},"initial_state":"paused"}`).want(t, 201,
		`{"name":"paused","config":{"connector.class":"`+src+`","name":"paused"},"tasks":[{"connector":"paused","task":0}],"type":"source"}`)
	e.do("GET", "/connectors/paused/status", nil).want(t, 200, `{"name":"paused","connector":{"state":"PAUSED","worker_id":"127.0.0.1:8083"},"tasks":[{"id":0,"state":"PAUSED","worker_id":"127.0.0.1:8083"}],"type":"source"}`)
	e.do("POST", "/connectors", `{"name":"stopped","config":{"connector.class":"`+src+`"},"initial_state":"STOPPED"}`).want(t, 201,
		`{"name":"stopped","config":{"connector.class":"`+src+`","name":"stopped"},"tasks":[],"type":"source"}`)
}

func TestPlugins(t *testing.T) {
	e := newEnv(t, rest.Config{})
	e.do("GET", "/connector-plugins", nil).want(t, 200,
		`[{"class":"`+resttest.SinkClass+`","type":"sink","version":"1.0.0"},{"class":"`+src+`","type":"source","version":"1.0.0"}]`)
	r := e.do("GET", "/connector-plugins?connectorsOnly=false", nil)
	if r.code != 200 || !strings.Contains(string(r.body), `"type":"converter"`) || strings.Contains(string(r.body), `"version":""`) {
		t.Fatalf("connectorsOnly=false: %d %s", r.code, r.body)
	}
	e.do("GET", "/connector-plugins/TestSource/config", nil).want(t, 200, `[
		{"name":"tasks.max","type":"INT","required":false,"default_value":"1","importance":"HIGH","documentation":"Maximum number of tasks to use for this connector.","group":"Common","order":3,"width":"SHORT","display_name":"Tasks max","dependents":[]},
		{"name":"test.password","type":"PASSWORD","required":false,"default_value":null,"importance":"HIGH","documentation":"A secret.","group":"Test","order":1,"width":"MEDIUM","display_name":"Password","dependents":[]}]`)
	e.do("GET", "/connector-plugins/NoSuch/config", nil).wantError(t, 404, "Unknown plugin NoSuch.")

	validated := `{"name":"TestSource","error_count":1,"groups":["Common","Test"],"configs":[
		{"definition":{"name":"tasks.max","type":"INT","required":false,"default_value":"1","importance":"HIGH","documentation":"Maximum number of tasks to use for this connector.","group":"Common","order":3,"width":"SHORT","display_name":"Tasks max","dependents":[]},
		 "value":{"name":"tasks.max","value":"0","recommended_values":[],"errors":["Invalid value 0 for configuration tasks.max: Value must be at least 1"],"visible":true}},
		{"definition":{"name":"test.password","type":"PASSWORD","required":false,"default_value":null,"importance":"HIGH","documentation":"A secret.","group":"Test","order":1,"width":"MEDIUM","display_name":"Password","dependents":[]},
		 "value":{"name":"test.password","value":"[hidden]","recommended_values":[],"errors":[],"visible":true}}]}`
	body := map[string]string{"connector.class": "TestSourceConnector", "tasks.max": "0", "test.password": "hunter2-secret"}
	e.do("PUT", "/connector-plugins/TestSource/config/validate", body).want(t, 200, validated)
	// Even a herder that leaks the value gets it masked.
	e.h.LeakPasswords(true)
	r = e.do("PUT", "/connector-plugins/TestSource/config/validate", body)
	r.want(t, 200, validated)
	if strings.Contains(string(r.body), "hunter2-secret") || strings.Contains(e.logs.String(), "hunter2-secret") {
		t.Fatal("password value leaked into the response or the log")
	}
	e.do("PUT", "/connector-plugins/TestSink/config/validate", map[string]string{"connector.class": src}).wantError(t, 400,
		"Included connector type "+src+" does not match request type TestSink")
	e.do("PUT", "/connector-plugins/TestSource/config/validate", map[string]string{"tasks.max": "1"}).wantErrorContaining(t, 400, "connector.class")
}

func TestErrorPaths(t *testing.T) {
	e := newEnv(t, rest.Config{MaxRequestBytes: 4096})
	e.do("POST", "/connectors", map[string]any{"name": "c", "config": srcConfig("c", "1")}).want(t, 201, mustJSON(map[string]any{
		"name": "c", "config": srcConfig("c", "1"), "tasks": []any{map[string]any{"connector": "c", "task": 0}}, "type": "source"}))
	for _, tc := range []struct {
		name, method, path, body string
		code                     int
		msg                      string // exact, or "~part|part" for containing
	}{
		{"unknown connector", "GET", "/connectors/nope", "", 404, "Connector nope not found"},
		{"unknown connector config", "GET", "/connectors/nope/config", "", 404, "Connector nope not found"},
		{"unknown connector status", "GET", "/connectors/nope/status", "", 404, "No status found for connector nope"},
		{"unknown connector tasks", "GET", "/connectors/nope/tasks", "", 404, "Connector nope not found"},
		{"unknown task status", "GET", "/connectors/c/tasks/7/status", "", 404, "No status found for task c-7"},
		{"unknown task restart", "POST", "/connectors/c/tasks/7/restart", "", 404, "Unknown task: c-7"},
		{"non-numeric task", "GET", "/connectors/c/tasks/x/status", "", 404, "~task id \"x\""},
		{"negative task", "GET", "/connectors/c/tasks/-1/status", "", 404, "~not a non-negative integer"},
		{"unknown connector delete", "DELETE", "/connectors/nope", "", 404, "Connector nope not found"},
		{"unknown connector pause", "PUT", "/connectors/nope/pause", "", 404, "Connector nope not found"},
		{"unknown connector offsets", "GET", "/connectors/nope/offsets", "", 404, "Connector nope not found"},
		{"patch unknown", "PATCH", "/connectors/nope/config", `{"a":"b"}`, 404, "Connector nope not found"},
		{"already exists", "POST", "/connectors", `{"name":"c","config":{"connector.class":"` + src + `"}}`, 409, "Connector c already exists"},
		{"name mismatch put", "PUT", "/connectors/c/config", `{"name":"d","connector.class":"` + src + `"}`, 400, "Connector name configuration (d) doesn't match connector name in the URL (c)"},
		{"name mismatch post", "POST", "/connectors", `{"name":"c2","config":{"name":"d","connector.class":"` + src + `"}}`, 400, "Connector name configuration (d) doesn't match connector name in the URL (c2)"},
		{"name mismatch patch", "PATCH", "/connectors/c/config", `{"name":"d"}`, 400, "Connector name configuration (d) doesn't match connector name in the URL (c)"},
		{"missing name", "POST", "/connectors", `{"config":{"connector.class":"` + src + `"}}`, 400, "~\"name\" is required"},
		{"blank name", "POST", "/connectors", `{"name":"  ","config":{"connector.class":"` + src + `"}}`, 400, "~name is required"},
		{"control char name", "POST", "/connectors", `{"name":"a\u0001b","config":{}}`, 400, "~control characters"},
		{"missing config", "POST", "/connectors", `{"name":"x"}`, 400, "~\"config\" is required"},
		{"config not object", "POST", "/connectors", `{"name":"x","config":"s"}`, 400, "~field \"config\""},
		{"config value object", "PUT", "/connectors/x/config", `{"connector.class":{"a":1}}`, 400, "~config key \"connector.class\" must have a string value, not a JSON object"},
		{"config value null", "PUT", "/connectors/x/config", `{"connector.class":null}`, 400, "~config key \"connector.class\" must have a string value, not null"},
		{"name wrong type", "POST", "/connectors", `{"name":5,"config":{}}`, 400, "~field \"name\""},
		{"bad initial state", "POST", "/connectors", `{"name":"x","config":{"connector.class":"` + src + `"},"initial_state":"GONE"}`, 400, "~initial_state"},
		{"malformed json", "POST", "/connectors", `{"name":`, 400, "~JSON"},
		{"trailing garbage", "PUT", "/connectors/x/config", `{"a":"b"} {}`, 400, "~unexpected data after the JSON value"},
		{"array body for config", "PUT", "/connectors/x/config", `["a"]`, 400, "~must be a JSON object of connector configuration keys to string values"},
		{"empty body", "PUT", "/connectors/x/config", ``, 400, "~request body is required"},
		{"invalid config", "PUT", "/connectors/x/config", `{"connector.class":"no.Such"}`, 400, "Connector configuration is invalid and contains the following 1 error(s):\nInvalid value no.Such for configuration connector.class: Class no.Such could not be found.\nYou can also find the above list of errors at the endpoint `/connector-plugins/{connectorType}/config/validate`"},
		{"bad bool", "POST", "/connectors/c/restart?includeTasks=yes", "", 400, "query parameter includeTasks=\"yes\" must be true or false"},
		{"bad forward", "DELETE", "/connectors/c?forward=maybe", "", 400, "query parameter forward=\"maybe\" must be true or false"},
		{"bad connectorsOnly", "GET", "/connector-plugins?connectorsOnly=1", "", 400, "~connectorsOnly"},
		{"empty offsets", "PATCH", "/connectors/c/offsets", `{"offsets":[]}`, 400, "Partitions / offsets need to be provided for an alter offsets request"},
		{"null offsets", "PATCH", "/connectors/c/offsets", `{}`, 400, "Partitions / offsets need to be provided for an alter offsets request"},
		{"offset partition missing", "PATCH", "/connectors/c/offsets", `{"offsets":[{"offset":{"a":1}}]}`, 400, "offsets[0].partition is required and must be a JSON object"},
		{"offset not object", "PATCH", "/connectors/c/offsets", `{"offsets":[{"partition":{"a":1},"offset":5}]}`, 400, "offsets[0].offset must be a JSON object"},
		{"unknown path", "GET", "/nope", "", 404, "no endpoint GET /nope"},
		{"method not allowed", "POST", "/connectors/c/status", "", 405, "HTTP method POST is not supported by /connectors/c/status"},
		{"too large", "PUT", "/connectors/x/config", `{"a":"` + strings.Repeat("x", 5000) + `"}`, 413, "request body is larger than the limit of 4096 bytes (rest.request.max.bytes)"},
		{"internal without signature", "POST", "/connectors/c/tasks", `[{}]`, 400, "Internal request missing required signature"},
		{"fence without signature", "PUT", "/connectors/c/fence", "", 400, "Internal request missing required signature"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := e.h.Snapshot()
			r := e.do(tc.method, tc.path, nilIfEmpty(tc.body))
			if p, ok := strings.CutPrefix(tc.msg, "~"); ok {
				r.wantErrorContaining(t, tc.code, strings.Split(p, "|")...)
			} else {
				r.wantError(t, tc.code, tc.msg)
			}
			if r.header.Get("Retry-After") != "" {
				t.Fatalf("Retry-After on a non-rebalance error: %q", r.header.Get("Retry-After"))
			}
			if after := e.h.Snapshot(); after != before {
				t.Fatalf("rejected request changed the state:\nbefore %s\nafter  %s", before, after)
			}
		})
	}
}

func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func TestTopicTrackingDisabled(t *testing.T) {
	e := newEnv(t, rest.Config{})
	e.do("PUT", "/connectors/c/config", srcConfig("c", "1")).want(t, 201, mustJSON(map[string]any{
		"name": "c", "config": srcConfig("c", "1"), "tasks": []any{map[string]any{"connector": "c", "task": 0}}, "type": "source"}))
	e.h.SetTopicTracking(true, false)
	e.do("PUT", "/connectors/c/topics/reset", nil).wantError(t, 403, "Topic tracking reset is disabled.")
	e.h.SetTopicTracking(false, false)
	e.do("GET", "/connectors/c/topics", nil).wantError(t, 403, "Topic tracking is disabled.")
}

func TestRebalanceConflictIsDistinguishable(t *testing.T) {
	e := newEnv(t, rest.Config{})
	e.do("PUT", "/connectors/c/config", srcConfig("c", "1")).want(t, 201, mustJSON(map[string]any{
		"name": "c", "config": srcConfig("c", "1"), "tasks": []any{map[string]any{"connector": "c", "task": 0}}, "type": "source"}))
	exists := e.do("POST", "/connectors", map[string]any{"name": "c", "config": srcConfig("c", "1")})
	exists.wantError(t, 409, "Connector c already exists")
	if exists.header.Get("Retry-After") != "" {
		t.Fatal("already-exists 409 has Retry-After")
	}
	e.h.SetRebalancing(true)
	r := e.do("POST", "/connectors", map[string]any{"name": "d", "config": srcConfig("d", "1")})
	r.wantErrorContaining(t, 409, "rebalance")
	if r.header.Get("Retry-After") != "2" {
		t.Fatalf("Retry-After = %q, want 2", r.header.Get("Retry-After"))
	}
	// No leader known: Kafka's message, also with Retry-After.
	e.h.SetRebalancing(false)
	e.h.SetLeader("", false)
	r = e.do("DELETE", "/connectors/c", nil)
	r.wantError(t, 409, "Cannot complete request momentarily due to no known leader URL, likely because a rebalance was underway.")
	if r.header.Get("Retry-After") == "" {
		t.Fatal("no-leader 409 lacks Retry-After")
	}
}

// transientHerder fails writes as the herder does while Kafka cannot
// serve them yet (a metadata error right after start-up).
type transientHerder struct {
	*resttest.Herder
}

func (transientHerder) PutConnectorConfig(context.Context, string, map[string]string, bool, api.InitialState) (api.ConnectorInfo, bool, error) {
	return api.ConnectorInfo{}, false, &herder.TransientError{
		Msg:        "Cannot complete request momentarily: Kafka could not serve it yet (config topic c end offset: Local: Unknown partition); retry shortly",
		RetryAfter: 3 * time.Second,
		Err:        errors.New("Local: Unknown partition"),
	}
}

func TestTransientKafkaErrorIsAConflictWithRetryAfter(t *testing.T) {
	srv, err := rest.NewServer(rest.Config{}, transientHerder{resttest.New()})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)
	r := doURL(t, "POST", ts.URL+"/connectors", map[string]any{"name": "c", "config": srcConfig("c", "1")}, "", "")
	r.wantErrorContaining(t, 409, "momentarily", "Unknown partition", "retry")
	if got := r.header.Get("Retry-After"); got != "3" {
		t.Fatalf("Retry-After = %q, want 3", got)
	}
}

func TestNamesWithSlashesAndUnicode(t *testing.T) {
	e := newEnv(t, rest.Config{})
	for _, tc := range []struct{ name, escaped string }{
		{"a/b", "a%2Fb"},
		{"données ✓", "donn%C3%A9es%20%E2%9C%93"},
		{"q?x#y", "q%3Fx%23y"},
		{"tasks", "tasks"},
	} {
		r := e.do("POST", "/connectors", map[string]any{"name": tc.name, "config": map[string]string{"connector.class": src}})
		if r.code != 201 {
			t.Fatalf("create %q: %d %s", tc.name, r.code, r.body)
		}
		if loc := r.header.Get("Location"); loc != e.ts.URL+"/connectors/"+tc.escaped {
			t.Fatalf("Location = %q, want %s/connectors/%s", loc, e.ts.URL, tc.escaped)
		}
		e.do("GET", "/connectors/"+tc.escaped+"/config", nil).want(t, 200, mustJSON(map[string]string{"connector.class": src, "name": tc.name}))
		e.do("GET", "/connectors/"+tc.escaped+"/tasks/0/status", nil).want(t, 200, `{"id":0,"state":"RUNNING","worker_id":"127.0.0.1:8083"}`)
		e.do("DELETE", "/connectors/"+tc.escaped, nil).want(t, 204, "")
	}
	e.do("GET", "/connectors/a/b", nil).wantErrorContaining(t, 404, "no endpoint")
	e.do("PUT", "/connectors/%2E%2E/config", map[string]string{"connector.class": src}).wantErrorContaining(t, 400, `".." is not allowed`)
}

// blockingHerder never answers Connectors before the context ends.
type blockingHerder struct{ *resttest.Herder }

func (blockingHerder) Connectors(ctx context.Context) ([]string, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

func TestRequestTimeout(t *testing.T) {
	srv, err := rest.NewServer(rest.Config{RequestTimeout: 50 * time.Millisecond}, blockingHerder{resttest.New()})
	if err != nil {
		t.Fatal(err)
	}
	rec := newRecorder()
	srv.Handler().ServeHTTP(rec, mustReq("GET", "/connectors"))
	if rec.Code != http.StatusInternalServerError || !strings.Contains(rec.Body.String(), `"message":"Request timed out"`) {
		t.Fatalf("timeout: %d %s", rec.Code, rec.Body)
	}
}
