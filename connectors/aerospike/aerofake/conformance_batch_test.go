package aerofake_test

// Conformance: batch (§3), scan and query by partition (§4), truncate and
// info (§1).

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	as "github.com/aerospike/aerospike-client-go/v7"
	"github.com/aerospike/aerospike-client-go/v7/types"

	"github.com/connectd/connectd/connectors/aerospike/aerofake"
)

// opList normalizes per-op results: batch replies merge repeated bins into
// as.OpResults, single-record operate into []any.
func opList(v any) []any {
	switch x := v.(type) {
	case []any:
		return x
	case as.OpResults:
		return []any(x)
	}
	return nil
}

func keys(t testing.TB, ns, set string, from, to int) []*as.Key {
	t.Helper()
	out := make([]*as.Key, 0, to-from)
	for i := from; i < to; i++ {
		out = append(out, mustKey(t, ns, set, i))
	}
	return out
}

// §3 field 42: BatchGet returns a record per present key and nil for misses,
// with all bins or named bins; BatchExists and BatchGetHeader per key.
func TestBatchGetExistsHeader(t *testing.T) {
	c := testClient(t)
	ks := keys(t, "test", "demo", 0, 10)
	for i, k := range ks {
		if i%2 == 0 {
			noErr(t, c.Put(nil, k, as.BinMap{"i": i, "s": fmt.Sprint("v", i)}))
		}
	}
	recs, err := c.BatchGet(nil, ks)
	noErr(t, err)
	for i, r := range recs {
		if i%2 == 1 {
			if r != nil {
				t.Fatalf("key %d: %v, want nil (miss)", i, r)
			}
			continue
		}
		if r == nil || r.Bins["i"] != i || r.Bins["s"] != fmt.Sprint("v", i) || r.Generation != 1 {
			t.Fatalf("key %d: %v", i, r)
		}
	}
	recs, err = c.BatchGet(nil, ks, "s")
	noErr(t, err)
	if recs[0] == nil || len(recs[0].Bins) != 1 || recs[0].Bins["s"] != "v0" || recs[1] != nil {
		t.Fatalf("named-bin batch = %v, %v", recs[0], recs[1])
	}
	exists, err := c.BatchExists(nil, ks)
	noErr(t, err)
	heads, err := c.BatchGetHeader(nil, ks)
	noErr(t, err)
	for i := range ks {
		if exists[i] != (i%2 == 0) {
			t.Fatalf("exists[%d] = %v", i, exists[i])
		}
		if (heads[i] != nil) != (i%2 == 0) || (heads[i] != nil && (len(heads[i].Bins) != 0 || heads[i].Generation != 1)) {
			t.Fatalf("header[%d] = %v", i, heads[i])
		}
	}
}

