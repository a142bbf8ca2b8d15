package aerofake_test

// Conformance: reads, writes, operate and map CDT operations (§2.8, §5).

import (
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"math"
	"reflect"
	"strconv"
	"strings"
	"testing"

	as "github.com/aerospike/aerospike-client-go/v7"
	"github.com/aerospike/aerospike-client-go/v7/types"

	"github.com/connectd/connectd/connectors/aerospike/aerofake"
)

// §2.8 reads: a missing record → rc 2 for get, header and operate (the client
// reports it as ErrKeyNotFound, or as nil/false for header and exists).
func TestReadMissing(t *testing.T) {
	c := testClient(t)
	k := mustKey(t, "test", "demo", "missing")
	_, err := c.Get(nil, k)
	wantRC(t, err, types.KEY_NOT_FOUND_ERROR)
	_, err = c.Get(nil, k, "a")
	wantRC(t, err, types.KEY_NOT_FOUND_ERROR)
	// The client turns rc 2 on a header read into (nil, nil).
	h, err := c.GetHeader(nil, k)
	if h != nil || err != nil {
		t.Fatalf("GetHeader of a missing record = %v, %v; want nil, nil", h, err)
	}
	_, err = c.Operate(nil, k, as.GetBinOp("a"))
	wantRC(t, err, types.KEY_NOT_FOUND_ERROR)
	_, err = c.Operate(nil, k, as.MapSizeOp("m"))
	wantRC(t, err, types.KEY_NOT_FOUND_ERROR)
	wantMissing(t, c, k)
}

// §2.8 reads: GET_NO_BINS → generation and void-time, no bins; GET_ALL →
// every bin; named reads → only bins that exist.
func TestReadShapes(t *testing.T) {
	c := testClient(t)
	k := mustKey(t, "test", "demo", "r")
	bins := as.BinMap{
		"i": 42, "f": 1.5, "s": "str", "b": []byte{1, 2}, "t": true,
		"l": []any{1, "a"}, "m": map[any]any{"k": 1, 2: "v"},
	}
	noErr(t, c.Put(nil, k, bins))
	noErr(t, c.Put(nil, k, as.BinMap{"i": 42}))
	h, err := c.GetHeader(nil, k)
	noErr(t, err)
	if h.Generation != 2 || len(h.Bins) != 0 {
		t.Fatalf("header = gen %d bins %v, want gen 2 and no bins", h.Generation, h.Bins)
	}
	all := mustGet(t, c, k)
	if !reflect.DeepEqual(map[string]any(all.Bins), map[string]any{
		"i": 42, "f": 1.5, "s": "str", "b": []byte{1, 2}, "t": true,
		"l": []any{1, "a"}, "m": map[any]any{"k": 1, 2: "v"},
	}) {
		t.Fatalf("all bins = %#v", all.Bins)
	}
	named := mustGet(t, c, k, "s", "nope")
	if len(named.Bins) != 1 || named.Bins["s"] != "str" {
		t.Fatalf("named bins = %v, want only s", named.Bins)
	}
}

// §2.8 reads: with RESPOND_ALL_OPS a named read of a missing bin comes back
// as a NULL op (the client shows the bin with a nil value).
func TestReadMissingBinUnderRespondAllOps(t *testing.T) {
	c := testClient(t)
	k := mustKey(t, "test", "demo", "ra")
	noErr(t, c.Put(nil, k, as.BinMap{"a": 1}))
	r, err := c.Operate(nil, k, as.GetBinOp("nope"), as.MapSizeOp("alsonope"))
	noErr(t, err)
	v, present := r.Bins["nope"]
	if !present || v != nil {
		t.Fatalf("bins = %v, want nope: nil present", r.Bins)
	}
	if v, present := r.Bins["alsonope"]; !present || v != nil {
		t.Fatalf("bins = %v, want alsonope: nil present", r.Bins)
	}
	// Without RESPOND_ALL_OPS the missing bin is simply absent.
	r, err = c.Operate(nil, k, as.GetBinOp("nope"), as.GetBinOp("a"))
	noErr(t, err)
	if _, present := r.Bins["nope"]; present || r.Bins["a"] != 1 {
		t.Fatalf("bins = %v, want only a", r.Bins)
	}
}

