package aerospike

import (
	"context"
	"strings"
	"testing"
	"time"

	as "github.com/aerospike/aerospike-client-go/v7"
	"github.com/prometheus/client_golang/prometheus/testutil/promlint"

	"github.com/connectd/connectd/connectors/aerospike/aerofake"
	"github.com/connectd/connectd/connectors/aerospike/aerotest"
	"github.com/connectd/connectd/framework/sdk"
)

func TestTTL(t *testing.T) {
	srv := startServer(t, aerofake.Config{Namespaces: []aerofake.NamespaceConfig{{Name: "test", AllowTTL: true}, {Name: "nottl"}}})
	value := map[string]any{"v": int64(1)}

	never, _ := startTask(t, baseProps(srv, KeyTTL, "-1"))
	mustPut(t, never, rec("t", 0, 0, "never", value))
	if r := stored(t, srv, "s", "never"); r.TTL != aerotest.NeverExpires {
		t.Errorf("ttl -1: TTL %d, want never", r.TTL)
	}

	// A namespace that refuses TTLs (the server's default while nsup is
	// off) rejects the write; the record is reported with the result code.
	refusing := "nottl"
	if srv.External() {
		refusing = ""
		if !srv.AllowsTTL(t) {
			refusing = srv.Namespace
		}
	}
	if refusing != "" {
		forbidden, tc := startTask(t, baseProps(srv, KeyNamespace, refusing, KeyTTL, "60"))
		mustPut(t, forbidden, rec("t", 0, 3, "x", value))
		reps := tc.Reports()
		if len(reps) != 1 || !strings.Contains(reps[0].err.Error(), "result code 22") {
			t.Fatalf("reports = %v, want one with result code 22 (FAIL_FORBIDDEN)", reps)
		}
	} else {
		t.Log("not checked against the external cluster: refusal of TTLs (its namespace allows them)")
	}
	if refusing == srv.Namespace {
		t.Log("not checked against the external cluster: positive TTLs (its namespace refuses them)")
		return
	}

	hour, _ := startTask(t, baseProps(srv, KeyTTL, "3600"))
	mustPut(t, hour, rec("t", 0, 1, "hour", value))
	expiry := func() time.Time {
		t.Helper()
		return time.Now().Add(time.Duration(stored(t, srv, "s", "hour").TTL) * time.Second)
	}
	exp := expiry()
	if d := time.Until(exp); d < 59*time.Minute || d > 61*time.Minute {
		t.Errorf("ttl 3600: expires in %v", d)
	}

	keep, _ := startTask(t, baseProps(srv, KeyTTL, "-2"))
	mustPut(t, keep, rec("t", 0, 2, "hour", value))
	// TTLs are whole seconds read at two moments: allow two seconds.
	if got := expiry(); got.Sub(exp).Abs() > 2*time.Second {
		t.Errorf("ttl -2 changed the expiry %v → %v", exp, got)
	}
}

func TestSendKeyAndTopicSet(t *testing.T) {
	srv := startServer(t, aerofake.Config{})
	task, _ := startTask(t, baseProps(srv, KeySendKey, "true", KeySet, "pre_${topic}"))
	mustPut(t, task, rec("orders", 0, 0, "o-1", map[string]any{"v": "x"}))
	// A scan: the key comes from the server, as stored.
	rs := srv.Scan(t, "pre_orders")
	if len(rs) != 1 {
		t.Fatalf("%d records in set pre_orders, want 1", len(rs))
	}
	r := rs[0]
	if r.Key != "o-1" {
		t.Fatalf("stored key = %v, want o-1 (send.key)", r.Key)
	}
}