// §3 field 41: BatchOperate with per-row generation / exists policies,
// BatchDelete rows and BatchRead rows; each row gets its own result code.
func TestBatchOperatePerRowPolicies(t *testing.T) {
	c := testClient(t)
	k := keys(t, "test", "demo", 0, 8)
	noErr(t, c.Put(nil, k[0], as.BinMap{"v": 0}))
	noErr(t, c.Put(nil, k[1], as.BinMap{"v": 1}))
	noErr(t, c.Put(nil, k[2], as.BinMap{"v": 2}))
	noErr(t, c.Put(nil, k[3], as.BinMap{"v": 3}))
	noErr(t, c.Put(nil, k[3], as.BinMap{"v": 3})) // gen 2

	createOnly := as.NewBatchWritePolicy()
	createOnly.RecordExistsAction = as.CREATE_ONLY
	genEq := func(g uint32) *as.BatchWritePolicy {
		p := as.NewBatchWritePolicy()
		p.GenerationPolicy, p.Generation = as.EXPECT_GEN_EQUAL, g
		return p
	}
	delGen := as.NewBatchDeletePolicy()
	delGen.GenerationPolicy, delGen.Generation = as.EXPECT_GEN_EQUAL, 5
	put := func(v int) *as.Operation { return as.PutOp(as.NewBin("v", v)) }
	rows := []as.BatchRecordIfc{
		as.NewBatchWrite(createOnly, k[0], put(100)),                               // exists → 5
		as.NewBatchWrite(createOnly, k[4], put(104)),                               // new → ok
		as.NewBatchWrite(genEq(1), k[1], put(101)),                                 // gen matches → ok
		as.NewBatchWrite(genEq(1), k[3], put(103)),                                 // gen 2 ≠ 1 → 3
		as.NewBatchWrite(genEq(1), k[5], put(105)),                                 // missing with gen 1 → 3
		as.NewBatchDelete(nil, k[6]),                                               // missing → 2
		as.NewBatchDelete(delGen, k[2]),                                            // gen mismatch → 3
		as.NewBatchDelete(nil, k[0]),                                               // deleted
		as.NewBatchRead(nil, k[7], nil),                                            // miss → 2
		as.NewBatchRead(nil, k[1], nil),                                            // read after the write above
		as.NewBatchReadHeader(nil, k[3]),                                           // header only
		as.NewBatchWrite(genEq(0), k[6], put(106)),                                 // missing, gen 0 → create
		as.NewBatchWrite(nil, k[6], as.AddOp(as.NewBin("v", 1)), as.GetBinOp("v")), // same key again
	}
	err := c.BatchOperate(nil, rows)
	t.Logf("BatchOperate error (row errors may surface here): %v", err)
	want := []types.ResultCode{5, 0, 0, 3, 3, 2, 3, 0, 2, 0, 0, 0, 0}
	for i, r := range rows {
		if got := r.BatchRec().ResultCode; got != want[i] {
			t.Fatalf("row %d (%s): result %v, want %v", i, r, got, want[i])
		}
	}
	if r := rows[9].BatchRec().Record; r == nil || r.Bins["v"] != 101 || r.Generation != 2 {
		t.Fatalf("read row = %v", r)
	}
	if r := rows[10].BatchRec().Record; r == nil || len(r.Bins) != 0 || r.Generation != 2 {
		t.Fatalf("header row = %v", r)
	}
	if r := rows[12].BatchRec().Record; r == nil || !reflect.DeepEqual(opList(r.Bins["v"]), []any{nil, 107}) || r.Generation != 2 {
		t.Fatalf("add+get row = %v", r)
	}
	wantMissing(t, c, k[0])
	wantGen(t, c, k[2], 1)
	if r := mustGet(t, c, k[3]); r.Bins["v"] != 3 {
		t.Fatalf("row 3 was applied despite GENERATION_ERROR: %v", r.Bins)
	}
	wantMissing(t, c, k[5])
}

// §3.2 BatchWrite rows carry RESPOND_ALL_OPS: map ops answer per op.
func TestBatchOperateMapOps(t *testing.T) {
	c := testClient(t)
	ks := keys(t, "test", "demo", 0, 3)
	rows := make([]as.BatchRecordIfc, 0, len(ks))
	for i, k := range ks {
		rows = append(rows, as.NewBatchWrite(nil, k,
			as.PutOp(as.NewBin("v", i)),
			as.MapPutOp(as.DefaultMapPolicy(), "pos", "t-0", 10+i),
			as.MapGetByKeyOp("pos", "t-0", as.MapReturnType.VALUE)))
	}
	noErr(t, c.BatchOperate(nil, rows))
	for i, r := range rows {
		rec := r.BatchRec().Record
		if rec == nil || !reflect.DeepEqual(opList(rec.Bins["pos"]), []any{1, 10 + i}) || rec.Bins["v"] != nil {
			t.Fatalf("row %d = %v", i, rec)
		}
	}
}

