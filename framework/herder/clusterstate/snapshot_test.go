package clusterstate

import (
	"encoding/json"
	"io"
	"log/slog"
	"maps"
	"testing"

	"github.com/connectd/connectd/framework/rest/api"
)

type rec struct {
	key   string
	value string // "" = tombstone
}

func replay(t *testing.T, recs []rec) *Snapshot {
	t.Helper()
	s := New()
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

// The values below are what Kafka Connect's KafkaConfigBackingStore writes
// (JsonConverter, schemas disabled).
func TestSnapshotReadsKafkaConnectRecords(t *testing.T) {
	s := replay(t, []rec{
		{"connector-my-conn", `{"properties":{"name":"my-conn","connector.class":"DatagenSource","tasks.max":"2"}}`},
		{"task-my-conn-0", `{"properties":{"task.id":"0"}}`},
		{"task-my-conn-1", `{"properties":{"task.id":"1"}}`},
		{"commit-my-conn", `{"tasks":2}`},
		{"target-state-my-conn", `{"state":"PAUSED","state.v2":"STOPPED"}`},
		{"tasks-fencing-my-conn", `{"task-count":2}`},
		{"session-key", `{"key":"c2VjcmV0LWtleQ==","algorithm":"HmacSHA256","creation-timestamp":1700000000000}`},
		{"restart-connector-my-conn", `{"include-tasks":true,"only-failed":false}`},
		{"logger-cluster-org.apache", `{"level":"DEBUG"}`},
	})
	if got := s.Connectors(); len(got) != 1 || got[0] != "my-conn" {
		t.Fatalf("connectors = %v", got)
	}
	if n := s.TaskCount("my-conn"); n != 2 {
		t.Fatalf("task count = %d", n)
	}
	if s.TaskConfigs("my-conn")[1]["task.id"] != "1" {
		t.Fatalf("task configs = %v", s.TaskConfigs("my-conn"))
	}
	if s.Target("my-conn") != TargetStopped {
		t.Fatalf("target = %s (state.v2 must win)", s.Target("my-conn"))
	}
	if n, ok := s.Fencing("my-conn"); !ok || n != 2 {
		t.Fatalf("fencing = %d %v", n, ok)
	}
	if k := s.SessionKey(); k == nil || string(k.Key) != "secret-key" || k.Algorithm != "HmacSHA256" || k.Created != 1700000000000 {
		t.Fatalf("session key = %+v", k)
	}
	if r := s.restarts["my-conn"]; !r.Request.IncludeTasks || r.Request.OnlyFailed {
		t.Fatalf("restart = %+v", r)
	}
	if s.Offset != 9 {
		t.Fatalf("offset = %d", s.Offset)
	}
}

func TestSnapshotTaskConfigsWaitForCommit(t *testing.T) {
	s := replay(t, []rec{
		{"connector-c", `{"properties":{"name":"c"}}`},
		{"task-c-0", `{"properties":{"a":"1"}}`},
	})
	if s.TaskCount("c") != 0 {
		t.Fatal("task configs applied before their commit record")
	}
	// A commit naming a task whose record is missing keeps the old tasks.
	s2 := replay(t, []rec{
		{"connector-c", `{"properties":{"name":"c"}}`},
		{"task-c-0", `{"properties":{"a":"1"}}`},
		{"commit-c", `{"tasks":1}`},
		{"task-c-0", `{"properties":{"a":"2"}}`},
		{"commit-c", `{"tasks":2}`},
	})
	if s2.TaskCount("c") != 1 || s2.TaskConfigs("c")[0]["a"] != "1" {
		t.Fatalf("inconsistent commit applied: %v", s2.TaskConfigs("c"))
	}
}

// A commit record with a huge task count (garbage written into the config
// topic) is refused like any commit naming missing tasks, without
// allocating for the count: a reader that allocated for 2^63-1 would
// panic, and with it the worker.
func TestSnapshotCommitWithHugeTaskCount(t *testing.T) {
	for _, count := range []string{"2147483647", "9223372036854775807"} {
		t.Run(count, func(t *testing.T) {
			s := replay(t, []rec{
				{"connector-c", `{"properties":{"name":"c"}}`},
				{"task-c-0", `{"properties":{"a":"1"}}`},
				{"commit-c", `{"tasks":1}`},
				{"task-c-0", `{"properties":{"a":"2"}}`},
				{"commit-c", `{"tasks":` + count + `}`},
				{"commit-ghost", `{"tasks":` + count + `}`},
			})
			if s.TaskCount("c") != 1 || s.TaskConfigs("c")[0]["a"] != "1" {
				t.Fatalf("commit of %s tasks applied: %v", count, s.TaskConfigs("c"))
			}
		})
	}
}

func TestSnapshotStaleAndGenerations(t *testing.T) {
	s := replay(t, []rec{
		{"connector-c", `{"properties":{"name":"c","x":"1"}}`},
		{"task-c-0", `{"properties":{"a":"1"}}`},
		{"commit-c", `{"tasks":1}`},
	})
	gen := s.TaskGeneration("c")
	if s.TaskConfigsStale("c") {
		t.Fatal("fresh task configs reported stale")
	}
	s.Apply(slog.Default(), "connector-c", []byte(`{"properties":{"name":"c","x":"2"}}`), 10)
	if !s.TaskConfigsStale("c") {
		t.Fatal("connector config change did not make the task configs stale")
	}
	s.Apply(slog.Default(), "task-c-0", []byte(`{"properties":{"a":"1"}}`), 11)
	s.Apply(slog.Default(), "commit-c", []byte(`{"tasks":1}`), 12)
	if s.TaskConfigsStale("c") || s.TaskGeneration("c") == gen {
		t.Fatal("new commit did not produce a new, fresh task generation")
	}
}

func TestSnapshotDeleteAndRecreate(t *testing.T) {
	s := replay(t, []rec{
		{"connector-c", `{"properties":{"name":"c"}}`},
		{"task-c-0", `{"properties":{"a":"1"}}`},
		{"commit-c", `{"tasks":1}`},
		{"target-state-c", `{"state":"PAUSED","state.v2":"PAUSED"}`},
		{"tasks-fencing-c", `{"task-count":1}`},
		// Deletion, as the leader writes it.
		{"connector-c", ""},
		{"target-state-c", ""},
		{"task-c-0", ""},
		{"commit-c", ""},
		{"connector-c", `{"properties":{"name":"c","v":"2"}}`},
	})
	if !s.Contains("c") || s.TaskCount("c") != 0 || s.Target("c") != TargetStarted {
		t.Fatalf("recreated connector inherited old state: tasks=%d target=%s", s.TaskCount("c"), s.Target("c"))
	}
	if n, ok := s.Fencing("c"); !ok || n != 1 {
		t.Fatal("the fencing record must survive deletion so old producers are fenced")
	}
}

func TestSnapshotCloneIsIndependent(t *testing.T) {
	s := replay(t, []rec{{"connector-c", `{"properties":{"name":"c"}}`}})
	c := s.Clone()
	c.Apply(slog.Default(), "connector-d", []byte(`{"properties":{"name":"d"}}`), 5)
	c.Apply(slog.Default(), "connector-c", nil, 6)
	if !s.Contains("c") || s.Contains("d") {
		t.Fatal("applying to a clone changed the original")
	}
}

func TestSnapshotSkipsMalformedRecords(t *testing.T) {
	s := replay(t, []rec{
		{"connector-c", `{"properties":{"name":"c"}}`},
		{"connector-bad", `not json`},
		{"task-nonumber", `{"properties":{}}`},
		{"commit-c", `{"tasks":"x"}`},
		{"target-state-c", `{"state":"DANCING"}`},
		{"connectd-assignment", `{`},
		{"something-else", `{}`},
	})
	if got := s.Connectors(); len(got) != 1 {
		t.Fatalf("connectors = %v", got)
	}
	if s.Target("c") != TargetStarted || s.Assignment() != nil {
		t.Fatal("malformed records were applied")
	}
}

func TestRecordEncodings(t *testing.T) {
	for _, tc := range []struct {
		name string
		v    any
		want string
	}{
		{"stopped", encodeTargetState(TargetStopped), `{"state":"PAUSED","state.v2":"STOPPED"}`},
		{"started", encodeTargetState(TargetStarted), `{"state":"STARTED","state.v2":"STARTED"}`},
		{"commit", commitValue{Tasks: 3}, `{"tasks":3}`},
		{"fencing", fencingValue{TaskCount: 2}, `{"task-count":2}`},
		{"restart", RestartRequest{IncludeTasks: true}, `{"include-tasks":true,"only-failed":false}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got, want any
			if err := json.Unmarshal(encode(tc.v), &got); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal([]byte(tc.want), &want); err != nil {
				t.Fatal(err)
			}
			if !jsonEqual(got, want) {
				t.Fatalf("got %s, want %s", encode(tc.v), tc.want)
			}
		})
	}
}

func jsonEqual(a, b any) bool {
	return string(encode(a)) == string(encode(b))
}

func TestParseTaskID(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want api.ConnectorTaskID
		ok   bool
	}{
		{"a-0", api.ConnectorTaskID{Connector: "a", Task: 0}, true},
		{"my-long-name-12", api.ConnectorTaskID{Connector: "my-long-name", Task: 12}, true},
		{"nonum", api.ConnectorTaskID{}, false},
		{"-1", api.ConnectorTaskID{}, false},
		{"a--1", api.ConnectorTaskID{Connector: "a-", Task: 1}, true},
		{"a-x", api.ConnectorTaskID{}, false},
	} {
		got, err := ParseTaskID(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("ParseTaskID(%q) = %v, %v", tc.in, got, err)
		}
	}
}

// Cluster-wide log levels (logger-cluster-<ns>, KIP-976): the latest
// record per namespace wins, a tombstone forgets it, malformed ones are
// skipped.
func TestSnapshotClusterLoggers(t *testing.T) {
	s := replay(t, []rec{
		{"logger-cluster-connectd", `{"level":"debug"}`},
		{"logger-cluster-connectd.worker", `{"level":"WARN"}`},
		{"logger-cluster-connectd", `{"level":"ERROR"}`},
		{"logger-cluster-connectd.rest", `{"level":"INFO"}`},
		{"logger-cluster-connectd.rest", ""},
		{"logger-cluster-bad", `{"level":"LOUD"}`},
		{"logger-cluster-", `{"level":"INFO"}`},
		{"logger-cluster-broken", `{`},
	})
	want := map[string]LoggerLevel{"connectd": {Level: "ERROR", Offset: 2}, "connectd.worker": {Level: "WARN", Offset: 1}}
	if !maps.Equal(s.loggers, want) {
		t.Fatalf("loggers = %v, want %v", s.loggers, want)
	}
	c := s.Clone()
	c.Apply(slog.New(slog.NewTextHandler(io.Discard, nil)), "logger-cluster-x", []byte(`{"level":"INFO"}`), 9)
	if _, ok := s.loggers["x"]; ok {
		t.Fatal("a clone shares its loggers with the original")
	}
}

// A connector config under a name the REST API refuses (written into the
// topic by hand or by another tool) is skipped: a blank name could never be
// addressed, so the connector could not even be deleted.
func TestSnapshotSkipsConnectorNamesTheAPIRefuses(t *testing.T) {
	const cfg = `{"properties":{"connector.class":"DatagenSource"}}`
	s := replay(t, []rec{
		{"connector-", cfg},
		{"connector- ", cfg},
		{"connector-.", cfg},
		{"connector-..", cfg},
		{"connector-a\x07b", cfg},
		{"connector-a\xffb", cfg},
		{"connector-ok/é", cfg},
	})
	if got := s.Connectors(); len(got) != 1 || got[0] != "ok/é" {
		t.Fatalf("connectors %q, want only \"ok/é\"", got)
	}
}
