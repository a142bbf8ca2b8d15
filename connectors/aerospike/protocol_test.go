package aerospike

import (
	"context"
	"maps"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aerospike/aerospike-client-go/v7/types"

	"github.com/connectd/connectd/connectors/aerospike/aerofake"
	"github.com/connectd/connectd/connectors/aerospike/aerotest"
	"github.com/connectd/connectd/framework/sdk"
)

// counterStream is a deterministic increment workload: partitions ×
// perPartition records, each adding a positive amount to one of nKeys keys.
type counterStream struct {
	topic string
	recs  map[int32][]*sdk.SinkRecord
	sums  map[string]int64
	last  map[string]map[string]int64 // key → "<topic>-<p>" → last offset touching it
}

func newCounterStream(topic string, partitions, perPartition, nKeys int, seed uint64) *counterStream {
	r := rand.New(rand.NewPCG(seed, 1))
	s := &counterStream{topic: topic, recs: map[int32][]*sdk.SinkRecord{}, sums: map[string]int64{}, last: map[string]map[string]int64{}}
	for p := int32(0); p < int32(partitions); p++ {
		for o := int64(0); o < int64(perPartition); o++ {
			k := keyName(r.IntN(nKeys))
			amt := int64(r.IntN(100) + 1)
			s.recs[p] = append(s.recs[p], rec(topic, p, o, k, map[string]any{"key": k, "count": amt, "n": int64(1)}))
			s.sums[k] += amt
			if s.last[k] == nil {
				s.last[k] = map[string]int64{}
			}
			s.last[k][topic+"-"+strconv.Itoa(int(p))] = o
		}
	}
	return s
}

// batches cuts every partition into batches of random sizes and
// interleaves partitions, as a consumer would deliver them.
func (s *counterStream) batches(r *rand.Rand, maxBatch int) [][]*sdk.SinkRecord {
	next := map[int32]int{}
	var out [][]*sdk.SinkRecord
	for {
		var b []*sdk.SinkRecord
		for p, recs := range s.recs {
			n := r.IntN(maxBatch) + 1
			end := min(next[p]+n, len(recs))
			b = append(b, recs[next[p]:end]...)
			next[p] = end
		}
		if len(b) == 0 {
			return out
		}
		out = append(out, b)
	}
}

func (s *counterStream) check(t *testing.T, srv *aerotest.Cluster) {
	t.Helper()
	for k, want := range s.sums {
		r := stored(t, srv, "s", k)
		if r == nil {
			t.Fatalf("key %s missing", k)
		}
		if got := r.Bins["count"]; got != want {
			t.Errorf("key %s: count = %v, want %d", k, got, want)
		}
		pos := positionsOf(t, r, "kafka_pos")
		for p, o := range s.last[k] {
			if pos[p] != o {
				t.Errorf("key %s: positions[%s] = %d, want %d", k, p, pos[p], o)
			}
		}
	}
}

func TestIncrementExactUnderReplay(t *testing.T) {
	srv := startServer(t, aerofake.Config{})
	props := baseProps(srv, KeyWriteMode, ModeIncrement)
	task, tc := startTask(t, props)
	s := newCounterStream("orders", 3, 300, 25, 7)
	r := rand.New(rand.NewPCG(42, 42))
	batches := s.batches(r, 40)
	// Deliver every batch, and after some of them redeliver a random
	// earlier stretch, as a consumer does after a crash before a commit.
	for i, b := range batches {
		mustPut(t, task, b...)
		if r.IntN(3) == 0 {
			from := r.IntN(i + 1)
			for _, old := range batches[from : i+1] {
				mustPut(t, task, old...)
			}
		}
	}
	s.check(t, srv)
	if n := tc.counter(t, "connectd_aerospike_sink_records_written_total"); n != 900 {
		t.Errorf("records written = %v, want 900", n)
	}
	if n := tc.counter(t, "connectd_aerospike_sink_duplicates_skipped_total"); n == 0 {
		t.Error("no duplicates counted although batches were replayed")
	}
	if len(tc.Reports()) != 0 {
		t.Fatalf("unexpected reports: %v", tc.Reports())
	}
}