func TestKeyFromValueFieldAndHeader(t *testing.T) {
	srv := startServer(t, aerofake.Config{})
	byField, _ := startTask(t, baseProps(srv, KeyKeySource, "value_field", KeyKeyField, "id", KeyKeyType, "string"))
	mustPut(t, byField, rec("t", 0, 0, nil, map[string]any{"id": int64(17), "v": "a"}))
	if r := stored(t, srv, "s", "17"); r == nil || r.Bins["id"] != int64(17) {
		t.Fatalf("record by value field = %+v", r)
	}
	byHeader, _ := startTask(t, baseProps(srv, KeyKeySource, "header", KeyKeyHeader, "k"))
	r := rec("t", 0, 1, nil, map[string]any{"v": "b"})
	r.Headers = []sdk.Header{{Key: "k", Value: []byte("from-header")}}
	mustPut(t, byHeader, r)
	if got := stored(t, srv, "s", "from-header"); got == nil || got.Bins["v"] != "b" {
		t.Fatalf("record by header = %+v", got)
	}
}

// Records that cannot be mapped are reported; the rest of the batch is
// written and committable.
func TestBadRecordsReportedNotSkipped(t *testing.T) {
	srv := startServer(t, aerofake.Config{})
	task, tc := startTask(t, baseProps(srv))
	batch := []*sdk.SinkRecord{
		rec("t", 0, 0, "", map[string]any{"v": int64(1)}),
		rec("t", 0, 1, "ok", map[string]any{"v": int64(1)}),
		rec("t", 0, 2, "long", map[string]any{"a_field_name_too_long": int64(1)}),
		rec("t", 0, 3, nil, map[string]any{"v": int64(1)}),
		rec("t", 0, 4, "str", "plain string"),
	}
	mustPut(t, task, batch...)
	reps := tc.Reports()
	if len(reps) != 4 {
		t.Fatalf("%d reports, want 4: %v", len(reps), reps)
	}
	wants := []string{"record key is empty", "at most 15 bytes", "record key is null", "not an object or struct"}
	for i, r := range reps {
		if !strings.Contains(r.err.Error(), wants[i]) || !strings.Contains(r.err.Error(), "t-0@") {
			t.Errorf("report %d = %v, want %q and the record position", i, r.err, wants[i])
		}
	}
	if stored(t, srv, "s", "ok") == nil {
		t.Fatal("the good record was not written")
	}
	if n := tc.counter(t, "connectd_aerospike_sink_errors_total", "result_code", labelBadMapping); n != 4 {
		t.Errorf("errors_total{BAD_MAPPING} = %v, want 4", n)
	}
	tp := sdk.TopicPartition{Topic: "t", Partition: 0}
	got, _ := task.Flush(context.Background(), map[sdk.TopicPartition]int64{tp: 5})
	if got[tp] != 5 {
		t.Fatalf("flush = %v, want t-0 → 5 (reported records are the framework's now)", got)
	}
}

// A record written by someone else (no positions bin) is updated under the
// generation check and gains a positions bin; a positions bin holding
// something else is reported, not overwritten.
func TestForeignRecords(t *testing.T) {
	srv := startServer(t, aerofake.Config{})
	client := srv.Client(t)
	k, _ := as.NewKey(srv.Namespace, srv.Set("s"), "foreign")
	if err := client.Put(nil, k, as.BinMap{"n": 10, "other": "kept"}); err != nil {
		t.Fatal(err)
	}
	k2, _ := as.NewKey(srv.Namespace, srv.Set("s"), "clash")
	if err := client.Put(nil, k2, as.BinMap{"kafka_pos": "not a map"}); err != nil {
		t.Fatal(err)
	}
	task, tc := startTask(t, baseProps(srv, KeyWriteMode, ModeIncrement))
	mustPut(t, task,
		rec("t", 0, 0, "foreign", map[string]any{"n": int64(5)}),
		rec("t", 0, 1, "clash", map[string]any{"n": int64(5)}),
	)
	r := stored(t, srv, "s", "foreign")
	if r.Bins["n"] != int64(15) || r.Bins["other"] != "kept" || positionsOf(t, r, "kafka_pos")["t-0"] != 0 {
		t.Fatalf("foreign record = %v", r.Bins)
	}
	reps := tc.Reports()
	if len(reps) != 1 || !strings.Contains(reps[0].err.Error(), `positions bin "kafka_pos" holds string`) {
		t.Fatalf("reports = %v", reps)
	}
	if got := stored(t, srv, "s", "clash").Bins["kafka_pos"]; got != "not a map" {
		t.Fatalf("clashing bin overwritten: %v", got)
	}
}