// Raw-protocol rows the client never sends.
func TestRawParameterErrors(t *testing.T) {
	srv, c := testServer(t)
	noErr(t, c.Put(nil, mustKey(t, "test", "demo", "raw"), as.BinMap{"a": 1}))
	kf := keyFields(t, "test", "demo", "raw")
	for name, body := range map[string][]byte{
		// §2.8 reads: a READ without GET_ALL and with 0 ops → 4.
		"read without ops": msgBody(0x01, 0, 0, 0, 0, kf, nil),
		// §2.8 writes rule 1: 0 ops → 4.
		"write without ops": msgBody(0, 0x01, 0, 0, 0, kf, nil),
		// Read op without info1 READ → 4.
		"read op without READ": msgBody(0, 0x01, 0, 0, 0, kf, [][]byte{
			opBytes(2, 1, "a", int64Bytes(2)), opBytes(1, 0, "a", nil)}),
		// A read-all op together with RESPOND_ALL_OPS → 4.
		"read-all with respond-all-ops": msgBody(0x03, 0x81, 0, 0, 0, kf, [][]byte{
			opBytes(2, 1, "a", int64Bytes(2)), opBytes(1, 0, "", nil)}),
		// Neither READ nor WRITE.
		"no read or write bit": msgBody(0, 0, 0, 0, 0, kf, [][]byte{opBytes(1, 0, "a", nil)}),
		// Unknown op and particle types.
		"unknown op":       msgBody(0, 0x01, 0, 0, 0, kf, [][]byte{opBytes(99, 1, "a", int64Bytes(1))}),
		"unknown particle": msgBody(0, 0x01, 0, 0, 0, kf, [][]byte{opBytes(2, 99, "a", []byte{1})}),
		"bad integer size": msgBody(0, 0x01, 0, 0, 0, kf, [][]byte{opBytes(2, 1, "a", []byte{1, 2, 3})}),
		"short digest":     msgBody(0x03, 0, 0, 0, 0, [][]byte{fieldBytes(0, []byte("test")), fieldBytes(4, []byte{1, 2, 3})}, nil),
	} {
		t.Run(name, func(t *testing.T) {
			rc := dialRaw(t, srv)
			rc.send(frame(3, body))
			code, total, _ := rc.mustReply()
			if code != 4 || total != 30 {
				t.Fatalf("rc %d length %d, want rc 4 in a 30-byte reply", code, total)
			}
		})
	}
	wantGen(t, c, mustKey(t, "test", "demo", "raw"), 1)
}

// Raw-protocol messages the client never sends, answered as CE 8.1
// answered them: unknown fields and header_sz are ignored, a missing
// namespace is an unknown one, a map particle that does not parse is a
// server error.
func TestRawAnswersAsCE81(t *testing.T) {
	srv, c := testServer(t)
	noErr(t, c.Put(nil, mustKey(t, "test", "demo", "raw"), as.BinMap{"a": 1}))
	kf := keyFields(t, "test", "demo", "raw")
	readAll := func(fields [][]byte) []byte { return msgBody(0x03, 0, 0, 0, 0, fields, nil) }
	badHeaderSz := readAll(kf)
	badHeaderSz[0] = 30
	zeroHeaderSz := readAll(kf)
	zeroHeaderSz[0] = 0
	for _, tt := range []struct {
		name string
		body []byte
		rc   byte
		ops  int // ops in the reply: 1 = bin a read back
	}{
		{"unknown field", readAll(append(kf, fieldBytes(77, []byte("x")))), 0, 1},
		{"unknown field before the namespace", readAll(append([][]byte{fieldBytes(200, nil)}, kf...)), 0, 1},
		{"header_sz 30", badHeaderSz, 0, 1},
		{"header_sz 0", zeroHeaderSz, 0, 1},
		{"no namespace", readAll(kf[1:]), 20, 0},
		{"broken map particle", msgBody(0, 0x01, 0, 0, 0, kf, [][]byte{opBytes(2, 19, "a", []byte{0x82, 0x01})}), 1, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rc := dialRaw(t, srv)
			rc.send(frame(3, tt.body))
			code, _, body := rc.mustReply()
			if ops := int(binary.BigEndian.Uint16(body[20:22])); code != tt.rc || ops != tt.ops {
				t.Fatalf("rc %d with %d ops, want rc %d with %d ops", code, ops, tt.rc, tt.ops)
			}
		})
	}
	// The refused write left the record as it was.
	wantGen(t, c, mustKey(t, "test", "demo", "raw"), 1)
}

// §2.8 writes rule 1: a bin name longer than 15 bytes → rc 21.
func TestWriteBinNameTooLong(t *testing.T) {
	c := testClient(t)
	k := mustKey(t, "test", "demo", "long")
	wantRC(t, c.Put(nil, k, as.BinMap{strings.Repeat("b", 16): 1}), types.BIN_NAME_TOO_LONG)
	wantMissing(t, c, k)
	noErr(t, c.Put(nil, k, as.BinMap{strings.Repeat("b", 15): 1}))
	_, err := c.Get(nil, k, strings.Repeat("c", 16))
	wantRC(t, err, types.BIN_NAME_TOO_LONG)
}

