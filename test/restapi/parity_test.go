package restapi

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/connectd/connectd/internal/kafkatest"
)

// The answers below are Kafka Connect 4.1.1's, read from a real
// connect-distributed worker (Jersey 3.1 on Jetty 12) and from its
// ConnectorsResource, LoggingResource and Loggers sources. Where connectd's
// message is longer, it starts with Kafka Connect's text.

// rawHdr is raw with request headers of the caller's choosing (name, value
// pairs) and no Content-Type unless given; auth adds the credentials.
func rawHdr(t *testing.T, method, u, body string, auth bool, hdr ...string) (int, http.Header, string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var rd io.Reader
		if body != "" {
			rd = strings.NewReader(body)
		}
		req, err := http.NewRequest(method, u, rd)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i+1 < len(hdr); i += 2 {
			req.Header.Set(hdr[i], hdr[i+1])
		}
		if auth {
			req.SetBasicAuth(user, password)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(res.Body)
		res.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		if res.StatusCode != http.StatusConflict || res.Header.Get("Retry-After") == "" || time.Now().After(deadline) {
			return res.StatusCode, res.Header, string(b)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// parityWorker is one worker with one running datagen connector, shared by
// the parity tests of this file.
type parityWorker struct {
	url, name, topic string
	cfg              map[string]string
}

func newParityWorker(t *testing.T) *parityWorker {
	t.Helper()
	c := newCluster(t, 1, nil)
	p := &parityWorker{url: c.workers[0].url, name: "parity-src", topic: kafkatest.Topic(t)}
	p.cfg = map[string]string{"connector.class": datagenClass, "tasks.max": "1", "kafka.topic": p.topic, "max.interval": "100"}
	code, _, body := rawHdr(t, "PUT", p.url+"/connectors/"+p.name+"/config", mustJSON(p.cfg), true, "Content-Type", "application/json")
	if code != 201 {
		t.Fatalf("create %s: %d %s", p.name, code, body)
	}
	waitState(t, c.client(0), p.name, "RUNNING", 1, "RUNNING")
	return p
}

// TestRESTParity runs every parity table against one real worker.
func TestRESTParity(t *testing.T) {
	p := newParityWorker(t)
	t.Run("UnsupportedMediaType", p.testUnsupportedMediaType)
	t.Run("NotAcceptable", p.testNotAcceptable)
	t.Run("Expand", p.testExpand)
	t.Run("Options", p.testOptions)
	t.Run("TopicsOfUnknownConnector", p.testTopicsOfUnknownConnector)
	t.Run("LoggerAtCurrentLevel", p.testLoggerAtCurrentLevel)
	t.Run("AbsoluteLocation", p.testAbsoluteLocation)
	t.Run("ValidateTopicCreation", p.testValidateTopicCreation)
	t.Run("ValidatePluginVersion", p.testValidatePluginVersion)
	// Last: it restarts the connector.
	t.Run("StatusVersion", p.testStatusVersion)
}

// Kafka Connect: {"error_code":415,"message":"HTTP 415 Unsupported Media
// Type"} for any Content-Type but application/json on the connectors,
// connector-plugins and admin/loggers resources, whatever the method, and
// for a body without a Content-Type; GET / and /health do not consume.
func (p *parityWorker) testUnsupportedMediaType(t *testing.T) {
	cfg := mustJSON(p.cfg)
	created := "parity-415"
	for _, tc := range []struct {
		name, method, path, body, ctype string
		want                            int
	}{
		{"create as text", "POST", "/connectors", mustJSON(map[string]any{"name": created, "config": p.cfg}), "text/plain", 415},
		{"create form-encoded (curl -d)", "POST", "/connectors", mustJSON(map[string]any{"name": created, "config": p.cfg}), "application/x-www-form-urlencoded", 415},
		{"create without Content-Type", "POST", "/connectors", mustJSON(map[string]any{"name": created, "config": p.cfg}), "", 415},
		{"create as text/json", "POST", "/connectors", mustJSON(map[string]any{"name": created, "config": p.cfg}), "text/json", 415},
		{"create as a +json subtype", "POST", "/connectors", mustJSON(map[string]any{"name": created, "config": p.cfg}), "application/vnd.foo+json", 415},
		{"put config as XML", "PUT", "/connectors/" + created + "/config", cfg, "application/xml", 415},
		{"patch config as text", "PATCH", "/connectors/" + p.name + "/config", `{"max.interval":"1"}`, "text/plain", 415},
		{"patch config as a wildcard", "PATCH", "/connectors/" + p.name + "/config", `{"max.interval":"1"}`, "*/*", 415},
		{"patch config as JSON Patch", "PATCH", "/connectors/" + p.name + "/config", `{"max.interval":"1"}`, "application/json-patch+json", 415},
		{"validate as text", "PUT", "/connector-plugins/" + datagenClass + "/config/validate", cfg, "text/plain", 415},
		{"alter offsets as text", "PATCH", "/connectors/" + p.name + "/offsets", `{"offsets":[]}`, "text/plain", 415},
		{"logger level as text", "PUT", "/admin/loggers/connectd.worker", `{"level":"DEBUG"}`, "text/plain", 415},
		{"pause with a text type", "PUT", "/connectors/" + p.name + "/pause", "", "text/plain", 415},
		{"restart with a text type", "POST", "/connectors/" + p.name + "/restart", "", "text/plain", 415},
		{"list with a text type", "GET", "/connectors", "", "text/plain", 415},
		{"delete with a text type", "DELETE", "/connectors/" + created, "", "text/plain", 415},
		{"topics reset with a text type", "PUT", "/connectors/" + p.name + "/topics/reset", "", "text/plain", 415},
		{"malformed Content-Type", "POST", "/connectors", "{}", "garbage", 400},
		{"server info ignores the type", "GET", "/", "", "text/plain", 200},
		{"health ignores the type", "GET", "/health", "", "text/plain", 200},
		{"JSON with a charset", "PUT", "/connector-plugins/" + datagenClass + "/config/validate", cfg, "application/json; charset=utf-8", 200},
		{"JSON in capitals", "GET", "/connectors/" + p.name + "/config", "", "Application/JSON", 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var hdr []string
			if tc.ctype != "" {
				hdr = []string{"Content-Type", tc.ctype}
			}
			code, _, body := rawHdr(t, tc.method, p.url+tc.path, tc.body, true, hdr...)
			switch {
			case tc.want == 415:
				wantError(t, tc.name, code, body, 415, "HTTP 415 Unsupported Media Type")
			case tc.want >= 400:
				wantError(t, tc.name, code, body, tc.want)
			case code != tc.want:
				t.Fatalf("status %d, want %d; body %s", code, tc.want, body)
			}
		})
	}
	// None of the refused requests did anything.
	code, _, body := raw(t, "GET", p.url+"/connectors/"+created, "", true)
	wantError(t, "refused create", code, body, 404)
	code, _, body = raw(t, "GET", p.url+"/connectors/"+p.name+"/status", "", true)
	if code != 200 || !strings.Contains(body, `"state":"RUNNING"`) {
		t.Fatalf("after refused pause: %d %s", code, body)
	}
}

// Kafka Connect: {"error_code":406,"message":"HTTP 406 Not Acceptable"}
// when Accept admits no JSON, on every resource, before a 404 and after a
// 415; Jersey ignores q=0.
func (p *parityWorker) testNotAcceptable(t *testing.T) {
	for _, tc := range []struct {
		name, method, path, accept, ctype string
		want                              int
	}{
		{"text", "GET", "/connectors", "text/plain", "", 406},
		{"XML", "GET", "/connectors", "application/xml", "", 406},
		{"not a media range", "GET", "/connectors", "bogus", "", 406},
		{"server info", "GET", "/", "text/plain", "", 406},
		{"health", "GET", "/health", "text/plain", "", 406},
		{"admin", "GET", "/admin/loggers", "text/html", "", 406},
		{"before not found", "GET", "/connectors/no-such-connector", "text/plain", "", 406},
		{"body-less write", "PUT", "/connectors/" + p.name + "/pause", "text/plain", "", 406},
		{"415 first", "POST", "/connectors", "text/plain", "text/plain", 415},
		{"browser default", "GET", "/connectors", "text/html,application/xhtml+xml,*/*;q=0.8", "", 200},
		{"application wildcard", "GET", "/connectors", "application/*", "", 200},
		{"JSON at q=0", "GET", "/connectors", "application/json;q=0", "", 200},
		{"JSON among others", "GET", "/connectors", "text/plain, application/json", "", 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hdr := []string{"Accept", tc.accept}
			body := ""
			if tc.ctype != "" {
				hdr = append(hdr, "Content-Type", tc.ctype)
				body = "x"
			}
			code, _, got := rawHdr(t, tc.method, p.url+tc.path, body, true, hdr...)
			switch tc.want {
			case 406:
				wantError(t, tc.name, code, got, 406, "HTTP 406 Not Acceptable")
			case 415:
				wantError(t, tc.name, code, got, 415, "HTTP 415 Unsupported Media Type")
			default:
				if code != tc.want {
					t.Fatalf("status %d, want %d; body %s", code, tc.want, got)
				}
			}
		})
	}
}

// Kafka Connect's listConnectors: any expand parameter gives the map form;
// each value is compared exactly with "status" and "info", others are
// ignored (so "status,info" in one value expands nothing).
func (p *parityWorker) testExpand(t *testing.T) {
	for _, tc := range []struct {
		query string
		want  []string // the parts each connector has; nil: the plain list
	}{
		{"expand=status,info", []string{}},
		{"expand=foo", []string{}},
		{"expand=", []string{}},
		{"expand", []string{}},
		{"expand=STATUS", []string{}},
		{"expand=info&expand=bogus", []string{"info"}},
		{"expand=status&expand=info", []string{"info", "status"}},
		{"expand=status&expand=status", []string{"status"}},
		{"EXPAND=info", nil},
		{"", nil},
	} {
		t.Run(tc.query, func(t *testing.T) {
			code, _, body := rawHdr(t, "GET", p.url+"/connectors?"+tc.query, "", true)
			if code != 200 {
				t.Fatalf("status %d: %s", code, body)
			}
			if tc.want == nil {
				jsonEq(t, tc.query, code, body, mustJSON([]string{p.name}))
				return
			}
			var m map[string]map[string]json.RawMessage
			if err := json.Unmarshal([]byte(body), &m); err != nil {
				t.Fatalf("%s is not a map of connectors: %v", body, err)
			}
			parts := []string{}
			for k := range m[p.name] {
				parts = append(parts, k)
			}
			slices.Sort(parts)
			if _, ok := m[p.name]; len(m) != 1 || !ok || !slices.Equal(parts, tc.want) {
				t.Fatalf("got %s, want %s with parts %v", body, p.name, tc.want)
			}
		})
	}
}

// Jersey answers OPTIONS itself: 200, Allow listing the path's methods
// (HEAD with GET, and OPTIONS), and the same list as a text/plain body
// unless the client accepts only JSON (then an empty body). An unknown
// path is a 404. The order of Kafka Connect's list is a hash order;
// connectd sorts it.
func (p *parityWorker) testOptions(t *testing.T) {
	for _, tc := range []struct {
		path, accept string
		want         string
	}{
		{"/connectors", "", "GET,HEAD,OPTIONS,POST"},
		{"/connectors/" + p.name, "", "DELETE,GET,HEAD,OPTIONS"},
		{"/connectors/no-such-connector/status", "", "GET,HEAD,OPTIONS"},
		{"/connectors/" + p.name + "/config", "application/json", "GET,HEAD,OPTIONS,PATCH,PUT"},
		{"/connectors/" + p.name + "/offsets", "text/plain", "DELETE,GET,HEAD,OPTIONS,PATCH"},
		{"/connectors/" + p.name + "/pause", "", "OPTIONS,PUT"},
		{"/admin/loggers/root", "", "GET,HEAD,OPTIONS,PUT"},
		{"/", "", "GET,HEAD,OPTIONS"},
		{"/no/such/path", "", ""},
	} {
		t.Run(tc.path, func(t *testing.T) {
			var hdr []string
			if tc.accept != "" {
				hdr = []string{"Accept", tc.accept}
			}
			code, h, body := rawHdr(t, "OPTIONS", p.url+tc.path, "", true, hdr...)
			if tc.want == "" {
				wantError(t, "OPTIONS "+tc.path, code, body, 404)
				return
			}
			if code != 200 || h.Get("Allow") != tc.want {
				t.Fatalf("status %d Allow %q, want 200 %q; body %s", code, h.Get("Allow"), tc.want, body)
			}
			wantBody := strings.ReplaceAll(tc.want, ",", ", ")
			if tc.accept == "application/json" {
				wantBody = ""
			}
			if body != wantBody {
				t.Fatalf("body %q, want %q", body, wantBody)
			}
		})
	}
	code, _, body := rawHdr(t, "OPTIONS", p.url+"/connectors", "", false)
	wantError(t, "OPTIONS without credentials", code, body, 401)
	code, h, body := rawHdr(t, "PROPFIND", p.url+"/connectors", "", true)
	wantError(t, "PROPFIND", code, body, 405)
	if h.Get("Allow") != "GET,HEAD,OPTIONS,POST" {
		t.Fatalf("405 Allow = %q", h.Get("Allow"))
	}
}

// Kafka Connect reads active topics from the status store without looking
// the connector up: an unknown connector has none (200), and resetting
// them is accepted (202).
func (p *parityWorker) testTopicsOfUnknownConnector(t *testing.T) {
	for _, tc := range []struct {
		name, method, path string
		want               int
		wantBody           string
	}{
		{"get", "GET", "/connectors/no-such-connector/topics", 200, `{"no-such-connector":{"topics":[]}}`},
		{"get escaped", "GET", "/connectors/" + url.PathEscape("a/b c") + "/topics", 200, mustJSON(map[string]any{"a/b c": map[string]any{"topics": []string{}}})},
		{"reset", "PUT", "/connectors/no-such-connector/topics/reset", 202, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, body := rawHdr(t, tc.method, p.url+tc.path, "", true)
			if tc.wantBody != "" {
				jsonEq(t, tc.name, code, body, tc.wantBody)
				return
			}
			if code != tc.want || body != "" {
				t.Fatalf("status %d body %q, want %d and no body", code, body, tc.want)
			}
		})
	}
	// The running connector's topic is tracked as before.
	eventually(t, 60*time.Second, "active topic", func() (bool, string) {
		_, _, body := rawHdr(t, "GET", p.url+"/connectors/"+p.name+"/topics", "", true)
		return strings.Contains(body, `"`+p.topic+`"`), body
	})
}