// §3: a batch large enough to span many reply frames, with REPEAT rows
// (consecutive keys of one namespace/set), and keys from two namespaces.
func TestBatchLargeAcrossFrames(t *testing.T) {
	c := testClient(t)
	const n = 6000
	ks := keys(t, "test", "demo", 0, n)
	ks = append(ks, keys(t, "ttl", "other", 0, 10)...)
	rows := make([]as.BatchRecordIfc, 0, len(ks))
	for i, k := range ks {
		rows = append(rows, as.NewBatchWrite(nil, k, as.PutOp(as.NewBin("payload", strings.Repeat("x", 100))), as.PutOp(as.NewBin("i", i))))
	}
	noErr(t, c.BatchOperate(nil, rows))
	recs, err := c.BatchGet(nil, ks)
	noErr(t, err)
	for i, r := range recs {
		if r == nil || r.Bins["i"] != i || len(r.Bins["payload"].(string)) != 100 {
			t.Fatalf("record %d = %v", i, r)
		}
	}
	dels, err := c.BatchDelete(nil, nil, ks[:n/2])
	noErr(t, err)
	for i, d := range dels {
		if d.ResultCode != 0 {
			t.Fatalf("delete %d: %v", i, d.ResultCode)
		}
	}
	exists, err := c.BatchExists(nil, ks)
	noErr(t, err)
	for i, e := range exists {
		if e != (i >= n/2) {
			t.Fatalf("exists[%d] = %v", i, e)
		}
	}
}

// §3.1: a one-key batch goes through the single-record path.
func TestBatchSingleKey(t *testing.T) {
	c := testClient(t)
	k := mustKey(t, "test", "demo", "one")
	rows := []as.BatchRecordIfc{as.NewBatchWrite(nil, k, as.PutOp(as.NewBin("v", 1)))}
	noErr(t, c.BatchOperate(nil, rows))
	recs, err := c.BatchGet(nil, []*as.Key{k})
	noErr(t, err)
	if recs[0] == nil || recs[0].Bins["v"] != 1 {
		t.Fatalf("single-key batch read = %v", recs[0])
	}
}

func scanDigests(t testing.TB, rs *as.Recordset) map[string]*as.Record {
	t.Helper()
	out := map[string]*as.Record{}
	for res := range rs.Results() {
		noErr(t, res.Err)
		d := string(res.Record.Key.Digest())
		if _, dup := out[d]; dup {
			t.Fatalf("record %x returned twice", d)
		}
		out[d] = res.Record
	}
	return out
}

// §4: a scan returns every record of the set exactly once, with bins, and
// respects the set filter; a whole-namespace scan returns all sets.
func TestScanEveryRecordOnce(t *testing.T) {
	c := testClient(t)
	const n = 3000
	for i := 0; i < n; i++ {
		set := "a"
		if i%3 == 0 {
			set = "b"
		}
		noErr(t, c.Put(nil, mustKey(t, "test", set, i), as.BinMap{"i": i}))
	}
	rs, err := c.ScanAll(nil, nsName(t, "test"), setName(t, "a"))
	noErr(t, err)
	got := scanDigests(t, rs)
	if len(got) != n-n/3 {
		t.Fatalf("set a: %d records, want %d", len(got), n-n/3)
	}
	for _, r := range got {
		i := r.Bins["i"].(int)
		if i%3 == 0 || r.Generation != 1 {
			t.Fatalf("unexpected record in set a: %v", r)
		}
	}
	if _, ok := externalCluster(t); ok {
		t.Log("whole-namespace scan not checked against the external cluster: its namespace holds other records")
	} else {
		rs, err = c.ScanAll(nil, "test", "")
		noErr(t, err)
		if got := scanDigests(t, rs); len(got) != n {
			t.Fatalf("namespace scan: %d records, want %d", len(got), n)
		}
	}
	rs, err = c.ScanAll(nil, nsName(t, "test"), setName(t, "nosuchset"))
	noErr(t, err)
	if got := scanDigests(t, rs); len(got) != 0 {
		t.Fatalf("unknown set: %d records", len(got))
	}
	// Bin selection and metadata-only scans.
	rs, err = c.ScanAll(nil, nsName(t, "test"), setName(t, "b"), "nope")
	noErr(t, err)
	for _, r := range scanDigests(t, rs) {
		if len(r.Bins) != 0 {
			t.Fatalf("bin-filtered scan returned bins %v", r.Bins)
		}
	}
	sp := as.NewScanPolicy()
	sp.IncludeBinData = false
	rs, err = c.ScanAll(sp, nsName(t, "test"), setName(t, "b"))
	noErr(t, err)
	for _, r := range scanDigests(t, rs) {
		if len(r.Bins) != 0 || r.Generation != 1 {
			t.Fatalf("metadata-only scan returned %v", r)
		}
	}
}