func TestBlindMode(t *testing.T) {
	srv := startServer(t, aerofake.Config{})
	task, _ := startTask(t, baseProps(srv, KeyWriteMode, ModeReplace, KeyEffectivelyOne, "false"))
	mustPut(t, task,
		rec("t", 0, 0, "a", map[string]any{"x": int64(1), "y": "1"}),
		rec("t", 0, 1, "b", map[string]any{"x": int64(2)}),
		rec("t", 0, 2, "a", map[string]any{"x": int64(3)}),
	)
	a := stored(t, srv, "s", "a")
	if len(a.Bins) != 1 || a.Bins["x"] != int64(3) {
		t.Fatalf("a = %v, want only x=3 and no positions bin", a.Bins)
	}
	reads := statsOf(srv).Reads
	mustPut(t, task, rec("t", 0, 3, "b", nil), rec("t", 0, 4, "missing", nil))
	if fakeOnly(t, srv, "the server counts reads") != nil && statsOf(srv).Reads != reads {
		t.Fatal("blind mode read records")
	}
	if stored(t, srv, "s", "b") != nil {
		t.Fatal("blind tombstone did not delete b")
	}
}

func TestBatchSplitIntoCommands(t *testing.T) {
	srv := startServer(t, aerofake.Config{})
	task, _ := startTask(t, baseProps(srv, KeyBatchMaxKeys, "3", KeyWriteMode, ModeIncrement))
	var batch []*sdk.SinkRecord
	for i := 0; i < 10; i++ {
		batch = append(batch, rec("t", 0, int64(i), keyName(i%7), map[string]any{"n": int64(1)}))
	}
	before := statsOf(srv).Batches
	mustPut(t, task, batch...)
	// 7 keys in chunks of 3, 3 and 1: the last chunk is a single-key
	// command, the other two need a batch read and a batch write each.
	if got := statsOf(srv).Batches - before; fakeOnly(t, srv, "the server counts Batches") != nil && got != 4 {
		t.Errorf("batch commands = %d, want 4", got)
	}
	for i := 0; i < 7; i++ {
		want := int64(1)
		if i < 3 {
			want = 2
		}
		if got := stored(t, srv, "s", keyName(i)).Bins["n"]; got != want {
			t.Errorf("%s = %v, want %d", keyName(i), got, want)
		}
	}
}

func TestMetricsLintAndNames(t *testing.T) {
	srv := startServer(t, aerofake.Config{})
	task, tc := startTask(t, baseProps(srv, KeyWriteMode, ModeIncrement))
	mustPut(t, task, rec("t", 0, 0, "a", map[string]any{"n": int64(1)}), rec("t", 0, 1, "", map[string]any{}))
	mustPut(t, task, rec("t", 0, 0, "a", map[string]any{"n": int64(1)}))
	// One refused write makes a retry and an error count.
	retries := 0.0
	if fake := fakeOnly(t, srv, "a refused write (fault injection) for the retry and error counters"); fake != nil {
		fake.FailNext(1, aerofake.OpWrite, aerofake.KeyBusy)
		retries = 1
	}
	mustPut(t, task, rec("t", 0, 2, "a", map[string]any{"n": int64(1)}))
	mfs, err := tc.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	problems, err := promlint.NewWithMetricFamilies(mfs).Lint()
	if err != nil || len(problems) > 0 {
		t.Fatalf("promlint: %v %v", problems, err)
	}
	want := map[string]float64{
		"connectd_aerospike_sink_records_written_total":    2,
		"connectd_aerospike_sink_duplicates_skipped_total": 1,
		"connectd_aerospike_sink_retries_total":            retries,
		"connectd_aerospike_sink_batch_duration_seconds":   3,
	}
	for name, v := range want {
		if got := tc.counter(t, name); got != v {
			t.Errorf("%s = %v, want %v", name, got, v)
		}
	}
	if got := tc.counter(t, "connectd_aerospike_sink_errors_total", "result_code", "KEY_BUSY"); got != retries {
		t.Errorf("errors_total{KEY_BUSY} = %v, want 1", got)
	}
	names := map[string]bool{}
	for _, mf := range mfs {
		names[mf.GetName()] = true
	}
	if !names["connectd_aerospike_sink_generation_conflicts_total"] {
		t.Error("generation conflicts counter not registered")
	}
}

