package herder

import (
	"encoding/json"
	"io"
	"log/slog"
	"maps"
	"reflect"
	"testing"

	"github.com/connectd/connectd/framework/configprovider"
	"github.com/connectd/connectd/framework/herder/clusterstate"
)

func TestReverseTransform(t *testing.T) {
	raw := map[string]string{"password": "${file:/s.properties:pw}", "host": "db", "token": "${env:TOKEN}", "flag": "${env:FLAG}"}
	resolved := map[string]string{"password": "hunter2-long-secret", "host": "db", "token": "tok-123456789", "flag": "true"}
	tasks := []map[string]string{{"password": "hunter2-long-secret", "host": "db", "copied.token": "tok-123456789", "other": "true", "flag": "true"}}
	got := reverseTransform(raw, resolved, tasks)[0]
	want := map[string]string{"password": "${file:/s.properties:pw}", "host": "db", "copied.token": "${env:TOKEN}", "other": "true", "flag": "${env:FLAG}"}
	if !maps.Equal(got, want) {
		t.Fatalf("got %v\nwant %v", got, want)
	}
	if tasks[0]["password"] != "hunter2-long-secret" {
		t.Fatal("reverseTransform modified its input")
	}
}

func TestWorkerID(t *testing.T) {
	for in, want := range map[string]string{
		"http://127.0.0.1:8083":  "127.0.0.1:8083",
		"http://host:8083/":      "host:8083",
		"https://host":           "host:443",
		"http://[::1]:9000/base": "[::1]:9000",
	} {
		if got := WorkerID(in); got != want {
			t.Errorf("WorkerID(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSupersedes(t *testing.T) {
	cur := Status{State: "RUNNING", WorkerID: "b", Generation: 5}
	for _, tc := range []struct {
		next Status
		want bool
	}{
		{Status{State: "FAILED", WorkerID: "a", Generation: 4}, false}, // zombie
		{Status{State: "FAILED", WorkerID: "b", Generation: 4}, true},  // same worker
		{Status{State: "RUNNING", WorkerID: "a", Generation: 5}, true},
		{Status{State: "RUNNING", WorkerID: "a", Generation: 6}, true},
	} {
		if got := supersedes(tc.next, cur); got != tc.want {
			t.Errorf("supersedes(%+v) = %v", tc.next, got)
		}
	}
}

func TestScrubTracesOfResolvedValues(t *testing.T) {
	t.Setenv("HERDER_TEST_PW", "pa55-word")
	h := &Herder{cfg: Config{Resolver: configprovider.Default()}}
	raw := map[string]string{"password": "${env:HERDER_TEST_PW}", "flag": "${env:HERDER_TEST_FLAG}", "host": "db"}
	t.Setenv("HERDER_TEST_FLAG", "on")
	got, err := h.resolveFor("c", raw)
	if err != nil || got["password"] != "pa55-word" {
		t.Fatalf("resolve %v %v", got, err)
	}
	trace := "login failed for password pa55-word on db (flag on)"
	want := "login failed for password ${env:HERDER_TEST_PW} on db (flag on)"
	if s := h.scrub("c", trace); s != want {
		t.Fatalf("scrub = %q, want %q", s, want)
	}
	if s := h.scrub("other", trace); s != trace {
		t.Fatalf("another connector's trace was changed: %q", s)
	}
}

func TestStatusRecordEncodings(t *testing.T) {
	for _, tc := range []struct {
		name string
		v    any
		want string
	}{
		{"status", statusValue{State: "RUNNING", WorkerID: "h:1", Generation: 4}, `{"state":"RUNNING","trace":null,"worker_id":"h:1","generation":4}`},
		{"topic", topicStatusValue{Topic: topicStatus{Name: "t", Connector: "c", Task: 1, Discover: 5}}, `{"topic":{"name":"t","connector":"c","task":1,"discoverTimestamp":5}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got, want any
			if err := json.Unmarshal(mustJSON(tc.v), &got); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal([]byte(tc.want), &want); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("got %s, want %s", mustJSON(tc.v), tc.want)
			}
		})
	}
}

type rec struct {
	key   string
	value string // "" = tombstone
}

// replay builds a snapshot from config-topic records, as the config log
// does.
func replay(t *testing.T, recs []rec) *clusterstate.Snapshot {
	t.Helper()
	s := clusterstate.New()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	for i, r := range recs {
		var v []byte
		if r.value != "" {
			v = []byte(r.value)
		}
		s.Apply(log, r.key, v, int64(i))
	}
	return s
}