// §4: scans by partition range split the records without overlap, and
// MAX_RECORDS pagination with digest resume returns each record exactly once.
func TestScanPartitionsAndPagination(t *testing.T) {
	c := testClient(t)
	const n = 1500
	for i := 0; i < n; i++ {
		noErr(t, c.Put(nil, mustKey(t, "test", "p", i), as.BinMap{"i": i}))
	}
	all := map[string]bool{}
	for _, r := range [][2]int{{0, 1000}, {1000, 3000}, {4000, 96}} {
		rs, err := c.ScanPartitions(nil, as.NewPartitionFilterByRange(r[0], r[1]), nsName(t, "test"), setName(t, "p"))
		noErr(t, err)
		for d, rec := range scanDigests(t, rs) {
			pid := aerofake.PartitionID([20]byte([]byte(d)))
			if pid < r[0] || pid >= r[0]+r[1] {
				t.Fatalf("record in partition %d returned for range %v", pid, r)
			}
			if all[d] {
				t.Fatalf("record %v in two ranges", rec.Key)
			}
			all[d] = true
		}
	}
	if len(all) != n {
		t.Fatalf("partition ranges returned %d records, want %d", len(all), n)
	}

	pf := as.NewPartitionFilterAll()
	sp := as.NewScanPolicy()
	sp.MaxRecords = 97
	seen := map[string]bool{}
	for pages := 0; !pf.IsDone(); pages++ {
		if pages > 100 {
			t.Fatal("pagination did not finish")
		}
		rs, err := c.ScanPartitions(sp, pf, nsName(t, "test"), setName(t, "p"))
		noErr(t, err)
		page := scanDigests(t, rs)
		if len(page) > 97 {
			t.Fatalf("page of %d records, MaxRecords 97", len(page))
		}
		for d := range page {
			if seen[d] {
				t.Fatalf("record returned on two pages")
			}
			seen[d] = true
		}
	}
	if len(seen) != n {
		t.Fatalf("pagination returned %d records, want %d", len(seen), n)
	}
}

// §4.1: a query without a filter (the partition-query path enabled by the
// pquery feature) returns every record; with a secondary-index filter it
// fails as a node without the index would.
func TestQueryWithoutFilter(t *testing.T) {
	c := testClient(t)
	for i := 0; i < 200; i++ {
		noErr(t, c.Put(nil, mustKey(t, "test", "q", i), as.BinMap{"i": i, "j": -i}))
	}
	rs, err := c.Query(nil, as.NewStatement(nsName(t, "test"), setName(t, "q"), "i"))
	noErr(t, err)
	got := scanDigests(t, rs)
	if len(got) != 200 {
		t.Fatalf("query returned %d records", len(got))
	}
	for _, r := range got {
		if _, ok := r.Bins["j"]; ok || len(r.Bins) != 1 {
			t.Fatalf("bin selection ignored: %v", r.Bins)
		}
	}
	st := as.NewStatement(nsName(t, "test"), setName(t, "q"))
	noErr(t, st.SetFilter(as.NewRangeFilter("i", 0, 10)))
	rs, err = c.Query(nil, st)
	if err == nil {
		for res := range rs.Results() {
			err = res.Err
		}
	}
	wantRC(t, err, types.INDEX_NOTFOUND)
}

