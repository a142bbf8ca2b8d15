package aerospike

import (
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/aerospike/aerospike-client-go/v7/types"

	"github.com/connectd/connectd/connectors/aerospike/aerofake"
	"github.com/connectd/connectd/framework/sdk"
)

// Keys are cut into commands by estimated bytes as well as by count.
func TestBatchSplitByBytes(t *testing.T) {
	srv := startServer(t, aerofake.Config{})
	task, _ := startTask(t, baseProps(srv, KeyBatchMaxBytes, "65536"))
	value := strings.Repeat("x", 10000)
	var batch []*sdk.SinkRecord
	for i := range 20 {
		batch = append(batch, rec("t", 0, int64(i), keyName(i), map[string]any{"v": value}))
	}
	before := statsOf(srv).Batches
	mustPut(t, task, batch...)
	// Six keys of ~10 KB fit in 64 KiB, seven do not: chunks of 6, 6, 6
	// and 2 keys, each a batch read and a batch write.
	if got := statsOf(srv).Batches - before; fakeOnly(t, srv, "the server counts Batches") != nil && got != 8 {
		t.Errorf("batch commands = %d, want 8", got)
	}
	for i := range 20 {
		if r := stored(t, srv, "s", keyName(i)); r == nil || r.Bins["v"] != value || r.Generation != 1 {
			t.Fatalf("%s = %+v, want v written once", keyName(i), r)
		}
	}
}

// A put whose records together exceed the client's 120 MiB buffer is
// written in several commands, every record exactly once; before batches
// were cut by bytes the client refused the one command with PARSE_ERROR
// and the put failed for ever. When the estimate is wrong and the client
// refuses a command anyway, the sink halves it until it fits.
func TestPutOverClientBufferAppliedOnce(t *testing.T) {
	const n = 140
	value := strings.Repeat("v", 1_000_000) // shared: 140 MB on the wire, 1 MB here
	for _, tc := range []struct {
		name string
		// maxBytes overrides batch.max.bytes past its validator, as if
		// the estimates were far too low; 0 keeps the default.
		maxBytes    int
		minCommands int64
	}{
		{name: "cut by estimate", minCommands: 2 * (n * 1_000_000 / defaultBatchMaxBytes)},
		{name: "refused command halved", maxBytes: math.MaxInt, minCommands: 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := startServer(t, aerofake.Config{})
			task, tctx := startTask(t, baseProps(srv))
			if tc.maxBytes != 0 {
				task.cfg.BatchMaxBytes = tc.maxBytes
			}
			var batch []*sdk.SinkRecord
			for i := range n {
				batch = append(batch, rec("t", int32(i%2), int64(i), keyName(i), map[string]any{"v": value}))
			}
			before := statsOf(srv).Batches
			mustPut(t, task, batch...)
			if got := statsOf(srv).Batches - before; fakeOnly(t, srv, "the server counts Batches") != nil && got < tc.minCommands {
				t.Errorf("batch commands = %d, want at least %d", got, tc.minCommands)
			}
			check := func() {
				t.Helper()
				for i := range n {
					r := stored(t, srv, "s", keyName(i))
					if r == nil || r.Generation != 1 || len(r.Bins["v"].(string)) != len(value) {
						t.Fatalf("%s = gen %v, want written once", keyName(i), r)
					}
					if pos := positionsOf(t, r, "kafka_pos"); pos["t-"+strconv.Itoa(i%2)] != int64(i) || len(pos) != 1 {
						t.Fatalf("%s positions = %v", keyName(i), pos)
					}
				}
			}
			check()
			// A replay of the whole put writes nothing.
			mustPut(t, task, batch...)
			check()
			if got := tctx.counter(t, "connectd_aerospike_sink_duplicates_skipped_total"); got != n {
				t.Errorf("duplicates skipped = %v, want %d", got, n)
			}
			if reps := tctx.Reports(); len(reps) != 0 {
				t.Fatalf("reports: %v", describe(reps[0]))
			}
		})
	}
}