// A full replay after everything was applied writes nothing: generations
// and the server's write counter stay unchanged.
func TestFullReplayChangesNothing(t *testing.T) {
	srv := startServer(t, aerofake.Config{})
	task, tc := startTask(t, baseProps(srv, KeyWriteMode, ModeIncrement))
	s := newCounterStream("orders", 2, 200, 10, 3)
	r := rand.New(rand.NewPCG(1, 2))
	batches := s.batches(r, 50)
	for _, b := range batches {
		mustPut(t, task, b...)
	}
	before := generations(t, srv, "s")
	fake := fakeOnly(t, srv, "the server's write counter")
	var writes int64
	if fake != nil {
		writes = fake.Stats().Writes
	}
	for _, b := range batches {
		mustPut(t, task, b...)
	}
	if after := generations(t, srv, "s"); !maps.Equal(before, after) {
		t.Errorf("the replay changed generations: %v → %v", before, after)
	}
	if fake != nil {
		if w := fake.Stats().Writes; w != writes {
			t.Errorf("server writes %d → %d during the replay", writes, w)
		}
	}
	if n := tc.counter(t, "connectd_aerospike_sink_duplicates_skipped_total"); n != 400 {
		t.Errorf("duplicates skipped = %v, want 400", n)
	}
	s.check(t, srv)
}

