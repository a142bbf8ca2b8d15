package rest_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/connectd/connectd/framework/rest"
)

// hopRecorder records the request URIs a worker received.
type hopRecorder struct {
	mu   sync.Mutex
	uris []string
}

func (h *hopRecorder) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.mu.Lock()
		h.uris = append(h.uris, r.Method+" "+r.RequestURI)
		h.mu.Unlock()
		next.ServeHTTP(w, r)
	})
}

func (h *hopRecorder) got() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.uris...)
}

// worker is one REST server of a simulated cluster; all share the session
// key and the credentials.
type worker struct {
	*env
	hops *hopRecorder
}

func newWorker(t *testing.T, auth rest.AuthConfig) *worker {
	t.Helper()
	e := newEnv(t, rest.Config{Auth: auth})
	e.ts.Close()
	w := &worker{env: e, hops: &hopRecorder{}}
	e.ts = httptest.NewServer(w.hops.wrap(e.srv.Handler()))
	t.Cleanup(e.ts.Close)
	e.user, e.pass = testUser, testPassword
	return w
}

func TestForwardToLeader(t *testing.T) {
	auth := authFiles(t)
	leader, follower := newWorker(t, auth), newWorker(t, auth)
	follower.h.SetLeader(leader.ts.URL, false)

	// A create on the follower is forwarded, signed, to the leader; the
	// user's credentials are not passed on, the signature is enough.
	r := follower.do("POST", "/connectors", map[string]any{"name": "a/b", "config": srcConfig("a/b", "1")})
	r.want(t, 201, mustJSON(map[string]any{"name": "a/b", "config": srcConfig("a/b", "1"), "tasks": []any{map[string]any{"connector": "a/b", "task": 0}}, "type": "source"}))
	// The Location names the worker the client asked, not the leader.
	if loc := r.header.Get("Location"); loc != follower.ts.URL+"/connectors/a%2Fb" {
		t.Fatalf("Location = %q", loc)
	}
	if got := leader.hops.got(); len(got) != 1 || got[0] != "POST /connectors?forward=true" {
		t.Fatalf("leader received %v", got)
	}
	if follower.h.Snapshot() != "{}" {
		t.Fatalf("follower state changed: %s", follower.h.Snapshot())
	}
	leader.do("GET", "/connectors/a%2Fb", nil).want(t, 200, mustJSON(map[string]any{"name": "a/b", "config": srcConfig("a/b", "1"), "tasks": []any{map[string]any{"connector": "a/b", "task": 0}}, "type": "source"}))

	// Query parameters are re-appended; escaped names stay escaped.
	leader.h.FailTask("a/b", 0, "boom")
	follower.do("POST", "/connectors/a%2Fb/restart?includeTasks=true&onlyFailed=true", nil).want(t, 202,
		`{"name":"a/b","connector":{"state":"RUNNING","worker_id":"127.0.0.1:8083"},"tasks":[{"id":0,"state":"RESTARTING","worker_id":"127.0.0.1:8083"}],"type":"source"}`)
	if got := leader.hops.got(); got[len(got)-1] != "POST /connectors/a%2Fb/restart?forward=true&includeTasks=true&onlyFailed=true" {
		t.Fatalf("leader received %v", got)
	}
	// Errors from the leader come back unchanged.
	follower.do("POST", "/connectors", map[string]any{"name": "a/b", "config": srcConfig("a/b", "1")}).wantError(t, 409, "Connector a/b already exists")
	follower.do("DELETE", "/connectors/nope", nil).wantError(t, 404, "Connector nope not found")
	// A forged forward (signature headers with a wrong key) is refused by the leader.
	req := signed(t, "DELETE", leader.ts.URL+"/connectors/a%2Fb?forward=true", nil, []byte("wrong-key"), nowFunc())
	send(t, req).wantError(t, 403, "Internal request contained invalid signature.")
	leader.do("GET", "/connectors", nil).want(t, 200, `["a/b"]`)
}

func TestForwardTwoHops(t *testing.T) {
	auth := authFiles(t)
	a, b, c := newWorker(t, auth), newWorker(t, auth), newWorker(t, auth)
	a.h.SetLeader(b.ts.URL, false)
	b.h.SetLeader(c.ts.URL, false) // b believes c leads (e.g. the owner of a task)
	a.do("PUT", "/connectors/x/config", srcConfig("x", "1")).want(t, 201, mustJSON(map[string]any{"name": "x", "config": srcConfig("x", "1"), "tasks": []any{map[string]any{"connector": "x", "task": 0}}, "type": "source"}))
	if got := b.hops.got(); len(got) != 1 || got[0] != "PUT /connectors/x/config?forward=true" {
		t.Fatalf("b received %v", got)
	}
	if got := c.hops.got(); len(got) != 1 || got[0] != "PUT /connectors/x/config?forward=false" {
		t.Fatalf("c received %v", got)
	}

	// A third hop is refused with Kafka's conflict message.
	c.h.SetLeader(a.ts.URL, false)
	r := a.do("DELETE", "/connectors/x", nil)
	r.wantError(t, 409, "Cannot complete request because of a conflicting operation (e.g. worker rebalance)")
	if r.header.Get("Retry-After") == "" {
		t.Fatal("no Retry-After on the forwarding conflict")
	}
	if n := len(a.hops.got()); n != 2 { // the PUT and this DELETE; no loop back
		t.Fatalf("a received %d requests: %v", n, a.hops.got())
	}

	// A dead leader: a retryable rebalance conflict, not a 5xx.
	dead := httptest.NewServer(http.NotFoundHandler())
	dead.Close()
	a.h.SetLeader(dead.URL, false)
	r = a.do("DELETE", "/connectors/x", nil)
	r.wantErrorContaining(t, 409, "rebalance")
	if r.header.Get("Retry-After") == "" {
		t.Fatal("no Retry-After")
	}
}

func TestReadsAreNotForwarded(t *testing.T) {
	leader, follower := newWorker(t, rest.AuthConfig{}), newWorker(t, rest.AuthConfig{})
	follower.h.SetLeader(leader.ts.URL, false)
	follower.do("GET", "/connectors", nil).want(t, 200, `[]`)
	follower.do("GET", "/connectors/x/status", nil).wantError(t, 404, "No status found for connector x")
	if got := leader.hops.got(); len(got) != 0 {
		t.Fatalf("reads reached the leader: %v", got)
	}
	if !strings.Contains(follower.hops.got()[0], "/connectors") {
		t.Fatal("recorder broken")
	}
}
