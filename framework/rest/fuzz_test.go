package rest_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/connectd/connectd/framework/rest"
	"github.com/connectd/connectd/framework/rest/api"
	"github.com/connectd/connectd/framework/rest/resttest"
)

// FuzzHandlers drives the whole handler with arbitrary methods, paths and
// bodies. Whatever the input: no panic, no 5xx, every error is a
// {"error_code","message"} body with a message, and a rejected request
// leaves the herder's state unchanged. The seeds run with plain `go test`;
// CI fuzzes with
//
//	go test ./framework/rest -run '^$' -fuzz FuzzHandlers -fuzztime 60s
func FuzzHandlers(f *testing.F) {
	cfg := func(name string) string {
		return `{"connector.class":"` + resttest.SourceClass + `","tasks.max":"2","name":"` + name + `"}`
	}
	seeds := []struct{ method, path, body string }{
		{"GET", "/", ""},
		{"GET", "/connectors?expand=status&expand=info", ""},
		{"POST", "/connectors", `{"name":"new","config":` + cfg("new") + `}`},
		{"POST", "/connectors", `{"name":"c","config":` + cfg("c") + `}`},
		{"POST", "/connectors", `{"name":"x","config":` + cfg("y") + `}`},
		{"POST", "/connectors", `{"name":"x","config":{"connector.class":5,"tasks.max":true}}`},
		{"POST", "/connectors", `{"name":["x"],"config":{}}`},
		{"POST", "/connectors", `{"name":"x","config":[]}`},
		{"POST", "/connectors", `{"name":"x","config":{"a":{"b":"c"}}}`},
		{"POST", "/connectors", `{"name":"x","config":` + cfg("x") + `,"initial_state":7}`},
		{"POST", "/connectors", `{"name":"x\u0000","config":{}}`},
		{"POST", "/connectors", `{"name":`},
		{"POST", "/connectors", `null`},
		{"POST", "/connectors", `"str"`},
		{"POST", "/connectors", "\xff\xfe"},
		{"POST", "/connectors", `{"name":"big","config":{"a":"` + strings.Repeat("A", 5<<10) + `"}}`},
		{"PUT", "/connectors/c/config", cfg("d")},
		{"PUT", "/connectors/a%2Fb/config", cfg("a/b")},
		{"PUT", "/connectors/donn%C3%A9es/config", cfg("données")},
		{"PUT", "/connectors/%E2%9C%93/config", `{"connector.class":"nope"}`},
		{"PUT", "/connectors/c/config", `{"connector.class":null}`},
		{"PUT", "/connectors/c/config", `{} []`},
		{"PATCH", "/connectors/c/config", `{"name":"other"}`},
		{"PATCH", "/connectors/c/config", `{"tasks.max":"-1"}`},
		{"PATCH", "/connectors/c/config", `{"connector.class":null}`},
		{"PATCH", "/connectors/nope/config", `{"a":"b"}`},
		{"DELETE", "/connectors/nope", ""},
		{"DELETE", "/connectors/c?forward=banana", ""},
		{"GET", "/connectors/c/tasks/99999999999999999999/status", ""},
		{"GET", "/connectors/c/tasks/-0/status", ""},
		{"POST", "/connectors/c/tasks/1/restart", ""},
		{"POST", "/connectors/c/restart?includeTasks=true&onlyFailed=maybe", ""},
		{"PUT", "/connectors/c/stop", ""},
		{"PATCH", "/connectors/c/offsets", `{"offsets":[{"partition":null,"offset":{}}]}`},
		{"PATCH", "/connectors/c/offsets", `{"offsets":"all"}`},
		{"PATCH", "/connectors/c/offsets", `{"offsets":[{"partition":{"p":1},"offset":[1]}]}`},
		{"DELETE", "/connectors/c/offsets", ""},
		{"POST", "/connectors/c/tasks", `[{"a":"b"}]`},
		{"PUT", "/connectors/c/fence", ""},
		{"GET", "/connector-plugins?connectorsOnly=nah", ""},
		{"GET", "/connector-plugins/%00/config", ""},
		{"PUT", "/connector-plugins/TestSource/config/validate", `{"connector.class":"TestSink"}`},
		{"PUT", "/connector-plugins/TestSource/config/validate", `{"test.password":"pw"}`},
		{"PUT", "/admin/loggers/root", `{"level":"NOISY"}`},
		{"PUT", "/admin/loggers/root?scope=cluster", `{"level":"INFO"}`},
		{"PUT", "/admin/loggers/x", `{"level":{}}`},
		{"GET", "/connectors/../admin/loggers", ""},
		{"GET", "//connectors//", ""},
		{"TRACE", "/connectors", ""},
		{"OPTIONS", "/connectors", ""},
		{"HEAD", "/connectors/c", ""},
	}
	for _, s := range seeds {
		f.Add(s.method, s.path, []byte(s.body))
	}
	f.Fuzz(func(t *testing.T, method, path string, body []byte) {
		h := resttest.New()
		srv, err := rest.NewServer(rest.Config{MaxRequestBytes: 4 << 10}, h)
		if err != nil {
			t.Fatal(err)
		}
		handler := srv.Handler()
		seed := func(m, p, b string) {
			rec := httptest.NewRecorder()
			req := httptest.NewRequest(m, p, strings.NewReader(b))
			req.Header.Set("Content-Type", "application/json")
			handler.ServeHTTP(rec, req)
			if rec.Code >= 300 {
				t.Fatalf("seeding %s %s: %d %s", m, p, rec.Code, rec.Body)
			}
		}
		seed("PUT", "/connectors/c/config", cfg("c"))
		seed("PUT", "/connectors/a%2Fb/config", cfg("a/b"))

		req, err := http.NewRequest(method, "http://worker"+path, bytes.NewReader(body))
		if err != nil || !strings.HasPrefix(path, "/") {
			return // not an HTTP request a server could receive
		}
		req.RequestURI = req.URL.RequestURI()
		// Bodies are declared JSON, so that they reach the handlers (a body
		// without a Content-Type is a 415 before any decoding).
		if len(body) > 0 {
			req.Header.Set("Content-Type", "application/json")
		}
		before := h.Snapshot()
		rec := httptest.NewRecorder()
		handler.ServeHTTP(rec, req)

		if rec.Code >= 500 {
			t.Fatalf("%s %q -> %d %s", method, path, rec.Code, rec.Body)
		}
		if rec.Code >= 400 {
			var em api.ErrorMessage
			if err := json.Unmarshal(rec.Body.Bytes(), &em); err != nil || em.ErrorCode != rec.Code || strings.TrimSpace(em.Message) == "" {
				t.Fatalf("%s %q -> %d with body %q: not an error body with a message", method, path, rec.Code, rec.Body)
			}
			if after := h.Snapshot(); after != before {
				t.Fatalf("%s %q rejected with %d but changed state:\nbefore %s\nafter  %s", method, path, rec.Code, before, after)
			}
		}
	})
}