// §2.8 writes rules 7-8: a NULL WRITE deletes the bin; a write that leaves no
// bins deletes the record (gen 0 in the reply); on a missing record → rc 2.
func TestWriteNullBinsAndEmptyRecord(t *testing.T) {
	c := testClient(t)
	k := mustKey(t, "test", "demo", "nil")
	noErr(t, c.Put(nil, k, as.BinMap{"a": 1, "b": 2}))
	noErr(t, c.Put(nil, k, as.BinMap{"a": nil}))
	r := mustGet(t, c, k)
	if len(r.Bins) != 1 || r.Bins["b"] != 2 || r.Generation != 2 {
		t.Fatalf("after deleting bin a: gen %d bins %v", r.Generation, r.Bins)
	}
	rec, err := c.Operate(nil, k, as.PutOp(as.NewBin("b", nil)))
	noErr(t, err)
	if rec.Generation != 0 {
		t.Fatalf("reply generation %d after the record was emptied, want 0", rec.Generation)
	}
	wantMissing(t, c, k)
	wantRC(t, c.Put(nil, k, as.BinMap{"a": nil}), types.KEY_NOT_FOUND_ERROR)
	wantMissing(t, c, k)

	// Rule 8 on CE: a durable write that would delete the record → rc 25.
	noErr(t, c.Put(nil, k, as.BinMap{"a": 1}))
	durable := writePolicy(func(p *as.WritePolicy) { p.DurableDelete = true })
	_, err = c.Operate(durable, k, as.DeleteOp())
	wantRC(t, err, types.ENTERPRISE_ONLY)
	wantRC(t, c.Put(durable, k, as.BinMap{"a": nil}), types.ENTERPRISE_ONLY)
	wantGen(t, c, k, 1)
}

// §5.3 / §2.8 rule 7: INCR creates a missing bin, adds (wrapping) to an
// integer, adds floats, and a type mismatch → rc 12.
func TestWriteIncr(t *testing.T) {
	c := testClient(t)
	k := mustKey(t, "test", "demo", "incr")
	noErr(t, c.AddBins(nil, k, as.NewBin("n", 5), as.NewBin("f", 1.25)))
	noErr(t, c.AddBins(nil, k, as.NewBin("n", -2), as.NewBin("f", 0.5)))
	r := mustGet(t, c, k)
	if r.Bins["n"] != 3 || r.Bins["f"] != 1.75 {
		t.Fatalf("bins %v, want n=3 f=1.75", r.Bins)
	}
	noErr(t, c.Put(nil, k, as.BinMap{"n": math.MaxInt64}))
	noErr(t, c.AddBins(nil, k, as.NewBin("n", 1)))
	if r := mustGet(t, c, k); r.Bins["n"] != math.MinInt64 {
		t.Fatalf("MaxInt64+1 = %v, want wrap to MinInt64", r.Bins["n"])
	}
	noErr(t, c.Put(nil, k, as.BinMap{"s": "text"}))
	gen := mustGet(t, c, k).Generation
	wantRC(t, c.AddBins(nil, k, as.NewBin("s", 1)), types.BIN_TYPE_ERROR)
	wantRC(t, c.AddBins(nil, k, as.NewBin("n", 1.5)), types.BIN_TYPE_ERROR)
	wantRC(t, c.AddBins(nil, k, as.NewBin("f", 1)), types.BIN_TYPE_ERROR)
	// A failing op leaves the whole command unapplied.
	_, err := c.Operate(nil, k, as.AddOp(as.NewBin("n", 1)), as.AddOp(as.NewBin("s", 1)))
	wantRC(t, err, types.BIN_TYPE_ERROR)
	wantGen(t, c, k, gen)
	if r := mustGet(t, c, k); r.Bins["n"] != math.MinInt64 {
		t.Fatalf("n changed by a failed operate: %v", r.Bins["n"])
	}
}

// §2.8 rule 7: APPEND/PREPEND on strings and blobs; mismatch → rc 12.
func TestWriteAppendPrepend(t *testing.T) {
	c := testClient(t)
	k := mustKey(t, "test", "demo", "app")
	noErr(t, c.AppendBins(nil, k, as.NewBin("s", "mid")))
	noErr(t, c.AppendBins(nil, k, as.NewBin("s", "-end")))
	noErr(t, c.PrependBins(nil, k, as.NewBin("s", "start-")))
	noErr(t, c.AppendBins(nil, k, as.NewBin("b", []byte{2})))
	noErr(t, c.PrependBins(nil, k, as.NewBin("b", []byte{1})))
	r := mustGet(t, c, k)
	if r.Bins["s"] != "start-mid-end" || !bytes.Equal(r.Bins["b"].([]byte), []byte{1, 2}) {
		t.Fatalf("bins %v", r.Bins)
	}
	noErr(t, c.Put(nil, k, as.BinMap{"n": 1}))
	wantRC(t, c.AppendBins(nil, k, as.NewBin("n", "x")), types.BIN_TYPE_ERROR)
	wantRC(t, c.AppendBins(nil, k, as.NewBin("s", []byte{1})), types.BIN_TYPE_ERROR)
	wantRC(t, c.PrependBins(nil, k, as.NewBin("b", "x")), types.BIN_TYPE_ERROR)
}