func TestStopClosesClient(t *testing.T) {
	srv := startServer(t, aerofake.Config{})
	srv.NeedFake(t, "the server's count of open connections")
	task, _ := startTask(t, baseProps(srv))
	mustPut(t, task, rec("t", 0, 0, "a", map[string]any{"n": int64(1)}))
	if err := task.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return statsOf(srv).ConnectionsOpen == 0 })
}

// TestStatsSet: stats.set keeps the connector's applied and duplicate
// counts in Aerospike, so a task started after another (a restart: a new
// plugin process whose Prometheus counters start at 0) adds to them.
func TestStatsSet(t *testing.T) {
	srv := startServer(t, aerofake.Config{})
	props := baseProps(srv, KeyWriteMode, ModeIncrement, KeyStatsSet, srv.Set("sink_stats"))
	first, _ := startTask(t, props)
	mustPut(t, first, rec("t", 0, 0, "a", map[string]any{"n": int64(1)}), rec("t", 0, 1, "b", map[string]any{"n": int64(1)}),
		rec("t", 0, 2, "a", map[string]any{"n": int64(1)}))
	// The restarted task is given offsets 1..4 again: 1 and 2 are skipped.
	second, tc := startTask(t, props)
	var replay []*sdk.SinkRecord
	for off := int64(1); off <= 4; off++ {
		replay = append(replay, rec("t", 0, off, []string{"a", "b"}[off%2], map[string]any{"n": int64(1)}))
	}
	mustPut(t, second, replay...)
	if got := tc.counter(t, "connectd_aerospike_sink_duplicates_skipped_total"); got != 2 {
		t.Errorf("the second task's duplicates counter = %v, want 2", got)
	}
	st := stored(t, srv, "sink_stats", "test-sink")
	if st == nil {
		t.Fatal("no stats record for connector test-sink in set sink_stats")
	}
	if st.Bins[StatsBinApplied] != int64(5) || st.Bins[StatsBinDuplicates] != int64(2) {
		t.Errorf("stats record %v, want applied=5 duplicates=2 over both tasks", st.Bins)
	}

	// Without stats.set nothing is written there.
	srv2 := startServer(t, aerofake.Config{})
	plain, _ := startTask(t, baseProps(srv2, KeyWriteMode, ModeIncrement))
	mustPut(t, plain, rec("t", 0, 0, "a", map[string]any{"n": int64(1)}))
	if st := stored(t, srv2, "sink_stats", "test-sink"); st != nil {
		t.Errorf("stats record written without stats.set: %v", st.Bins)
	}
}

func TestStatsSetConfig(t *testing.T) {
	for _, tc := range []struct {
		name  string
		kv    []string
		error string
	}{
		{"fixed namespace", []string{KeyStatsSet, "stats"}, ""},
		{"dynamic namespace", []string{KeyStatsSet, "stats", KeyNamespace, "${value.ns}"}, "needs a fixed aerospike.namespace"},
		{"placeholder", []string{KeyStatsSet, "${topic}"}, "without ':', ';', NUL or placeholders"},
		{"too long", []string{KeyStatsSet, strings.Repeat("s", 64)}, "at most 63 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			props := map[string]string{KeyHosts: "127.0.0.1:3000", KeyNamespace: "test"}
			for i := 0; i+1 < len(tc.kv); i += 2 {
				props[tc.kv[i]] = tc.kv[i+1]
			}
			_, errs := parseConfig(props)
			var msgs []string
			for _, e := range errs {
				msgs = append(msgs, e.Key+": "+e.Message)
			}
			got := strings.Join(msgs, "; ")
			if (tc.error == "") != (got == "") || !strings.Contains(got, tc.error) {
				t.Errorf("errors %q, want one containing %q", got, tc.error)
			}
		})
	}
}