// Records of one key are folded only up to batch.max.bytes: each of these
// is written (and refused by the server) on its own.
func TestFoldBoundedByBytes(t *testing.T) {
	srv := startServer(t, aerofake.Config{})
	task, tc := startTask(t, baseProps(srv, KeyBatchMaxBytes, "65536"))
	value := strings.Repeat("f", 40000)
	var batch []*sdk.SinkRecord
	for i := range 5 {
		batch = append(batch, rec("t", 0, int64(i), "one", map[string]any{"f" + strconv.Itoa(i): value}))
	}
	writes := statsOf(srv).Writes
	mustPut(t, task, batch...)
	if got := statsOf(srv).Writes - writes; fakeOnly(t, srv, "the server counts Writes") != nil && got != 5 {
		t.Errorf("writes = %d, want 5 (one per record: two do not fit in 64 KiB)", got)
	}
	r := stored(t, srv, "s", "one")
	if r == nil || len(r.Bins) != 6 || r.Generation != 5 {
		t.Fatalf("record = %+v, want 5 fields and positions at generation 5", r)
	}
	if reps := tc.Reports(); len(reps) != 0 {
		t.Fatalf("reports: %v", describe(reps[0]))
	}
}

// A record over the server's record-size limit, and one too big for any
// command, are reported with their result code instead of retried; the
// other records, of the same key too, are written and the task goes on.
func TestTooBigRecordsReported(t *testing.T) {
	srv := startServer(t, aerofake.Config{})
	task, tc := startTask(t, baseProps(srv))
	big := strings.Repeat("b", 1<<20)
	huge := map[string]any{}
	chunk := strings.Repeat("h", 8<<20)
	for i := range 17 { // 136 MiB: the client cannot send it
		huge["h"+strconv.Itoa(i)] = chunk
	}
	mustPut(t, task,
		rec("t", 0, 0, "k", map[string]any{"a": int64(1)}),
		rec("t", 0, 1, "k", map[string]any{"big": big}),
		rec("t", 0, 2, "k", map[string]any{"b": int64(2)}),
		rec("t", 0, 3, "other", huge),
		rec("t", 0, 4, "other", map[string]any{"c": int64(3)}),
	)
	reps := tc.Reports()
	if len(reps) != 2 {
		t.Fatalf("%d reports, want 2: %v", len(reps), reps)
	}
	want := map[int64]types.ResultCode{1: types.RECORD_TOO_BIG, 3: types.PARSE_ERROR}
	for _, r := range reps {
		we, ok := errorsAs[*WriteError](r.err)
		if !ok || we.Code != want[r.rec.OriginalOffset] {
			t.Errorf("report %s, want result code %v", describe(r), want[r.rec.OriginalOffset])
		}
	}
	k := stored(t, srv, "s", "k")
	if k == nil || k.Bins["a"] != int64(1) || k.Bins["b"] != int64(2) || k.Bins["big"] != nil || positionsOf(t, k, "kafka_pos")["t-0"] != 2 {
		t.Fatalf("k = %+v", k)
	}
	o := stored(t, srv, "s", "other")
	if o == nil || o.Bins["c"] != int64(3) || len(o.Bins) != 2 || positionsOf(t, o, "kafka_pos")["t-0"] != 4 {
		t.Fatalf("other = %+v", o)
	}
	// The task goes on: the next put is written.
	mustPut(t, task, rec("t", 0, 5, "k", map[string]any{"a": int64(7)}))
	if got := stored(t, srv, "s", "k").Bins["a"]; got != int64(7) {
		t.Fatalf("a = %v after the next put, want 7", got)
	}
	if got := tc.counter(t, "connectd_aerospike_sink_errors_total", "result_code", "RECORD_TOO_BIG"); got != 1 {
		t.Errorf("errors_total{RECORD_TOO_BIG} = %v, want 1", got)
	}
}