// SendKey stores the user key, which scans and inspection return.
func TestWriteSendKey(t *testing.T) {
	srv, c := testServer(t)
	k := mustKey(t, "test", "demo", "user-key")
	noErr(t, c.Put(writePolicy(func(p *as.WritePolicy) { p.SendKey = true }), k, as.BinMap{"v": 1}))
	rec, ok := srv.Record("test", [20]byte(k.Digest()))
	if !ok || rec.Key != "user-key" {
		t.Fatalf("stored key = %v (%v)", rec.Key, ok)
	}
	rs, err := c.ScanAll(nil, nsName(t, "test"), setName(t, "demo"))
	noErr(t, err)
	n := 0
	for res := range rs.Results() {
		noErr(t, res.Err)
		if res.Record.Key.Value() == nil || res.Record.Key.Value().GetObject() != "user-key" {
			t.Fatalf("scanned key %v", res.Record.Key)
		}
		n++
	}
	if n != 1 {
		t.Fatalf("scan returned %d records, want 1", n)
	}
	// The same digest with a different stored key → KEY_MISMATCH.
	other, err := as.NewKeyWithDigest("test", "demo", "impostor", k.Digest())
	noErr(t, err)
	wantRC(t, c.Put(writePolicy(func(p *as.WritePolicy) { p.SendKey = true }), other, as.BinMap{"v": 2}), types.KEY_MISMATCH)
}

// RECORD_TOO_BIG above the 1 MiB default max-record-size, with the record
// size computed as CE 8.1 does: real CE accepts a string bin "padpad" of
// 1 MiB − 57 bytes in set "demo" and refuses one byte more. The set name, a
// stored key, a TTL and the bin name count.
func TestWriteRecordTooBig(t *testing.T) {
	c := testClient(t)
	for _, tc := range []struct {
		name    string
		ns      string // default "test"
		ttl     uint32
		set     string
		bin     string
		sendKey bool
		max     int // largest string payload accepted
	}{
		{name: "set and bin", set: "demo", bin: "padpad", max: 1<<20 - 57},
		{name: "no set", bin: "b", max: 1<<20 - 47},
		{name: "stored key", set: "demo", bin: "padpad", sendKey: true, max: 1<<20 - 57 - 5},
		{name: "ttl", ns: "ttl", ttl: 3600, set: "demo", bin: "padpad", max: 1<<20 - 57 - 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ns := cmp.Or(tc.ns, "test")
			k := mustKey(t, ns, tc.set, "big")
			// The set name is stored with the record: on an external
			// cluster the test's own (longer) set name takes its bytes, and
			// the namespace's limit is the cluster's.
			tc.max += storedSetSize(tc.set) - storedSetSize(k.SetName()) + maxRecordSize(t, c, k.Namespace()) - 1<<20
			p := writePolicy(func(p *as.WritePolicy) { p.SendKey, p.Expiration = tc.sendKey, tc.ttl })
			wantRC(t, c.Put(p, k, as.BinMap{tc.bin: strings.Repeat("x", tc.max+1)}), types.RECORD_TOO_BIG)
			wantMissing(t, c, k)
			noErr(t, c.Put(p, k, as.BinMap{tc.bin: strings.Repeat("x", tc.max)}))
			// Growing the stored record past the limit fails and leaves it.
			wantRC(t, c.Put(p, k, as.BinMap{"n": 1}), types.RECORD_TOO_BIG)
			wantGen(t, c, k, 1)
			_, err := c.Delete(nil, k)
			noErr(t, err)
		})
	}
	wantRC(t, c.Put(nil, mustKey(t, "test", "demo", "huge"), as.BinMap{"b": make([]byte, 2<<20)}), types.RECORD_TOO_BIG)
	// Like the real server, no max-record-size above 8 MiB (a write block).
	if srv, err := aerofake.Start(context.Background(), aerofake.Config{MaxRecordSize: 9 << 20}); err == nil {
		_ = srv.Close()
		t.Fatal("MaxRecordSize 9 MiB accepted")
	}
}

// storedSetSize is what a set name adds to a stored record.
func storedSetSize(set string) int {
	if set == "" {
		return 0
	}
	return 1 + len(set)
}

// maxRecordSize is the namespace's max-record-size as the server reports
// it, 1 MiB (CE 8.1's default) when it reports none.
func maxRecordSize(t testing.TB, c *as.Client, ns string) int {
	t.Helper()
	cmd := "namespace/" + ns
	info, err := c.GetNodes()[0].RequestInfo(as.NewInfoPolicy(), cmd)
	noErr(t, err)
	for _, kv := range strings.Split(info[cmd], ";") {
		if v, ok := strings.CutPrefix(kv, "max-record-size="); ok {
			if n, err := strconv.Atoi(v); err == nil && n > 0 {
				return n
			}
		}
	}
	return 1 << 20
}