// Two tasks apply the same stream concurrently (a zombie and its
// replacement): every record is applied once.
func TestConcurrentWritersExact(t *testing.T) {
	srv := startServer(t, aerofake.Config{})
	props := baseProps(srv, KeyWriteMode, ModeIncrement, KeyRetryAttempts, "1000")
	a, tca := startTask(t, props)
	b, tcb := startTask(t, props)
	s := newCounterStream("orders", 4, 250, 8, 11)
	var wg sync.WaitGroup
	for i, task := range []*SinkTask{a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(i), 99))
			for _, batch := range s.batches(r, 30) {
				if err := task.Put(context.Background(), batch); err != nil {
					t.Errorf("task %d: put: %v", i, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	s.check(t, srv)
	written := tca.counter(t, "connectd_aerospike_sink_records_written_total") + tcb.counter(t, "connectd_aerospike_sink_records_written_total")
	if written != 1000 {
		t.Errorf("records written by both tasks = %v, want 1000", written)
	}
}

// The zombie's write is held up on the server after it read the record;
// meanwhile the live task applies the same batch. The zombie's write then
// fails its generation check, it re-reads and skips everything.
func TestZombieWriteLosesGenerationCheck(t *testing.T) {
	srv := startServer(t, aerofake.Config{})
	srv.NeedFake(t, "fault injection")
	props := baseProps(srv, KeyWriteMode, ModeIncrement)
	zombie, tcz := startTask(t, props)
	live, _ := startTask(t, props)
	batch := []*sdk.SinkRecord{
		rec("t", 0, 0, "a", map[string]any{"count": int64(5)}),
		rec("t", 0, 1, "b", map[string]any{"count": int64(7)}),
		rec("t", 0, 2, "a", map[string]any{"count": int64(1)}),
	}
	mustPut(t, live, rec("t", 1, 0, "a", map[string]any{"count": int64(100)})) // "a" exists, "b" does not
	srv.Fake().InjectFault(aerofake.Fault{Ops: aerofake.OpWrite, Times: 1, Delay: 400 * time.Millisecond})
	done := make(chan error, 1)
	go func() { done <- zombie.Put(context.Background(), batch) }()
	waitFor(t, func() bool { return len(srv.Fake().PendingFaults()) == 0 }) // the zombie's write is now delayed
	mustPut(t, live, batch...)
	if err := <-done; err != nil {
		t.Fatalf("zombie put: %v", err)
	}
	if got := stored(t, srv, "s", "a").Bins["count"]; got != int64(106) {
		t.Errorf("a = %v, want 106", got)
	}
	if got := stored(t, srv, "s", "b").Bins["count"]; got != int64(7) {
		t.Errorf("b = %v, want 7", got)
	}
	if n := tcz.counter(t, "connectd_aerospike_sink_generation_conflicts_total"); n != 2 {
		t.Errorf("zombie conflicts = %v, want 2 (GENERATION_ERROR for a, KEY_EXISTS_ERROR for b)", n)
	}
	if n := tcz.counter(t, "connectd_aerospike_sink_records_written_total"); n != 0 {
		t.Errorf("zombie wrote %v records, want 0", n)
	}
	if n := tcz.counter(t, "connectd_aerospike_sink_duplicates_skipped_total"); n != 3 {
		t.Errorf("zombie skipped %v duplicates, want 3", n)
	}
}

// generations maps every record of set to its generation, read through the
// client.
func generations(t *testing.T, srv *aerotest.Cluster, set string) map[[20]byte]uint32 {
	t.Helper()
	out := map[[20]byte]uint32{}
	for _, r := range srv.Scan(t, set) {
		out[r.Digest] = r.Generation
	}
	return out
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached within 10s")
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// A tombstone leaves a record that holds only the positions bin, so a
// replayed older update is skipped instead of resurrecting the data.
func TestTombstoneThenReplayOlderUpdate(t *testing.T) {
	for _, mode := range []string{ModeReplace, ModeUpdate, ModeIncrement} {
		t.Run(mode, func(t *testing.T) {
			srv := startServer(t, aerofake.Config{})
			task, _ := startTask(t, baseProps(srv, KeyWriteMode, mode))
			upd := rec("t", 0, 10, "user-1", map[string]any{"name": "ann", "count": int64(3)})
			del := rec("t", 0, 11, "user-1", nil)
			mustPut(t, task, upd)
			mustPut(t, task, del)
			r := stored(t, srv, "s", "user-1")
			if r == nil {
				t.Fatal("tombstone removed the record; it must keep the positions bin")
			}
			if len(r.Bins) != 1 {
				t.Fatalf("after tombstone bins = %v, want only kafka_pos", r.Bins)
			}
			gen := r.Generation
			// Replay of the older update, alone and together with the tombstone.
			mustPut(t, task, upd)
			mustPut(t, task, upd, del)
			r = stored(t, srv, "s", "user-1")
			if len(r.Bins) != 1 || r.Generation != gen {
				t.Fatalf("replay changed the record: bins %v gen %d → %d", r.Bins, gen, r.Generation)
			}
			if p := positionsOf(t, r, "kafka_pos"); p["t-0"] != 11 {
				t.Fatalf("positions = %v, want t-0 → 11", p)
			}
			// A newer update after the tombstone applies to an empty record.
			mustPut(t, task, rec("t", 0, 12, "user-1", map[string]any{"count": int64(4)}))
			r = stored(t, srv, "s", "user-1")
			if got := r.Bins["count"]; got != int64(4) {
				t.Fatalf("count after tombstone and new update = %v, want 4", got)
			}
			if _, ok := r.Bins["name"]; ok {
				t.Fatal("deleted bin name came back")
			}
		})
	}
}

// A tombstone for a record that never existed still records its position.
func TestTombstoneOfAbsentRecordKeepsPosition(t *testing.T) {
	srv := startServer(t, aerofake.Config{})
	task, _ := startTask(t, baseProps(srv))
	mustPut(t, task, rec("t", 2, 5, "gone", nil))
	mustPut(t, task, rec("t", 2, 4, "gone", map[string]any{"v": "old"}))
	r := stored(t, srv, "s", "gone")
	if r == nil || len(r.Bins) != 1 || positionsOf(t, r, "kafka_pos")["t-2"] != 5 {
		t.Fatalf("record = %+v, want only positions t-2 → 5", r)
	}
}

func TestReplaceKeepsOtherPartitionsPositions(t *testing.T) {
	srv := startServer(t, aerofake.Config{})
	task, _ := startTask(t, baseProps(srv, KeyWriteMode, ModeReplace))
	mustPut(t, task, rec("a", 0, 7, "k", map[string]any{"x": int64(1), "y": "old"}))
	mustPut(t, task, rec("b", 3, 2, "k", map[string]any{"x": int64(2)}))
	r := stored(t, srv, "s", "k")
	if _, ok := r.Bins["y"]; ok || r.Bins["x"] != int64(2) {
		t.Fatalf("replace left bins %v", r.Bins)
	}
	p := positionsOf(t, r, "kafka_pos")
	if p["a-0"] != 7 || p["b-3"] != 2 {
		t.Fatalf("positions = %v", p)
	}
	// The older record of partition a-0 is still a duplicate.
	mustPut(t, task, rec("a", 0, 7, "k", map[string]any{"x": int64(99)}))
	if r := stored(t, srv, "s", "k"); r.Bins["x"] != int64(2) {
		t.Fatalf("replayed replace applied: %v", r.Bins)
	}
}

func TestUpdateMergesAndNullDeletes(t *testing.T) {
	srv := startServer(t, aerofake.Config{})
	task, _ := startTask(t, baseProps(srv, KeyWriteMode, ModeUpdate))
	mustPut(t, task,
		rec("t", 0, 0, "k", map[string]any{"a": int64(1), "b": "x"}),
		rec("t", 0, 1, "k", map[string]any{"c": 2.5, "nested": map[string]any{"z": true}}),
	)
	mustPut(t, task, rec("t", 0, 2, "k", map[string]any{"b": nil, "a": int64(5)}))
	r := stored(t, srv, "s", "k")
	if _, ok := r.Bins["b"]; ok {
		t.Fatalf("null did not delete bin b: %v", r.Bins)
	}
	if r.Bins["a"] != int64(5) || r.Bins["c"] != 2.5 {
		t.Fatalf("bins = %v", r.Bins)
	}
	nested, ok := r.Bins["nested"].(map[any]any)
	if !ok || nested["z"] != true {
		t.Fatalf("nested = %#v, want a map bin", r.Bins["nested"])
	}
}

// Transient failures (busy keys, timeouts, dropped connections, a failed
// batch, writes applied but answered with an error) are retried until the
// batch is applied exactly once.
func TestTransientFaultsRetriedExactlyOnce(t *testing.T) {
	faults := []struct {
		name  string
		fault aerofake.Fault
	}{
		{"key busy on write rows", aerofake.Fault{Ops: aerofake.OpWrite, Times: 3, ResultCode: aerofake.ResultCode(types.KEY_BUSY)}},
		{"timeout on read rows", aerofake.Fault{Ops: aerofake.OpRead, Times: 2, ResultCode: aerofake.ResultCode(types.TIMEOUT)}},
		{"partition unavailable", aerofake.Fault{Ops: aerofake.OpWrite, Times: 2, ResultCode: aerofake.ResultCode(types.PARTITION_UNAVAILABLE)}},
		{"whole batch timeout", aerofake.Fault{Ops: aerofake.OpBatch, Times: 2, ResultCode: aerofake.ResultCode(types.TIMEOUT)}},
		{"dropped connection", aerofake.Fault{Ops: aerofake.OpWrite, Times: 2, DropConnection: true}},
		{"applied then timeout (in doubt)", aerofake.Fault{Ops: aerofake.OpWrite, Times: 3, ResultCode: aerofake.ResultCode(types.TIMEOUT), AfterApply: true}},
		{"applied then dropped (in doubt)", aerofake.Fault{Ops: aerofake.OpWrite, Times: 2, DropConnection: true, AfterApply: true}},
		{"batch applied then failed", aerofake.Fault{Ops: aerofake.OpBatch, Times: 2, ResultCode: aerofake.ResultCode(types.TIMEOUT), AfterApply: true}},
	}
	for _, tt := range faults {
		t.Run(tt.name, func(t *testing.T) {
			srv := startServer(t, aerofake.Config{})
			srv.NeedFake(t, "fault injection")
			task, tc := startTask(t, baseProps(srv, KeyWriteMode, ModeIncrement, KeyClientRetries, "0"))
			s := newCounterStream("t", 2, 60, 6, 5)
			r := rand.New(rand.NewPCG(3, 3))
			batches := s.batches(r, 20)
			mustPut(t, task, batches[0]...)
			srv.Fake().InjectFault(tt.fault)
			for _, b := range batches[1:] {
				mustPut(t, task, b...)
			}
			if p := srv.Fake().PendingFaults(); len(p) != 0 {
				t.Fatalf("fault not consumed: %+v", p)
			}
			s.check(t, srv)
			if n := tc.counter(t, "connectd_aerospike_sink_retries_total"); n == 0 {
				t.Error("no retries counted")
			}
			if len(tc.Reports()) != 0 {
				t.Fatalf("transient failures were reported: %v", describe(tc.Reports()[0]))
			}
		})
	}
}

// When transient failures outlast the attempts, Put fails as retriable,
// Flush does not let the framework commit past the batch, and the
// redelivered batch applies exactly once.
func TestRetriesExhaustedNothingCommittedPastUnwritten(t *testing.T) {
	srv := startServer(t, aerofake.Config{})
	srv.NeedFake(t, "fault injection")
	task, _ := startTask(t, baseProps(srv, KeyWriteMode, ModeIncrement, KeyRetryAttempts, "3", KeyClientRetries, "0"))
	tp := sdk.TopicPartition{Topic: "t", Partition: 0}
	first := []*sdk.SinkRecord{rec("t", 0, 0, "a", map[string]any{"count": int64(1)})}
	mustPut(t, task, first...)
	second := []*sdk.SinkRecord{
		rec("t", 0, 1, "a", map[string]any{"count": int64(10)}),
		rec("t", 0, 2, "b", map[string]any{"count": int64(20)}),
	}
	srv.Fake().InjectFault(aerofake.Fault{Ops: aerofake.OpWrite, ResultCode: aerofake.ResultCode(types.KEY_BUSY)})
	err := task.Put(context.Background(), second)
	if err == nil || !sdk.IsRetriable(err) {
		t.Fatalf("put under persistent KEY_BUSY = %v, want a retriable error", err)
	}
	if !strings.Contains(err.Error(), "KEY_BUSY") {
		t.Errorf("error does not name the result code: %v", err)
	}
	got, err := task.Flush(context.Background(), map[sdk.TopicPartition]int64{tp: 3})
	if err != nil {
		t.Fatal(err)
	}
	if got[tp] != 1 {
		t.Fatalf("flush after failed put commits %v, want t-0 → 1 (only offset 0 is written)", got)
	}
	srv.Fake().ClearFaults()
	mustPut(t, task, second...)
	got, _ = task.Flush(context.Background(), map[sdk.TopicPartition]int64{tp: 3})
	if got[tp] != 3 {
		t.Fatalf("flush after redelivery = %v, want t-0 → 3", got)
	}
	if a := stored(t, srv, "s", "a").Bins["count"]; a != int64(11) {
		t.Errorf("a = %v, want 11", a)
	}
	if b := stored(t, srv, "s", "b").Bins["count"]; b != int64(20) {
		t.Errorf("b = %v, want 20", b)
	}
}

// Permanent failures are reported with the result code; the key's other
// records and other keys are still written.
func TestPermanentErrorsReportedWithResultCode(t *testing.T) {
	srv := startServer(t, aerofake.Config{MaxRecordSize: 4096})
	task, tc := startTask(t, baseProps(srv, KeyWriteMode, ModeIncrement))
	// "bad" holds a string in bin n: incrementing it is BIN_TYPE_ERROR.
	mustPut(t, task, rec("t", 0, 0, "bad", map[string]any{"n": "text"}))
	batch := []*sdk.SinkRecord{
		rec("t", 0, 1, "good", map[string]any{"n": int64(1)}),
		rec("t", 0, 2, "bad", map[string]any{"n": int64(5)}),
		rec("t", 0, 3, "good", map[string]any{"n": int64(2)}),
		rec("t", 0, 4, "bad", map[string]any{"m": int64(3)}),
		rec("t", 0, 5, "big", map[string]any{"blob": strings.Repeat("x", srv.MaxRecordSize(t)+4000)}),
		rec("t", 0, 6, "big", map[string]any{"n": int64(1)}),
	}
	mustPut(t, task, batch...)
	reps := tc.Reports()
	if len(reps) != 2 {
		for _, r := range reps {
			t.Log(describe(r))
		}
		t.Fatalf("%d reports, want 2", len(reps))
	}
	want := map[int64]types.ResultCode{2: types.BIN_TYPE_ERROR, 5: types.RECORD_TOO_BIG}
	for _, r := range reps {
		code, ok := want[r.rec.OriginalOffset]
		if !ok {
			t.Fatalf("unexpected report %s", describe(r))
		}
		we, ok := errorsAs[*WriteError](r.err)
		if !ok || we.Code != code {
			t.Fatalf("report %s: want a WriteError with code %v", describe(r), code)
		}
		if !strings.Contains(r.err.Error(), "result code "+strconv.Itoa(int(code))) {
			t.Errorf("message lacks the result code: %v", r.err)
		}
	}
	if got := stored(t, srv, "s", "good").Bins["n"]; got != int64(3) {
		t.Errorf("good n = %v, want 3", got)
	}
	bad := stored(t, srv, "s", "bad")
	if bad.Bins["n"] != "text" || bad.Bins["m"] != int64(3) {
		t.Errorf("bad = %v, want n=text m=3", bad.Bins)
	}
	if p := positionsOf(t, bad, "kafka_pos"); p["t-0"] != 4 {
		t.Errorf("bad positions = %v, want t-0 → 4", p)
	}
	if got := stored(t, srv, "s", "big").Bins["n"]; got != int64(1) {
		t.Errorf("big n = %v, want 1", got)
	}
	if n := tc.counter(t, "connectd_aerospike_sink_errors_total", "result_code", "BIN_TYPE_ERROR"); n != 1 {
		t.Errorf("errors_total{BIN_TYPE_ERROR} = %v, want 1", n)
	}
	if n := tc.counter(t, "connectd_aerospike_sink_errors_total", "result_code", "RECORD_TOO_BIG"); n != 1 {
		t.Errorf("errors_total{RECORD_TOO_BIG} = %v, want 1", n)
	}
}

func TestParameterErrorReported(t *testing.T) {
	srv := startServer(t, aerofake.Config{})
	srv.NeedFake(t, "fault injection")
	task, tc := startTask(t, baseProps(srv))
	srv.Fake().FailNext(1, aerofake.OpWrite, aerofake.ResultCode(types.PARAMETER_ERROR))
	mustPut(t, task, rec("t", 0, 0, "k", map[string]any{"v": int64(1)}))
	reps := tc.Reports()
	if len(reps) != 1 || !strings.Contains(reps[0].err.Error(), "result code 4 PARAMETER_ERROR") {
		t.Fatalf("reports = %v", reps)
	}
	if stored(t, srv, "s", "k") != nil {
		t.Fatal("record written although the server refused it")
	}
}

// A read the server refuses for good fails the whole BatchGet; the sink
// then reads row by row and reports only the key that is refused.
func TestPermanentReadErrorReportsOnlyThatKey(t *testing.T) {
	srv := startServer(t, aerofake.Config{})
	srv.NeedFake(t, "fault injection")
	task, tc := startTask(t, baseProps(srv, KeyWriteMode, ModeIncrement))
	// Rows a and b of the BatchGet, then row a of the per-row read.
	srv.Fake().FailNext(3, aerofake.OpRead, aerofake.ParameterError)
	mustPut(t, task,
		rec("t", 0, 0, "a", map[string]any{"n": int64(1)}),
		rec("t", 0, 1, "b", map[string]any{"n": int64(2)}),
		rec("t", 0, 2, "a", map[string]any{"n": int64(3)}),
	)
	reps := tc.Reports()
	if len(reps) != 2 {
		t.Fatalf("reports = %v, want both records of key a", reps)
	}
	for _, r := range reps {
		if r.rec.Key != "a" || !strings.Contains(r.err.Error(), "result code 4 PARAMETER_ERROR") {
			t.Fatalf("report %s", describe(r))
		}
	}
	if stored(t, srv, "s", "a") != nil || stored(t, srv, "s", "b").Bins["n"] != int64(2) {
		t.Fatal("wrong records written")
	}
}
