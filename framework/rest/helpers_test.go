package rest_test

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/connectd/connectd/framework/logging"
	"github.com/connectd/connectd/framework/rest"
	"github.com/connectd/connectd/framework/rest/api"
	"github.com/connectd/connectd/framework/rest/resttest"
	"github.com/connectd/connectd/internal/syncbuf"
)

// env is a REST server over a test herder, served by httptest.
type env struct {
	t      *testing.T
	h      *resttest.Herder
	srv    *rest.Server
	ts     *httptest.Server
	logs   *syncbuf.Buffer
	levels *logging.Levels
	user   string
	pass   string
}

func newEnv(t *testing.T, cfg rest.Config, opts ...rest.Option) *env {
	t.Helper()
	e := &env{t: t, h: resttest.New(), logs: &syncbuf.Buffer{}, levels: logging.New(slog.LevelInfo)}
	e.levels.Var("connectd.worker")
	e.levels.Var("connectd.worker.task")
	lg := slog.New(slog.NewJSONHandler(e.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	all := append([]rest.Option{rest.WithLogger(lg), rest.WithLogLevels(e.levels)}, opts...)
	srv, err := rest.NewServer(cfg, e.h, all...)
	if err != nil {
		t.Fatal(err)
	}
	e.srv = srv
	e.ts = httptest.NewServer(srv.Handler())
	t.Cleanup(e.ts.Close)
	return e
}

type resp struct {
	code   int
	header http.Header
	body   []byte
}

func (e *env) do(method, path string, body any, hdr ...string) resp {
	e.t.Helper()
	return doURL(e.t, method, e.ts.URL+path, body, e.user, e.pass, hdr...)
}

func doURL(t *testing.T, method, url string, body any, user, pass string, hdr ...string) resp {
	t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		j, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(j)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if user != "" {
		req.SetBasicAuth(user, pass)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp{code: res.StatusCode, header: res.Header, body: b}
}

// want checks the status code and that the body equals wantJSON as JSON
// (exact field names and values; key order ignored). wantJSON "" means no
// body.
func (r resp) want(t *testing.T, code int, wantJSON string) {
	t.Helper()
	if r.code != code {
		t.Fatalf("status = %d, want %d; body %s", r.code, code, r.body)
	}
	if wantJSON == "" {
		if len(r.body) != 0 {
			t.Fatalf("body = %s, want none", r.body)
		}
		return
	}
	if ct := r.header.Get("Content-Type"); ct != "application/json" {
		t.Fatalf("Content-Type = %q", ct)
	}
	var got, want any
	if err := json.Unmarshal(r.body, &got); err != nil {
		t.Fatalf("body %q is not JSON: %v", r.body, err)
	}
	if err := json.Unmarshal([]byte(wantJSON), &want); err != nil {
		t.Fatalf("bad expectation %q: %v", wantJSON, err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("body =\n%s\nwant\n%s", r.body, wantJSON)
	}
}

// wantError checks a {"error_code","message"} body.
func (r resp) wantError(t *testing.T, code int, message string) {
	t.Helper()
	r.want(t, code, mustJSON(map[string]any{"error_code": code, "message": message}))
}

// wantErrorContaining checks the code and that the message has every part.
func (r resp) wantErrorContaining(t *testing.T, code int, parts ...string) {
	t.Helper()
	if r.code != code {
		t.Fatalf("status = %d, want %d; body %s", r.code, code, r.body)
	}
	var em api.ErrorMessage
	if err := json.Unmarshal(r.body, &em); err != nil || em.ErrorCode != code || em.Message == "" {
		t.Fatalf("body %s is not an error body with code %d", r.body, code)
	}
	for _, p := range parts {
		if !strings.Contains(em.Message, p) {
			t.Fatalf("message %q lacks %q", em.Message, p)
		}
	}
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func srcConfig(name string, tasks string) map[string]string {
	return map[string]string{"connector.class": resttest.SourceClass, "tasks.max": tasks, "name": name}
}