// §2.8 write response / §5.2: with RESPOND_ALL_OPS every op answers in
// order; writes answer NULL, map puts the size; results of one bin merge
// into a list.
func TestOperateRespondAllOps(t *testing.T) {
	c := testClient(t)
	k := mustKey(t, "test", "demo", "op")
	r, err := c.Operate(nil, k,
		as.PutOp(as.NewBin("a", 1)),
		as.MapPutOp(as.DefaultMapPolicy(), "m", "t-0", 42),
		as.MapGetByKeyOp("m", "t-0", as.MapReturnType.VALUE),
		as.GetBinOp("a"),
	)
	noErr(t, err)
	if !reflect.DeepEqual(r.Bins["a"], []any{nil, 1}) || !reflect.DeepEqual(r.Bins["m"], []any{1, 42}) {
		t.Fatalf("bins %#v, want a: [nil 1], m: [1 42]", r.Bins)
	}
	if r.Generation != 1 {
		t.Fatalf("generation %d, want 1", r.Generation)
	}
	// RespondPerEachOp forces RESPOND_ALL_OPS for plain ops too.
	p := writePolicy(func(p *as.WritePolicy) { p.RespondPerEachOp = true })
	r, err = c.Operate(p, k, as.AddOp(as.NewBin("n", 5)), as.GetBinOp("n"))
	noErr(t, err)
	if !reflect.DeepEqual(r.Bins["n"], []any{nil, 5}) {
		t.Fatalf("n = %#v, want [nil 5]", r.Bins["n"])
	}
	// Without it, only read results come back.
	r, err = c.Operate(nil, k, as.AddOp(as.NewBin("n", 5)), as.GetBinOp("n"))
	noErr(t, err)
	if r.Bins["n"] != 10 || len(r.Bins) != 1 {
		t.Fatalf("bins %#v, want n: 10 only", r.Bins)
	}
	// A read-all op after a write sees the new bins.
	r, err = c.Operate(nil, k, as.PutOp(as.NewBin("b", "x")), as.GetOp())
	noErr(t, err)
	if r.Bins["b"] != "x" || r.Bins["a"] != 1 || r.Bins["n"] != 10 {
		t.Fatalf("read-all after write: %v", r.Bins)
	}
}

// §2.3 DELETE_ALL: deletes the record inside operate (gen 0 in the reply),
// on a missing record → rc 2; with a following write it leaves only the new
// bins and keeps the generation sequence (the sink's delete-to-positions).
func TestOperateDeleteAll(t *testing.T) {
	c := testClient(t)
	k := mustKey(t, "test", "demo", "del")
	noErr(t, c.Put(nil, k, as.BinMap{"a": 1, "b": 2}))
	r, err := c.Operate(nil, k, as.DeleteOp())
	noErr(t, err)
	if r.Generation != 0 {
		t.Fatalf("generation after DELETE_ALL %d, want 0", r.Generation)
	}
	wantMissing(t, c, k)
	_, err = c.Operate(nil, k, as.DeleteOp())
	wantRC(t, err, types.KEY_NOT_FOUND_ERROR)

	noErr(t, c.Put(nil, k, as.BinMap{"a": 1, "b": 2}))
	_, err = c.Operate(genPolicy(as.EXPECT_GEN_EQUAL, 1), k,
		as.DeleteOp(), as.MapPutOp(as.DefaultMapPolicy(), "pos", "t-0", 7))
	noErr(t, err)
	got := mustGet(t, c, k)
	if got.Generation != 2 || len(got.Bins) != 1 || !reflect.DeepEqual(got.Bins["pos"], map[any]any{"t-0": 7}) {
		t.Fatalf("after delete-to-positions: gen %d bins %v", got.Generation, got.Bins)
	}
}

// §5.1 map put / get by key with every return type the sink may use.
func TestMapPutAndGetByKey(t *testing.T) {
	c := testClient(t)
	k := mustKey(t, "test", "demo", "map")
	// A map modify on a missing record creates the record and the map.
	r, err := c.Operate(nil, k, as.MapPutOp(as.DefaultMapPolicy(), "m", "a", 1))
	noErr(t, err)
	if r.Bins["m"] != 1 || r.Generation != 1 {
		t.Fatalf("first put: %v gen %d", r.Bins, r.Generation)
	}
	r, err = c.Operate(nil, k,
		as.MapPutOp(as.DefaultMapPolicy(), "m", "b", "two"),
		as.MapPutOp(as.DefaultMapPolicy(), "m", 3, []byte{3}),
		as.MapPutOp(as.DefaultMapPolicy(), "m", "a", 10), // overwrite: size stays
	)
	noErr(t, err)
	if !reflect.DeepEqual(r.Bins["m"], []any{2, 3, 3}) {
		t.Fatalf("sizes %v, want [2 3 3]", r.Bins["m"])
	}
	rt := as.MapReturnType
	for _, tc := range []struct {
		key  any
		rt   as.MapReturnTypes
		want any
	}{
		{"a", rt.VALUE, 10},
		{"b", rt.VALUE, "two"},
		{3, rt.VALUE, []byte{3}},
		{"zz", rt.VALUE, nil},
		{"a", rt.COUNT, 1},
		{"zz", rt.COUNT, 0},
		{"a", rt.EXISTS, true},
		{"zz", rt.EXISTS, false},
		{"b", rt.KEY, "b"},
		// KEY_VALUE answers key-ordered pairs even from an unordered map
		// (real CE 8.1), which the client returns as []MapPair.
		{"b", rt.KEY_VALUE, []as.MapPair{{Key: "b", Value: "two"}}},
		{"zz", rt.KEY_VALUE, []as.MapPair{}},
		{3, rt.INDEX, 0}, // integers sort before strings
		{"b", rt.INDEX, 2},
		{"b", rt.REVERSE_INDEX, 0},
		{"a", rt.NONE, nil},
	} {
		r, err := c.Operate(nil, k, as.MapGetByKeyOp("m", tc.key, tc.rt))
		noErr(t, err)
		if got := r.Bins["m"]; !reflect.DeepEqual(got, tc.want) {
			t.Fatalf("get %v rt %v = %#v, want %#v", tc.key, tc.rt, got, tc.want)
		}
	}
	r, err = c.Operate(nil, k, as.MapGetByKeyListOp("m", []any{"b", "zz", "a"}, rt.VALUE), as.MapSizeOp("m"))
	noErr(t, err)
	if !reflect.DeepEqual(r.Bins["m"], []any{[]any{"two", 10}, 3}) {
		t.Fatalf("key list + size = %#v", r.Bins["m"])
	}
	r, err = c.Operate(nil, k, as.MapGetByKeyListOp("m", []any{"b", "zz", "a", 3}, rt.KEY_VALUE))
	noErr(t, err)
	if want := []as.MapPair{{Key: 3, Value: []byte{3}}, {Key: "a", Value: 10}, {Key: "b", Value: "two"}}; !reflect.DeepEqual(r.Bins["m"], want) {
		t.Fatalf("key list KEY_VALUE = %#v, want %#v", r.Bins["m"], want)
	}
	wantGen(t, c, k, 2)
}

