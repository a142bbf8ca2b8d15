package restapi

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/connectd/connectd/framework/rest/api"
)

// try does one request without retrying; err is a transport error (the
// worker not listening yet).
func try(method, u, body string, auth bool) (int, string, error) {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, u, rd)
	if err != nil {
		return 0, "", err
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if auth {
		req.SetBasicAuth(user, password)
	}
	cl := &http.Client{Timeout: 15 * time.Second}
	res, err := cl.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b), nil
}

func createBody(name, topic string) string {
	b, _ := json.Marshal(map[string]any{"name": name, "initial_state": "STOPPED",
		"config": map[string]string{"connector.class": datagenClass, "tasks.max": "1", "kafka.topic": topic}})
	return string(b)
}

// watchStartup polls worker w from its process start until /health first
// answers 200, sending the other requests a client might send meanwhile.
// No answer may be a 5xx other than /health's 503, and /health must answer
// without credentials (basic auth is on). It returns once /health said 200.
func watchStartup(t *testing.T, w *workerProc, topic string) {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	var (
		mu   sync.Mutex
		bad  []string
		stop = make(chan struct{})
		wg   sync.WaitGroup
	)
	fail := func(format string, args ...any) {
		mu.Lock()
		bad = append(bad, fmt.Sprintf(format, args...))
		mu.Unlock()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for n := 0; ; n++ {
			select {
			case <-stop:
				return
			default:
			}
			name := fmt.Sprintf("early-%s-%d", strings.TrimPrefix(w.url, "http://127.0.0.1:"), n)
			for _, rq := range []struct{ method, path, body string }{
				{"GET", "/", ""},
				{"GET", "/connectors", ""},
				{"GET", "/connectors?expand=status&expand=info", ""},
				{"POST", "/connectors", createBody(name, topic)},
				{"GET", "/connectors/" + name + "/status", ""},
				{"PUT", "/connectors/" + name + "/pause", ""},
			} {
				code, body, err := try(rq.method, w.url+rq.path, rq.body, true)
				if err == nil && code >= 500 {
					fail("%s %s during start-up: %d %s", rq.method, rq.path, code, body)
				}
			}
			time.Sleep(50 * time.Millisecond)
		}
	}()
	var codes []int
	for {
		select {
		case err := <-w.done:
			close(stop)
			wg.Wait()
			t.Fatalf("worker %s exited during start-up: %v\n%s", w.url, err, tail(w.log))
		default:
		}
		code, body, err := try("GET", w.url+"/health", "", false)
		if err == nil {
			if len(codes) == 0 || codes[len(codes)-1] != code {
				codes = append(codes, code)
			}
			var h api.Health
			switch {
			case code == http.StatusOK:
			case code == http.StatusServiceUnavailable && json.Unmarshal([]byte(body), &h) == nil && (h.Status == "starting" || h.Status == "unhealthy") && h.Message != "":
			default:
				fail("GET /health during start-up: %d %s", code, body)
			}
		}
		if code == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			close(stop)
			wg.Wait()
			t.Fatalf("worker %s: /health not 200 after 90 s (answers %v)\n%s", w.url, codes, tail(w.log))
		}
		time.Sleep(20 * time.Millisecond)
	}
	close(stop)
	wg.Wait()
	t.Logf("%s: /health answered %v", w.url, codes)
	mu.Lock()
	defer mu.Unlock()
	for _, b := range bad {
		t.Error(b)
	}
}

// From the first 200 of /health on, a worker serves writes: a create right
// then succeeds at the first attempt, on the first worker of a cluster and
// on one joining it (which forwards to the leader), and its status answers
// at once on both workers. No request during start-up gets a 5xx.
func TestHealthyMeansWritesWork(t *testing.T) {
	c := newCluster(t, 0, nil)
	topic := c.group + "-orders"
	for i := range 2 {
		c.start(i, nil)
		w := c.workers[i]
		watchStartup(t, w, topic)

		name := fmt.Sprintf("after-health-%d", i)
		code, body, err := try("POST", w.url+"/connectors", createBody(name, topic), true)
		if err != nil || code != http.StatusCreated {
			t.Fatalf("worker %d: create right after /health said 200: %d %s %v\n%s", i, code, body, err, tail(w.log))
		}
		for _, other := range c.workers {
			code, body, err = try("GET", other.url+"/connectors/"+url.PathEscape(name)+"/status", "", true)
			if err != nil || code != http.StatusOK {
				t.Fatalf("status of %s on %s right after its create: %d %s %v", name, other.url, code, body, err)
			}
			code, body, err = try("GET", other.url+"/connectors?expand=status&expand=info", "", true)
			var exp map[string]map[string]json.RawMessage
			if err != nil || code != http.StatusOK || json.Unmarshal([]byte(body), &exp) != nil || exp[name]["status"] == nil || exp[name]["info"] == nil {
				t.Fatalf("expand on %s right after the create of %s: %d %s %v", other.url, name, code, body, err)
			}
		}
		// Basic auth is on: /health needs no credentials, the rest does.
		if code, body, err := try("GET", w.url+"/health", "", false); err != nil || code != http.StatusOK {
			t.Fatalf("GET /health without credentials: %d %s %v", code, body, err)
		}
		for _, p := range []string{"/", "/connectors", "/metrics", "/connectors/" + name + "/status"} {
			if code, body, err := try("GET", w.url+p, "", false); err != nil || code != http.StatusUnauthorized {
				t.Fatalf("GET %s without credentials: %d %s %v, want 401", p, code, body, err)
			}
		}
	}
}
