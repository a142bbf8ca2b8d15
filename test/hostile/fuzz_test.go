package hostile

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// fuzzSettings are the run's seed and bounds, from the environment.
type fuzzSettings struct {
	seed     uint64
	requests int
	budget   time.Duration // for the serial requests
}

func settings(t *testing.T) fuzzSettings {
	t.Helper()
	s := fuzzSettings{seed: uint64(time.Now().UnixNano()), requests: 1000, budget: 30 * time.Second}
	if v := os.Getenv("HOSTILE_SEED"); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("HOSTILE_SEED=%q: %v", v, err)
		}
		s.seed = n
	}
	if v := os.Getenv("HOSTILE_REQUESTS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			t.Fatalf("HOSTILE_REQUESTS=%q: want a count", v)
		}
		s.requests = n
		s.budget = 0 // an explicit count is run whole
	}
	return s
}

// clusterState is what a rejected request must not change: the connector
// names and their configs.
type clusterState map[string]map[string]string

func readState(ctx context.Context, base string) (clusterState, error) {
	for try := 0; ; try++ {
		st, err := readStateOnce(ctx, base)
		// A connector deleted between the listing and its config read
		// (by the concurrent phase's last requests) is read again.
		if err == nil || try == 3 {
			return st, err
		}
	}
}

func readStateOnce(ctx context.Context, base string) (clusterState, error) {
	res := retrying(ctx, base, "GET", "/connectors", nil)
	if res.err != nil || res.code != http.StatusOK {
		return nil, fmt.Errorf("GET /connectors: %s", res)
	}
	var names []string
	if err := json.Unmarshal(res.body, &names); err != nil {
		return nil, fmt.Errorf("GET /connectors: %w", err)
	}
	st := clusterState{}
	for _, n := range names {
		res := retrying(ctx, base, "GET", "/connectors/"+url.PathEscape(n)+"/config", nil)
		if res.err != nil || res.code != http.StatusOK {
			return nil, fmt.Errorf("GET config of %q: %s", n, res)
		}
		var cfg map[string]string
		if err := json.Unmarshal(res.body, &cfg); err != nil {
			return nil, fmt.Errorf("config of %q: %w", n, err)
		}
		st[n] = cfg
	}
	return st, nil
}

func (s clusterState) equal(o clusterState) bool {
	return maps.EqualFunc(s, o, func(a, b map[string]string) bool { return maps.Equal(a, b) })
}

func (s clusterState) names() []string { return slices.Sorted(maps.Keys(s)) }

// verdict says what is wrong with an answer: "" for a 2xx, or a 4xx with
// the error body. A request line Go's HTTP server cannot parse (a path
// with a malformed percent-escape) is refused by net/http before any
// handler runs: a plain "400 Bad Request" and a closed connection, which a
// client still sending a large body sees as a reset, a broken pipe, or
// (when Go's transport reads after its write failed) its own connection
// already closed.
func verdict(method, path string, res response) string {
	if _, err := url.ParseRequestURI(path); err != nil {
		if res.err == nil && res.code == http.StatusBadRequest {
			return ""
		}
		if res.err != nil && (strings.Contains(res.err.Error(), "connection reset") || strings.Contains(res.err.Error(), "broken pipe") ||
			strings.Contains(res.err.Error(), "use of closed network connection")) {
			return ""
		}
	}
	switch {
	case res.err != nil:
		return "no answer (hang or crash?): " + res.err.Error()
	case res.code >= 500:
		return fmt.Sprintf("answered %d", res.code)
	case res.code >= 400:
		if why := checkErrorBody(method, res); why != "" {
			return fmt.Sprintf("answered %d with a bad error body: %s", res.code, why)
		}
		return ""
	case res.code >= 200 && res.code < 300:
		return ""
	default:
		return fmt.Sprintf("answered %d (neither a 2xx nor a 4xx)", res.code)
	}
}