// §5.1 map increment: a missing key starts from 0, a missing bin creates the
// map, floats add, a non-numeric value → rc 4.
func TestMapIncrement(t *testing.T) {
	c := testClient(t)
	k := mustKey(t, "test", "demo", "inc")
	p := as.DefaultMapPolicy()
	r, err := c.Operate(nil, k, as.MapIncrementOp(p, "m", "n", 5))
	noErr(t, err)
	if r.Bins["m"] != 5 {
		t.Fatalf("first increment = %v, want 5", r.Bins["m"])
	}
	r, err = c.Operate(nil, k, as.MapIncrementOp(p, "m", "n", 3), as.MapDecrementOp(p, "m", "n", 1),
		as.MapIncrementOp(p, "m", "f", 0.5), as.MapIncrementOp(p, "m", "f", 0.25))
	noErr(t, err)
	if !reflect.DeepEqual(r.Bins["m"], []any{8, 7, 0.5, 0.75}) {
		t.Fatalf("increments = %#v", r.Bins["m"])
	}
	_, err = c.Operate(nil, k, as.MapPutOp(p, "m", "s", "text"))
	noErr(t, err)
	_, err = c.Operate(nil, k, as.MapIncrementOp(p, "m", "s", 1))
	wantRC(t, err, types.PARAMETER_ERROR)
	_, err = c.Operate(nil, k, as.MapIncrementOp(p, "m", "n", "x"))
	wantRC(t, err, types.PARAMETER_ERROR)
	got := mustGet(t, c, k)
	if !reflect.DeepEqual(got.Bins["m"], map[any]any{"n": 7, "f": 0.75, "s": "text"}) {
		t.Fatalf("map = %#v", got.Bins["m"])
	}
}

// §5.2: map read on a missing bin → NULL; on a non-map bin → rc 12; map
// modify on a non-map bin → rc 12.
func TestMapWrongBins(t *testing.T) {
	c := testClient(t)
	k := mustKey(t, "test", "demo", "wrong")
	noErr(t, c.Put(nil, k, as.BinMap{"i": 1}))
	r, err := c.Operate(nil, k, as.MapGetByKeyOp("nomap", "a", as.MapReturnType.VALUE))
	noErr(t, err)
	if v, ok := r.Bins["nomap"]; !ok || v != nil {
		t.Fatalf("missing bin read = %v (%v), want nil present", v, ok)
	}
	_, err = c.Operate(nil, k, as.MapSizeOp("i"))
	wantRC(t, err, types.BIN_TYPE_ERROR)
	_, err = c.Operate(nil, k, as.MapPutOp(as.DefaultMapPolicy(), "i", "a", 1))
	wantRC(t, err, types.BIN_TYPE_ERROR)
}

// Rule 0.8: map keys compare as decoded values. A uint64 key (encoded 0xcf)
// is found by an int key (encoded 0xcd).
func TestMapKeyNormalization(t *testing.T) {
	c := testClient(t)
	k := mustKey(t, "test", "demo", "norm")
	noErr(t, c.Put(nil, k, as.BinMap{"m": map[any]any{uint64(300): "x", -5: "neg"}}))
	r, err := c.Operate(nil, k,
		as.MapGetByKeyOp("m", 300, as.MapReturnType.VALUE),
		as.MapGetByKeyOp("m", int64(-5), as.MapReturnType.VALUE))
	noErr(t, err)
	if !reflect.DeepEqual(r.Bins["m"], []any{"x", "neg"}) {
		t.Fatalf("lookups = %#v", r.Bins["m"])
	}
	r, err = c.Operate(nil, k, as.MapPutOp(as.DefaultMapPolicy(), "m", 300, "y"))
	noErr(t, err)
	if r.Bins["m"] != 2 {
		t.Fatalf("size after overwriting key 300 = %v, want 2", r.Bins["m"])
	}
}