// Kafka Connect's Loggers.setLevel lists only the loggers whose level
// changed (the level compared case-insensitively); a new logger starts at
// its ancestor's level.
func (p *parityWorker) testLoggerAtCurrentLevel(t *testing.T) {
	code, _, body := rawHdr(t, "GET", p.url+"/admin/loggers/root", "", true)
	var root struct {
		Level string `json:"level"`
	}
	if code != 200 || json.Unmarshal([]byte(body), &root) != nil || root.Level == "" {
		t.Fatalf("root logger: %d %s", code, body)
	}
	other := "DEBUG"
	if root.Level == "DEBUG" {
		other = "INFO"
	}
	const lg = "parity.logger" // no registered ancestor but root
	for _, tc := range []struct {
		name, logger, level, want string
	}{
		{"new logger at its ancestor's level", "parity.fresh", root.Level, `[]`},
		{"change", lg, other, `["` + lg + `"]`},
		{"same level", lg, other, `[]`},
		{"same level, other case", lg, strings.ToLower(other), `[]`},
		{"child already at the level", lg + ".child", other, `[]`},
		{"back", lg, root.Level, `["` + lg + `","` + lg + `.child"]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, body := rawHdr(t, "PUT", p.url+"/admin/loggers/"+tc.logger, `{"level":"`+tc.level+`"}`, true, "Content-Type", "application/json")
			jsonEq(t, tc.name, code, body, tc.want)
		})
	}
	code, _, body = rawHdr(t, "GET", p.url+"/admin/loggers/parity.fresh", "", true)
	if code != 200 || !strings.Contains(body, `"last_modified":null`) {
		t.Fatalf("a logger set to its own level is not modified: %d %s", code, body)
	}
}

// JAX-RS resolves Response.created's path against the request's base URI:
// Location is absolute and names the worker the client asked.
func (p *parityWorker) testAbsoluteLocation(t *testing.T) {
	for _, tc := range []struct {
		name, method, path, body string
		connector                string
	}{
		{"POST", "POST", "/connectors", mustJSON(map[string]any{"name": "parity loc/1", "config": p.cfg}), "parity loc/1"},
		{"PUT config", "PUT", "/connectors/" + url.PathEscape("parity-loc-2") + "/config", mustJSON(p.cfg), "parity-loc-2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, h, body := rawHdr(t, tc.method, p.url+tc.path, tc.body, true, "Content-Type", "application/json")
			if want := p.url + "/connectors/" + url.PathEscape(tc.connector); code != 201 || h.Get("Location") != want {
				t.Fatalf("status %d Location %q, want 201 %q; body %s", code, h.Get("Location"), want, body)
			}
			code, _, body = raw(t, "DELETE", p.url+"/connectors/"+url.PathEscape(tc.connector), "", true)
			if code != 204 {
				t.Fatalf("delete: %d %s", code, body)
			}
		})
	}
}

// Kafka Connect 4.1.1 validates a source connector with
// topic.creation.groups (LIST, default "", group "Topic Creation", order
// 1) and lists no per-group topic.creation.<group>.* keys, whatever the
// config sets; a duplicate group is one error with Kafka's message.
// connectd also refuses per-group values that Kafka Connect would only
// reject when the task starts: those keys are then listed with their
// error, their value and the definition of Kafka's TopicCreationConfig.
func (p *parityWorker) testValidateTopicCreation(t *testing.T) {
	type configInfo struct {
		Definition *struct {
			Name, Type, Importance, Group, Width string
			Required                             bool
			DefaultValue                         *string `json:"default_value"`
			DisplayName                          string  `json:"display_name"`
			Order                                int
		} `json:"definition"`
		Value struct {
			Name    string
			Value   *string
			Errors  []string
			Visible bool
		} `json:"value"`
	}
	for _, tc := range []struct {
		name        string
		extra       map[string]string
		groups      string   // topic.creation.groups' value
		groupErrors []string // its errors
		// invalid are the per-group keys listed, with their value.
		invalid map[string]string
	}{
		{name: "no topic creation keys", groups: ""},
		{name: "groups and default keys", extra: map[string]string{"topic.creation.groups": "g1", "topic.creation.default.replication.factor": "1",
			"topic.creation.default.partitions": "3", "topic.creation.g1.include": "a.*"}, groups: "g1"},
		{name: "duplicate group", extra: map[string]string{"topic.creation.groups": "g1,g1", "topic.creation.default.replication.factor": "1",
			"topic.creation.default.partitions": "3"}, groups: "g1,g1",
			groupErrors: []string{"Invalid value [g1, g1] for configuration topic.creation.groups: Duplicate alias provided."}},
		{name: "invalid default group values", extra: map[string]string{"topic.creation.default.replication.factor": "0",
			"topic.creation.default.partitions": "x"}, groups: "",
			invalid: map[string]string{"topic.creation.default.replication.factor": "0", "topic.creation.default.partitions": "x"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := map[string]string{"name": "parity-validate"}
			for k, v := range p.cfg {
				cfg[k] = v
			}
			for k, v := range tc.extra {
				cfg[k] = v
			}
			code, _, body := rawHdr(t, "PUT", p.url+"/connector-plugins/"+datagenClass+"/config/validate", mustJSON(cfg), true, "Content-Type", "application/json")
			var res struct {
				ErrorCount int          `json:"error_count"`
				Groups     []string     `json:"groups"`
				Configs    []configInfo `json:"configs"`
			}
			if code != 200 || json.Unmarshal([]byte(body), &res) != nil {
				t.Fatalf("validate: %d %s", code, body)
			}
			i, j := slices.Index(res.Groups, "Error Handling"), slices.Index(res.Groups, "Topic Creation")
			if i < 0 || j != i+1 || (j+1 < len(res.Groups) && res.Groups[j+1] != "Exactly Once Support") {
				t.Fatalf("groups %v: want Topic Creation after Error Handling, before Exactly Once Support", res.Groups)
			}
			if want := len(tc.groupErrors) + len(tc.invalid); res.ErrorCount != want {
				t.Fatalf("error_count %d, want %d", res.ErrorCount, want)
			}
			seen := map[string]bool{}
			for _, c := range res.Configs {
				name := c.Value.Name
				if !strings.HasPrefix(name, "topic.creation.") {
					continue
				}
				seen[name] = true
				d := c.Definition
				if name == "topic.creation.groups" {
					if d == nil || d.Type != "LIST" || d.Required || d.DefaultValue == nil || *d.DefaultValue != "" || d.Importance != "LOW" ||
						d.Group != "Topic Creation" || d.Width != "LONG" || d.DisplayName != "Topic Creation Groups" || d.Order != 1 {
						t.Fatalf("topic.creation.groups definition differs from Kafka Connect's: %+v", d)
					}
					if c.Value.Value == nil || *c.Value.Value != tc.groups || !slices.Equal(c.Value.Errors, tc.groupErrors) && len(tc.groupErrors)+len(c.Value.Errors) > 0 || !c.Value.Visible {
						t.Fatalf("topic.creation.groups value: %+v, want %q with errors %q", c.Value, tc.groups, tc.groupErrors)
					}
					continue
				}
				want, ok := tc.invalid[name]
				if !ok {
					t.Fatalf("validate lists %s, which Kafka Connect does not", name)
				}
				if c.Value.Value == nil || *c.Value.Value != want || len(c.Value.Errors) != 1 {
					t.Fatalf("%s: value %+v, want %q with one error", name, c.Value, want)
				}
				if d == nil || d.Name != name || d.Group != "Topic Creation: default" || !d.Required || !slices.Contains(res.Groups, d.Group) {
					t.Fatalf("%s: definition %+v (groups %v)", name, d, res.Groups)
				}
			}
			if !seen["topic.creation.groups"] || len(seen) != 1+len(tc.invalid) {
				t.Fatalf("topic creation keys %v, want topic.creation.groups and %v", seen, tc.invalid)
			}
		})
	}
}