// agreed reads the state from every worker until they agree (a write
// answered by the leader reaches the others' config view moments later).
func agreed(ctx context.Context, ws []*worker) (clusterState, error) {
	deadline := time.Now().Add(15 * time.Second)
	for {
		var first clusterState
		same := true
		for i, w := range ws {
			st, err := readState(ctx, w.url)
			if err != nil {
				return nil, err
			}
			if i == 0 {
				first = st
			} else if !st.equal(first) {
				same = false
			}
		}
		if same {
			return first, nil
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("the workers' connectors and configs still differ after 15 s")
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestRESTFuzz sends seeded random requests to every route of two real
// workers (so that writes sent to the follower are forwarded to the
// leader), then concurrent lifecycle requests on two names, and checks
// every answer, that rejected requests change nothing and that the
// workers still work afterwards.
func TestRESTFuzz(t *testing.T) {
	set := settings(t)
	t.Logf("HOSTILE_SEED=%d (set it to replay this run)", set.seed)
	ctx := context.Background()
	g := newGroup(t)
	ws := []*worker{g.start(), g.start()}
	alive := func() {
		for _, w := range ws {
			g.alive(w)
		}
	}

	// The fuzzing starts once the cluster takes writes: startup races are
	// TestHealthyMeansWritesWork's subject, not this test's.
	const victim = "hostile-victim"
	createWhenReady(t, ws[0].url, victim, g.topic)

	gn := &gen{rng: rand.New(rand.NewPCG(set.seed, set.seed^0x9e3779b97f4a7c15)), topic: g.topic, victim: victim,
		pool: []string{"fz-a", "fz-b"}, maxBody: 1 << 20}
	routes := routeTable(t)
	var failures []string
	fail := func(format string, args ...any) {
		failures = append(failures, fmt.Sprintf(format, args...))
	}

	before, err := agreed(ctx, ws)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	sent, rejected := 0, 0
	byCode := map[int]int{}
	for i := 0; i < set.requests && len(failures) < 20; i++ {
		if set.budget > 0 && time.Since(start) > set.budget {
			t.Logf("time budget of %v reached after %d requests", set.budget, i)
			break
		}
		var rq fuzzReq
		if len(before) > 6 {
			// Keep the cluster small: accepted creates pile up.
			n := before.names()[gn.rng.IntN(len(before))]
			rq = fuzzReq{method: "DELETE", path: "/connectors/" + url.PathEscape(n)}
		} else {
			rq = gn.request(routes[gn.rng.IntN(len(routes))])
		}
		w := ws[gn.rng.IntN(len(ws))]
		res := do(ctx, w.url, rq.method, rq.path, rq.body, rq.ctype, rq.headers...)
		sent++
		byCode[res.code]++
		alive()
		if why := verdict(rq.method, rq.path, res); why != "" {
			fail("request %d to %s: %s\n  request: %s\n  answer: %s", i, w.url, why, rq, res)
			if st, err := agreed(ctx, ws); err == nil {
				before = st
			}
			continue
		}
		if res.code < 400 {
			if before, err = agreed(ctx, ws); err != nil {
				fail("request %d to %s: after it: %v\n  request: %s", i, w.url, err, rq)
				break
			}
			continue
		}
		rejected++
		for _, w2 := range ws {
			after, err := readState(ctx, w2.url)
			if err != nil {
				fail("request %d to %s: reading the state of %s after it: %v\n  request: %s", i, w.url, w2.url, err, rq)
				break
			}
			if !after.equal(before) {
				fail("request %d to %s was rejected (%d) but changed the cluster as %s sees it: connectors %q → %q\n  request: %s\n  answer: %s",
					i, w.url, res.code, w2.url, before.names(), after.names(), rq, res)
				before, _ = agreed(ctx, ws)
				break
			}
		}
	}
	t.Logf("serial: %d requests in %v, %d rejected, by status: %v", sent, time.Since(start).Round(time.Millisecond), rejected, byCode)

	if len(failures) == 0 {
		failures = append(failures, alterOffsets(ctx, t, ws, victim, g.topic)...)
	}
	if len(failures) == 0 {
		failures = append(failures, raceOneName(ctx, t, gn, ws)...)
	}
	if len(failures) > 0 {
		t.Errorf("HOSTILE_SEED=%d: %d failures:\n%s", set.seed, len(failures), strings.Join(failures, "\n"))
		return
	}

	// Clean up what the fuzzer created, then the workers must still work.
	st, err := agreed(ctx, ws)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range st.names() {
		deleteGone(t, ws[0].url, n)
	}
	for i, w := range ws {
		healthyAfter(t, w.url, g.topic, fmt.Sprintf("hostile-after-fuzz-%d", i))
		if log := logText(w.log); strings.Contains(log, "panicked") {
			t.Errorf("HOSTILE_SEED=%d: a REST handler of %s panicked:\n%s", set.seed, w.url, around(log, "panicked", 40))
		}
	}
	alive()
}

// alterOffsets stops a source connector (re-created if the fuzzing
// deleted it), alters its offsets with boundary values, and checks every
// answer, that its offsets stay readable, and that once resumed it runs or
// its task fails with a trace: an offset the connector cannot use is its
// own input error, not the worker's.
func alterOffsets(ctx context.Context, t *testing.T, ws []*worker, name, topic string) []string {
	t.Helper()
	base := ws[0].url
	p := "/connectors/" + url.PathEscape(name)
	if res := retrying(ctx, base, "GET", p, nil); res.code == http.StatusNotFound {
		// Re-created under its old name it inherits the offsets the
		// fuzzing may have written for it (as in Kafka Connect), which
		// its task may refuse: running, or failed with a trace.
		body, _ := json.Marshal(map[string]any{"name": name, "config": datagenConfig(name, topic)})
		if res := retrying(ctx, base, "POST", "/connectors", body); res.err != nil || res.code != http.StatusCreated {
			return []string{fmt.Sprintf("re-create %s: %s", name, res)}
		}
		eventually(t, 60*time.Second, name+" re-created: RUNNING, or its task FAILED with a trace", func() (bool, string) {
			return runsOrFailedWithTrace(ctx, base, p)
		})
	}
	if res := retrying(ctx, base, "PUT", p+"/stop", nil); res.code != http.StatusNoContent && res.code != http.StatusAccepted {
		return []string{fmt.Sprintf("stop %s: %s", name, res)}
	}
	var failures []string
	eventually(t, 30*time.Second, name+" STOPPED", func() (bool, string) {
		res := do(ctx, base, "GET", p+"/status", nil, "")
		var st status
		json.Unmarshal(res.body, &st)
		return st.Connector.State == "STOPPED", res.String()
	})
	start, altered := time.Now(), 0
	// The values past a type's range, and one of each other kind: each
	// alteration is a write to the offsets topic.
	for _, v := range []string{`1e400`, `-1e400`, `1e308`, `9223372036854775808`, `-0`, `"\u0000"`, `null`, `true`} {
		for _, body := range []string{
			`{"offsets":[{"partition":{"task":0},"offset":{"seq":` + v + `}}]}`,
			`{"offsets":[{"partition":{"hostile":` + v + `},"offset":{"seq":1}}]}`,
		} {
			w := ws[altered%len(ws)]
			altered++
			res := retrying(ctx, w.url, "PATCH", p+"/offsets", []byte(body))
			if why := verdict("PATCH", p, res); why != "" {
				failures = append(failures, fmt.Sprintf("PATCH %s/offsets %s to %s: %s\n  answer: %s", p, body, w.url, why, res))
			}
			if res := retrying(ctx, w.url, "GET", p+"/offsets", nil); res.code != http.StatusOK {
				failures = append(failures, fmt.Sprintf("GET %s/offsets after PATCH %s: %s", p, body, res))
			}
		}
	}
	t.Logf("offsets: %d alterations in %v", altered, time.Since(start).Round(time.Millisecond))
	if res := retrying(ctx, base, "PUT", p+"/resume", nil); res.code != http.StatusAccepted {
		failures = append(failures, fmt.Sprintf("resume %s: %s", name, res))
	}
	eventually(t, 30*time.Second, name+" resumed: RUNNING, or its task FAILED with a trace", func() (bool, string) {
		return runsOrFailedWithTrace(ctx, base, p)
	})
	return failures
}

// runsOrFailedWithTrace says whether the connector at path p runs, each
// task RUNNING or FAILED with a trace.
func runsOrFailedWithTrace(ctx context.Context, base, p string) (bool, string) {
	res := do(ctx, base, "GET", p+"/status", nil, "")
	var st status
	if json.Unmarshal(res.body, &st) != nil || st.Connector.State != "RUNNING" || len(st.Tasks) == 0 {
		return false, res.String()
	}
	for _, ts := range st.Tasks {
		if ts.State != "RUNNING" && (ts.State != "FAILED" || ts.Trace == "") {
			return false, res.String()
		}
	}
	return true, ""
}

// raceOneName sends create, delete, pause, resume, restart, stop and
// config updates for one name from several goroutines at once, then checks
// that the name ends in one consistent state that can still be deleted.
func raceOneName(ctx context.Context, t *testing.T, gn *gen, ws []*worker) []string {
	const (
		goroutines = 6
		each       = 20
	)
	names := []string{"fz-race", "fz/race-é"}
	var (
		mu       sync.Mutex
		failures []string
		byCode   = map[int]int{}
	)
	var wg sync.WaitGroup
	for gi := range goroutines {
		// Each goroutine has its own source, seeded from the run's.
		rng := rand.New(rand.NewPCG(gn.rng.Uint64(), uint64(gi)))
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				name := names[rng.IntN(len(names))]
				p := "/connectors/" + url.PathEscape(name)
				cfg, _ := json.Marshal(datagenConfig(name, gn.topic))
				var method, path string
				var body []byte
				switch rng.IntN(9) {
				case 0, 1:
					method, path = "POST", "/connectors"
					body, _ = json.Marshal(map[string]any{"name": name, "config": datagenConfig(name, gn.topic),
						"initial_state": []string{"RUNNING", "PAUSED", "STOPPED"}[rng.IntN(3)]})
				case 2:
					method, path = "DELETE", p
				case 3:
					method, path = "PUT", p+"/pause"
				case 4:
					method, path = "PUT", p+"/resume"
				case 5:
					method, path = "POST", p+"/restart?includeTasks=true"
				case 6:
					method, path = "PUT", p+"/stop"
				case 7:
					method, path, body = "PUT", p+"/config", cfg
				default:
					method, path = "GET", p+"/status"
				}
				ctype := ""
				if body != nil {
					ctype = "application/json"
				}
				res := do(ctx, ws[rng.IntN(len(ws))].url, method, path, body, ctype)
				why := verdict(method, path, res)
				mu.Lock()
				byCode[res.code]++
				if why != "" {
					failures = append(failures, fmt.Sprintf("concurrent %s %s: %s\n  answer: %s", method, path, why, res))
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	t.Logf("concurrent: %d requests on %q, by status: %v", goroutines*each, names, byCode)
	if _, err := agreed(ctx, ws); err != nil {
		failures = append(failures, "after the concurrent requests: "+err.Error())
	}
	base := ws[0].url
	for _, name := range names {
		p := "/connectors/" + url.PathEscape(name)
		res := retrying(ctx, base, "GET", p+"/config", nil)
		switch {
		case res.code == http.StatusOK:
			// It exists: its status must become readable, and it must go.
			var last response
			deadline := time.Now().Add(30 * time.Second)
			for {
				last = do(ctx, base, "GET", p+"/status", nil, "")
				if last.code == http.StatusOK || time.Now().After(deadline) {
					break
				}
				time.Sleep(200 * time.Millisecond)
			}
			if last.code != http.StatusOK {
				failures = append(failures, fmt.Sprintf("after the concurrent requests %q exists but its status is %s", name, last))
			}
			if res := retrying(ctx, base, "DELETE", p, nil); res.code != http.StatusNoContent {
				failures = append(failures, fmt.Sprintf("after the concurrent requests DELETE %q: %s", name, res))
			}
		case res.code == http.StatusNotFound:
		default:
			failures = append(failures, fmt.Sprintf("after the concurrent requests GET %q config: %s", name, res))
		}
	}
	return failures
}