// truncate:namespace=;set= removes the set only, truncate-namespace the
// whole namespace; a cut-off time keeps newer records; records written after
// a truncate start at generation 1.
func TestTruncate(t *testing.T) {
	srv, c := testServer(t)
	for i := 0; i < 50; i++ {
		noErr(t, c.Put(nil, mustKey(t, "test", "a", i), as.BinMap{"i": i}))
		noErr(t, c.Put(nil, mustKey(t, "test", "b", i), as.BinMap{"i": i}))
	}
	noErr(t, c.Truncate(nil, "test", "a", nil))
	if srv.Count("test", "a") != 0 || srv.Count("test", "b") != 50 {
		t.Fatalf("after set truncate: a=%d b=%d", srv.Count("test", "a"), srv.Count("test", "b"))
	}
	k := mustKey(t, "test", "a", 1)
	noErr(t, c.Put(nil, k, as.BinMap{"i": 1}))
	wantGen(t, c, k, 1)

	old := mustKey(t, "test", "c", "old")
	noErr(t, c.Put(nil, old, as.BinMap{"v": 1}))
	cut := time.Now()
	for !time.Now().After(cut) {
		time.Sleep(time.Millisecond)
	}
	young := mustKey(t, "test", "c", "young")
	noErr(t, c.Put(nil, young, as.BinMap{"v": 1}))
	noErr(t, c.Truncate(nil, "test", "c", &cut))
	wantMissing(t, c, old)
	wantGen(t, c, young, 1)

	noErr(t, c.Truncate(nil, "test", "", nil))
	if n := srv.Count("test", ""); n != 0 {
		t.Fatalf("after namespace truncate: %d records", n)
	}
	future := time.Now().Add(time.Hour)
	if err := c.Truncate(nil, "test", "a", &future); err == nil {
		t.Fatal("truncate with a future cut-off succeeded")
	}
	if err := c.Truncate(nil, "nope", "a", nil); err == nil {
		t.Fatal("truncate of an unknown namespace succeeded")
	}
}

// §1: every info name the client uses answers as the spec says, names are
// echoed in request order, unknown names answer ERROR:4.
func TestInfoCommands(t *testing.T) {
	srv := startServer(t, aerofake.Config{
		Namespaces:  []aerofake.NamespaceConfig{{Name: "test"}, {Name: "bar"}},
		ClusterName: "dev", NodeName: "BB9000000000001", StatsInfo: true,
	})
	_, port := srv.Host()
	rc := dialRaw(t, srv)
	names := []string{"node", "build", "features", "partition-generation", "peers-generation",
		"peers-clear-std", "replicas", "service-clear-std", "cluster-name", "namespaces",
		"truncate:namespace=test;set=x", "truncate-namespace:namespace=bar", "bogus", "node", "stats"}
	rc.send(frame(1, []byte(strings.Join(names, "\n")+"\n")))
	typ, body, err := rc.readFrame()
	noErr(t, err)
	if typ != 1 {
		t.Fatalf("info reply type %d", typ)
	}
	lines := strings.Split(strings.TrimSuffix(string(body), "\n"), "\n")
	if len(lines) != len(names) {
		t.Fatalf("%d lines for %d names: %q", len(lines), len(names), body)
	}
	bitmap := strings.Repeat("/", 682) + "8="
	want := map[string]string{
		"node":                             "BB9000000000001",
		"build":                            "8.1.2.0",
		"partition-generation":             "1",
		"peers-generation":                 "1",
		"peers-clear-std":                  fmt.Sprintf("1,%d,[]", port),
		"replicas":                         "test:0,1," + bitmap + ";bar:0,1," + bitmap,
		"service-clear-std":                srv.Addr(),
		"cluster-name":                     "dev",
		"namespaces":                       "test;bar",
		"truncate:namespace=test;set=x":    "OK",
		"truncate-namespace:namespace=bar": "OK",
		"bogus":                            "ERROR:4:unrecognized command",
	}
	for i, line := range lines {
		name, value, ok := strings.Cut(line, "\t")
		if !ok || name != names[i] {
			t.Fatalf("line %d = %q, want name %q", i, line, names[i])
		}
		if w, ok := want[name]; ok && value != w {
			t.Fatalf("%s = %q, want %q", name, value, w)
		}
		switch name {
		case "features":
			if !strings.Contains(";"+value+";", ";pscans;") || !strings.Contains(value, "pquery") {
				t.Fatalf("features %q lack pscans/pquery", value)
			}
		case "stats":
			if !strings.Contains(value, "info_requests=") {
				t.Fatalf("stats = %q", value)
			}
		}
	}
	// Without StatsInfo the stats name is unknown, as on a real server.
	plain := startServer(t, aerofake.Config{})
	rp := dialRaw(t, plain)
	rp.send(frame(1, []byte("stats\n")))
	_, body, err = rp.readFrame()
	noErr(t, err)
	if string(body) != "stats\tERROR:4:unrecognized command\n" {
		t.Fatalf("stats without StatsInfo = %q", body)
	}
}

