package aerofake_test

import (
	"strings"
	"testing"
	"time"

	as "github.com/aerospike/aerospike-client-go/v7"
	"github.com/aerospike/aerospike-client-go/v7/types"

	"github.com/connectd/connectd/connectors/aerospike/aerofake"
)

// FailNext answers the next matching commands with the chosen code without
// applying them; other kinds are untouched.
func TestFaultFailNext(t *testing.T) {
	srv, c := testServer(t)
	k := mustKey(t, "test", "demo", "busy")
	srv.FailNext(2, aerofake.OpWrite, aerofake.KeyBusy)
	wantRC(t, c.Put(nil, k, as.BinMap{"v": 1}), types.KEY_BUSY)
	_, err := c.Get(nil, k) // reads do not match
	wantRC(t, err, types.KEY_NOT_FOUND_ERROR)
	if p := srv.PendingFaults(); len(p) != 1 || p[0].Times != 1 {
		t.Fatalf("pending faults = %+v, want one rule with 1 use left", p)
	}
	wantRC(t, c.Put(nil, k, as.BinMap{"v": 1}), types.KEY_BUSY)
	wantMissing(t, c, k)
	noErr(t, c.Put(nil, k, as.BinMap{"v": 1}))
	wantGen(t, c, k, 1)
	if len(srv.PendingFaults()) != 0 {
		t.Fatal("exhausted fault still pending")
	}
	if st := srv.Stats(); st.FaultsInjected != 2 {
		t.Fatalf("FaultsInjected = %d, want 2", st.FaultsInjected)
	}
}

// A namespace-scoped fault only hits that namespace.
func TestFaultNamespaceScope(t *testing.T) {
	srv, c := testServer(t)
	srv.InjectFault(aerofake.Fault{Ops: aerofake.OpRecord, Namespace: "ttl", Times: 1, ResultCode: aerofake.Timeout})
	noErr(t, c.Put(nil, mustKey(t, "test", "demo", 1), as.BinMap{"v": 1}))
	wantRC(t, c.Put(nil, mustKey(t, "ttl", "demo", 1), as.BinMap{"v": 1}), types.TIMEOUT)
	noErr(t, c.Put(nil, mustKey(t, "ttl", "demo", 1), as.BinMap{"v": 1}))
}

// DropNext closes the connection before the command runs: the client sees a
// network error and nothing was written.
func TestFaultDropBeforeApply(t *testing.T) {
	srv, c := testServer(t)
	k := mustKey(t, "test", "demo", "drop")
	srv.DropNext(1, aerofake.OpWrite)
	if err := c.Put(nil, k, as.BinMap{"v": 1}); err == nil {
		t.Fatal("put over a dropped connection succeeded")
	}
	wantMissing(t, c, k)
	noErr(t, c.Put(nil, k, as.BinMap{"v": 1}))
	wantGen(t, c, k, 1)
}

// AfterApply leaves an in-doubt write: the client gets an error (a dropped
// connection or a TIMEOUT) but the write happened.
func TestFaultAfterApplyInDoubt(t *testing.T) {
	srv, c := testServer(t)
	k := mustKey(t, "test", "demo", "indoubt")
	srv.InjectFault(aerofake.Fault{Ops: aerofake.OpWrite, Times: 1, DropConnection: true, AfterApply: true})
	if err := c.Put(nil, k, as.BinMap{"v": 1}); err == nil {
		t.Fatal("put succeeded although the connection was dropped")
	}
	wantGen(t, c, k, 1)

	srv.InjectFault(aerofake.Fault{Ops: aerofake.OpWrite, Times: 1, ResultCode: aerofake.Timeout, AfterApply: true})
	wantRC(t, c.Put(genPolicy(as.EXPECT_GEN_EQUAL, 1), k, as.BinMap{"v": 2}), types.TIMEOUT)
	// The retry of the in-doubt write now conflicts: exactly the case the
	// sink's generation check must absorb.
	wantRC(t, c.Put(genPolicy(as.EXPECT_GEN_EQUAL, 1), k, as.BinMap{"v": 2}), types.GENERATION_ERROR)
	if r := mustGet(t, c, k); r.Bins["v"] != 2 || r.Generation != 2 {
		t.Fatalf("record %v gen %d", r.Bins, r.Generation)
	}
}

// SetLatency delays matching commands until ClearFaults.
func TestFaultLatency(t *testing.T) {
	srv, c := testServer(t)
	k := mustKey(t, "test", "demo", "slow")
	noErr(t, c.Put(nil, k, as.BinMap{"v": 1}))
	const delay = 150 * time.Millisecond
	srv.SetLatency(aerofake.OpRead, delay)
	start := time.Now()
	mustGet(t, c, k)
	if took := time.Since(start); took < delay {
		t.Fatalf("read took %v with %v injected latency", took, delay)
	}
	noErr(t, c.Put(nil, k, as.BinMap{"v": 2})) // writes are not delayed
	srv.ClearFaults()
	if len(srv.PendingFaults()) != 0 {
		t.Fatal("faults left after ClearFaults")
	}
	// A client timeout shorter than the latency fails the read.
	srv.SetLatency(aerofake.OpRead, time.Second)
	p := as.NewPolicy()
	p.TotalTimeout, p.SocketTimeout, p.MaxRetries = 100*time.Millisecond, 100*time.Millisecond, 0
	_, err := c.Get(p, k)
	wantRC(t, err, types.TIMEOUT)
	srv.ClearFaults()
}