// §5.1 map write flags and legacy write modes: create-only → rc 24,
// update-only → rc 23, NO_FAIL tolerates, PARTIAL commits the rest.
func TestMapWriteFlags(t *testing.T) {
	c := testClient(t)
	k := mustKey(t, "test", "demo", "flags")
	noErr(t, c.Put(nil, k, as.BinMap{"m": map[any]any{"a": 1}}))
	unordered := as.MapOrder.UNORDERED
	createOnly := as.NewMapPolicyWithFlags(unordered, as.MapWriteFlagsCreateOnly)
	updateOnly := as.NewMapPolicyWithFlags(unordered, as.MapWriteFlagsUpdateOnly)
	_, err := c.Operate(nil, k, as.MapPutOp(createOnly, "m", "a", 2))
	wantRC(t, err, types.ResultCode(24))
	_, err = c.Operate(nil, k, as.MapPutOp(updateOnly, "m", "b", 2))
	wantRC(t, err, types.ResultCode(23))
	_, err = c.Operate(nil, k, as.MapPutOp(as.NewMapPolicy(unordered, as.MapWriteMode.CREATE_ONLY), "m", "a", 2))
	wantRC(t, err, types.ResultCode(24))
	_, err = c.Operate(nil, k, as.MapPutOp(as.NewMapPolicy(unordered, as.MapWriteMode.UPDATE_ONLY), "m", "b", 2))
	wantRC(t, err, types.ResultCode(23))
	noFail := as.NewMapPolicyWithFlags(unordered, as.MapWriteFlagsCreateOnly|as.MapWriteFlagsNoFail)
	r, err := c.Operate(nil, k, as.MapPutOp(noFail, "m", "a", 2))
	noErr(t, err)
	if r.Bins["m"] != 1 {
		t.Fatalf("no-fail put size %v, want 1", r.Bins["m"])
	}
	items := map[any]any{"a": 9, "c": 3}
	_, err = c.Operate(nil, k, as.MapPutItemsOp(noFail, "m", items))
	noErr(t, err)
	if m := mustGet(t, c, k).Bins["m"]; !reflect.DeepEqual(m, map[any]any{"a": 1}) {
		t.Fatalf("no-fail without partial applied something: %v", m)
	}
	partial := as.NewMapPolicyWithFlags(unordered, as.MapWriteFlagsCreateOnly|as.MapWriteFlagsNoFail|as.MapWriteFlagsPartial)
	_, err = c.Operate(nil, k, as.MapPutItemsOp(partial, "m", items))
	noErr(t, err)
	if m := mustGet(t, c, k).Bins["m"]; !reflect.DeepEqual(m, map[any]any{"a": 1, "c": 3}) {
		t.Fatalf("partial put items: %v", m)
	}
}

// Map remove, clear, put-items and a key-ordered map (returned as ordered
// pairs by the client).
func TestMapRemoveClearOrdered(t *testing.T) {
	c := testClient(t)
	k := mustKey(t, "test", "demo", "rm")
	p := as.DefaultMapPolicy()
	r, err := c.Operate(nil, k, as.MapPutItemsOp(p, "m", map[any]any{"a": 1, "b": 2, "c": 3}),
		as.MapRemoveByKeyOp("m", "b", as.MapReturnType.VALUE),
		as.MapRemoveByKeyListOp("m", []any{"a", "zz"}, as.MapReturnType.COUNT),
		as.MapSizeOp("m"))
	noErr(t, err)
	if !reflect.DeepEqual(r.Bins["m"], []any{3, 2, 1, 1}) {
		t.Fatalf("results %#v", r.Bins["m"])
	}
	_, err = c.Operate(nil, k, as.MapClearOp("m"))
	noErr(t, err)
	if m := mustGet(t, c, k).Bins["m"]; !reflect.DeepEqual(m, map[any]any{}) {
		t.Fatalf("cleared map = %#v", m)
	}

	ordered := as.NewMapPolicy(as.MapOrder.KEY_ORDERED, as.MapWriteMode.UPDATE)
	ko := mustKey(t, "test", "demo", "ordered")
	for _, key := range []any{"c", 2, "a", 1} {
		_, err := c.Operate(nil, ko, as.MapPutOp(ordered, "m", key, 0))
		noErr(t, err)
	}
	got := mustGet(t, c, ko).Bins["m"]
	want := []as.MapPair{{Key: 1, Value: 0}, {Key: 2, Value: 0}, {Key: "a", Value: 0}, {Key: "c", Value: 0}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("key-ordered map = %#v, want %#v", got, want)
	}
}