// §1.6: a client configured with credentials cannot connect to Community
// Edition: the login answers SECURITY_NOT_SUPPORTED (51), as real CE 8.1
// does. Emulating an Enterprise server with security enabled, the right
// password logs in and the wrong one is refused.
func TestLoginWithCredentials(t *testing.T) {
	connect := func(srv *aerofake.Server, user, password string) (*as.Client, error) {
		host, port := srv.Host()
		policy := as.NewClientPolicy()
		policy.User, policy.Password = user, password
		policy.ClusterName = "dev"
		policy.Timeout = 2 * time.Second
		c, err := as.NewClientWithPolicyAndHost(policy, as.NewHost(host, port))
		if err == nil {
			t.Cleanup(c.Close)
		}
		return c, err
	}
	ce := startServer(t, aerofake.Config{ClusterName: "dev"})
	if _, err := connect(ce, "admin", "secret"); err == nil || !strings.Contains(err.Error(), "SECURITY_NOT_SUPPORTED") {
		t.Fatalf("a client with credentials connecting to Community Edition: %v, want SECURITY_NOT_SUPPORTED", err)
	}
	if ce.Stats().AdminRequests == 0 {
		t.Fatal("no admin (login) request reached the server")
	}
	rc := dialRaw(t, ce)
	rc.send(frame(2, make([]byte, 16)))
	typ, body, err := rc.readFrame()
	noErr(t, err)
	if typ != 2 || len(body) != 16 || body[1] != byte(types.SECURITY_NOT_SUPPORTED) {
		t.Fatalf("admin reply type %d body %x, want 16 bytes with result code 51", typ, body)
	}

	ee := startServer(t, aerofake.Config{ClusterName: "dev",
		EnterpriseSecurity: &aerofake.Security{Users: map[string]string{"admin": "secret"}}})
	if _, err := connect(ee, "admin", "wrong"); err == nil || !strings.Contains(err.Error(), "INVALID_CREDENTIAL") {
		t.Fatalf("a wrong password: %v, want INVALID_CREDENTIAL", err)
	}
	c, err := connect(ee, "admin", "secret")
	noErr(t, err)
	k := mustKey(t, "test", "demo", "auth")
	noErr(t, c.Put(nil, k, as.BinMap{"v": 1}))
	wantGen(t, c, k, 1)
}

// §1.2: a client with a cluster name that differs from the node's refuses it.
func TestClusterNameMismatch(t *testing.T) {
	srv := startServer(t, aerofake.Config{ClusterName: "dev"})
	host, port := srv.Host()
	policy := as.NewClientPolicy()
	policy.ClusterName = "prod"
	policy.Timeout = time.Second
	c, err := as.NewClientWithPolicyAndHost(policy, as.NewHost(host, port))
	if err == nil {
		c.Close()
		t.Fatal("client accepted a node with another cluster name")
	}
}