// Row faults hit single rows of a batch; an OpBatch fault fails the batch as
// a unit, before or after its rows ran.
func TestFaultBatch(t *testing.T) {
	srv, c := testServer(t)
	ks := keys(t, "test", "demo", 0, 5)
	rows := func() []as.BatchRecordIfc {
		out := make([]as.BatchRecordIfc, len(ks))
		for i, k := range ks {
			out[i] = as.NewBatchWrite(nil, k, as.AddOp(as.NewBin("n", 1)))
		}
		return out
	}
	srv.FailNext(1, aerofake.OpWrite, aerofake.KeyBusy)
	rs := rows()
	_ = c.BatchOperate(nil, rs)
	busy, busyRow := 0, -1
	for i, r := range rs {
		switch r.BatchRec().ResultCode {
		case types.KEY_BUSY:
			busy, busyRow = busy+1, i
		case types.OK:
		default:
			t.Fatalf("row result %v", r.BatchRec().ResultCode)
		}
	}
	if busy != 1 || srv.Count("test", "demo") != 4 {
		t.Fatalf("%d KEY_BUSY rows, %d records; want 1 and 4", busy, srv.Count("test", "demo"))
	}

	srv.FailNext(1, aerofake.OpBatch, aerofake.ServerError)
	err := c.BatchOperate(nil, rows())
	wantRC(t, err, types.SERVER_ERROR)
	if srv.Count("test", "demo") != 4 {
		t.Fatal("a failed batch applied rows")
	}

	// (Not TIMEOUT here: the client treats a server TIMEOUT like a network
	// error and retries a batch under the default BatchPolicy.)
	srv.InjectFault(aerofake.Fault{Ops: aerofake.OpBatch, Times: 1, ResultCode: aerofake.ServerError, AfterApply: true})
	wantRC(t, c.BatchOperate(nil, rows()), types.SERVER_ERROR)
	if srv.Count("test", "demo") != 5 {
		t.Fatal("after-apply batch fault did not apply the rows")
	}
	for i, k := range ks {
		want := int64(2) // the first batch (bar its KEY_BUSY row) and the after-apply one
		if i == busyRow {
			want = 1
		}
		if r, _ := srv.Record("test", [20]byte(k.Digest())); r.Bins["n"] != want {
			t.Fatalf("row %d: n=%v, want %d", i, r.Bins["n"], want)
		}
	}
}

// Scan and info faults.
func TestFaultScanAndInfo(t *testing.T) {
	srv, c := testServer(t)
	noErr(t, c.Put(nil, mustKey(t, "test", "demo", 1), as.BinMap{"v": 1}))
	srv.FailNext(1, aerofake.OpScan, aerofake.ServerError)
	rs, aerr := c.ScanAll(nil, "test", "demo")
	var err error = aerr
	if aerr == nil {
		for res := range rs.Results() {
			if res.Err != nil {
				err = res.Err
			}
		}
	}
	wantRC(t, err, types.SERVER_ERROR)

	srv.FailNext(1, aerofake.OpInfo, aerofake.ServerError)
	rc := dialRaw(t, srv)
	rc.send(frame(1, []byte("node\nbuild\n")))
	_, body, err := rc.readFrame()
	noErr(t, err)
	if string(body) != "node\tERROR:1:injected fault\nbuild\tERROR:1:injected fault\n" {
		t.Fatalf("faulted info = %q", body)
	}
}

// DropConnections cuts every connection; the client reconnects.
func TestDropConnections(t *testing.T) {
	srv, c := testServer(t)
	k := mustKey(t, "test", "demo", "dc")
	noErr(t, c.Put(nil, k, as.BinMap{"v": 1}))
	before := srv.Stats().ConnectionsOpened
	if n := srv.DropConnections(); n == 0 {
		t.Fatal("no connection was open")
	}
	var err error
	for i := 0; i < 3; i++ { // the first command may hit a pooled, cut connection
		if _, err = c.Get(nil, k); err == nil {
			break
		}
	}
	noErr(t, err)
	if srv.Stats().ConnectionsOpened <= before {
		t.Fatal("client did not open a new connection")
	}
}

// Counters reflect the traffic.
func TestStatsCounters(t *testing.T) {
	srv, c := testServer(t)
	before := srv.Stats()
	ks := keys(t, "test", "demo", 0, 10)
	for _, k := range ks {
		noErr(t, c.Put(nil, k, as.BinMap{"v": 1}))
	}
	mustGet(t, c, ks[0])
	_, _ = c.Delete(nil, ks[1])
	_, err := c.BatchGet(nil, ks)
	noErr(t, err)
	_, err = c.Get(nil, mustKey(t, "test", "demo", "missing"))
	wantRC(t, err, types.KEY_NOT_FOUND_ERROR)
	after := srv.Stats()
	for name, d := range map[string]int64{
		"writes":  after.Writes - before.Writes,
		"deletes": after.Deletes - before.Deletes,
		"batches": after.Batches - before.Batches,
		"rows":    after.BatchRecords - before.BatchRecords,
		"reads":   after.Reads - before.Reads,
		"errors":  after.Errors - before.Errors,
	} {
		want := map[string]int64{"writes": 10, "deletes": 1, "batches": 1, "rows": 10, "reads": 12, "errors": 2}[name]
		if d != want {
			t.Fatalf("%s grew by %d, want %d (stats %s)", name, d, want, after)
		}
	}
	if !strings.Contains(after.String(), "batch_records=") {
		t.Fatalf("Stats.String() = %q", after.String())
	}
}