// The sink's pattern end to end: read (gen g, positions), write only if the
// stored position is older, EXPECT_GEN_EQUAL g; a concurrent writer with the
// same stale generation loses with GENERATION_ERROR.
func TestMapSinkPositionsPattern(t *testing.T) {
	c := testClient(t)
	k := mustKey(t, "test", "sink", "order-1")
	// First write of offset 10: create-only.
	_, err := c.Operate(existsPolicy(as.CREATE_ONLY), k,
		as.PutOp(as.NewBin("total", 100)),
		as.MapPutOp(as.DefaultMapPolicy(), "pos", "orders-0", 10))
	noErr(t, err)
	// A replay of the same first write loses.
	_, err = c.Operate(existsPolicy(as.CREATE_ONLY), k,
		as.PutOp(as.NewBin("total", 100)),
		as.MapPutOp(as.DefaultMapPolicy(), "pos", "orders-0", 10))
	wantRC(t, err, types.KEY_EXISTS_ERROR)

	r, err := c.Operate(nil, k, as.MapGetByKeyOp("pos", "orders-0", as.MapReturnType.VALUE), as.GetBinOp("total"))
	noErr(t, err)
	gen := r.Generation
	if r.Bins["pos"] != 10 || r.Bins["total"] != 100 || gen != 1 {
		t.Fatalf("read back %v gen %d", r.Bins, gen)
	}
	cas := genPolicy(as.EXPECT_GEN_EQUAL, gen)
	_, err = c.Operate(cas, k, as.AddOp(as.NewBin("total", 5)), as.MapPutOp(as.DefaultMapPolicy(), "pos", "orders-0", 11))
	noErr(t, err)
	// Zombie with the same stale generation.
	_, err = c.Operate(cas, k, as.AddOp(as.NewBin("total", 5)), as.MapPutOp(as.DefaultMapPolicy(), "pos", "orders-0", 11))
	wantRC(t, err, types.GENERATION_ERROR)
	got := mustGet(t, c, k)
	if got.Bins["total"] != 105 || got.Generation != 2 {
		t.Fatalf("final %v gen %d, want total 105 gen 2", got.Bins, got.Generation)
	}
}

// Real CE 8.1 stores an unordered map with its keys sorted (integers, then
// strings, then blobs), nested maps too, on every write: a plain write of
// the bin and a map put alike. The stored bytes show it.
func TestUnorderedMapStoredInKeyOrder(t *testing.T) {
	srv, c := testServer(t)
	str := func(s string) []byte { return append([]byte{0xa0 | byte(len(s)+1), 0x03}, s...) }
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	// {"b": {"y": 1, "x": 2}, "a": [{"d": 1, "c": 2}], 2: 1}
	sent := cat([]byte{0x83},
		str("b"), []byte{0x82}, str("y"), []byte{0x01}, str("x"), []byte{0x02},
		str("a"), []byte{0x91, 0x82}, str("d"), []byte{0x01}, str("c"), []byte{0x02},
		[]byte{0x02, 0x01})
	kf := keyFields(t, "test", "demo", "sorted")
	rc := dialRaw(t, srv)
	rc.send(frame(3, msgBody(0, 0x01, 0, 0, 0, kf, [][]byte{opBytes(2, 19, "m", sent)})))
	if code, _, _ := rc.mustReply(); code != 0 {
		t.Fatalf("raw map write: rc %d", code)
	}
	stored := func() []byte {
		t.Helper()
		rc.send(frame(3, msgBody(0x01, 0, 0, 0, 0, kf, [][]byte{opBytes(1, 0, "m", nil)})))
		code, _, body := rc.mustReply()
		if code != 0 {
			t.Fatalf("raw read: rc %d", code)
		}
		off := 22
		for range binary.BigEndian.Uint16(body[18:20]) {
			off += 4 + int(binary.BigEndian.Uint32(body[off:]))
		}
		if binary.BigEndian.Uint16(body[20:22]) != 1 {
			t.Fatalf("read reply %x has no single op", body)
		}
		size := int(binary.BigEndian.Uint32(body[off:]))
		nameLen := int(body[off+7])
		return body[off+8+nameLen : off+4+size]
	}
	want := cat([]byte{0x83},
		[]byte{0x02, 0x01},
		str("a"), []byte{0x91, 0x82}, str("c"), []byte{0x02}, str("d"), []byte{0x01},
		str("b"), []byte{0x82}, str("x"), []byte{0x02}, str("y"), []byte{0x01})
	if got := stored(); !bytes.Equal(got, want) {
		t.Fatalf("stored map\n%x, want\n%x", got, want)
	}
	// A map put of a nested map through the client.
	_, err := c.Operate(nil, mustKey(t, "test", "demo", "sorted"),
		as.MapPutOp(as.DefaultMapPolicy(), "m", "0", map[any]any{"q": 1, "p": 2}))
	noErr(t, err)
	want = cat([]byte{0x84},
		[]byte{0x02, 0x01},
		str("0"), []byte{0x82}, str("p"), []byte{0x02}, str("q"), []byte{0x01},
		str("a"), []byte{0x91, 0x82}, str("c"), []byte{0x02}, str("d"), []byte{0x01},
		str("b"), []byte{0x82}, str("x"), []byte{0x02}, str("y"), []byte{0x01})
	if got := stored(); !bytes.Equal(got, want) {
		t.Fatalf("stored map after a put\n%x, want\n%x", got, want)
	}
}
