package aerofake_test

// Conformance: generation, record-exists actions, deletes and TTL, driven
// through the real client. One test per row of §6 and §2.8 of the wire
// reference (shared/reference/aerospike-wire.md).

import (
	"errors"
	"math"
	"reflect"
	"sync/atomic"
	"testing"
	"time"

	as "github.com/aerospike/aerospike-client-go/v7"
	"github.com/aerospike/aerospike-client-go/v7/types"

	"github.com/connectd/connectd/connectors/aerospike/aerofake"
)

func wantRC(t testing.TB, err error, rc types.ResultCode) {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want result code %v", rc)
	}
	var ae as.Error
	if !errors.As(err, &ae) || !ae.Matches(rc) {
		t.Fatalf("got error %v, want result code %v", err, rc)
	}
}

func noErr(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
}

func writePolicy(mod func(*as.WritePolicy)) *as.WritePolicy {
	p := as.NewWritePolicy(0, 0)
	mod(p)
	return p
}

func genPolicy(gp as.GenerationPolicy, gen uint32) *as.WritePolicy {
	return writePolicy(func(p *as.WritePolicy) { p.GenerationPolicy, p.Generation = gp, gen })
}

func existsPolicy(a as.RecordExistsAction) *as.WritePolicy {
	return writePolicy(func(p *as.WritePolicy) { p.RecordExistsAction = a })
}

func mustGet(t testing.TB, c *as.Client, k *as.Key, bins ...string) *as.Record {
	t.Helper()
	r, err := c.Get(nil, k, bins...)
	if err != nil {
		t.Fatalf("get %v: %v", k, err)
	}
	return r
}

func wantGen(t testing.TB, c *as.Client, k *as.Key, gen uint32) {
	t.Helper()
	if r := mustGet(t, c, k); r.Generation != gen {
		t.Fatalf("generation %d, want %d", r.Generation, gen)
	}
}

func wantMissing(t testing.TB, c *as.Client, k *as.Key) {
	t.Helper()
	ok, err := c.Exists(nil, k)
	noErr(t, err)
	if ok {
		t.Fatalf("record %v exists, want missing", k)
	}
}

// §6 "create": a new record has generation 1.
func TestGenCreateStartsAtOne(t *testing.T) {
	srv, c := testServer(t)
	k := mustKey(t, "test", "demo", "k")
	noErr(t, c.Put(nil, k, as.BinMap{"v": 1}))
	wantGen(t, c, k, 1)
	rec, ok := srv.Record("test", [20]byte(k.Digest()))
	if !ok || rec.Generation != 1 || rec.Bins["v"] != int64(1) {
		t.Fatalf("server record = %+v, %v", rec, ok)
	}
}

// §6 "gen is u16 and wraps 65535 → 1", with generation checks across the wrap.
func TestGenWrapsTo1(t *testing.T) {
	srv, c := testServer(t)
	k := mustKey(t, "test", "demo", "wrap")
	noErr(t, c.Put(nil, k, as.BinMap{"v": 1}))
	noErr(t, srv.SetGeneration("test", [20]byte(k.Digest()), 65534))
	noErr(t, c.Put(genPolicy(as.EXPECT_GEN_EQUAL, 65534), k, as.BinMap{"v": 2}))
	wantGen(t, c, k, 65535)
	noErr(t, c.Put(genPolicy(as.EXPECT_GEN_EQUAL, 65535), k, as.BinMap{"v": 3}))
	wantGen(t, c, k, 1)
	wantRC(t, c.Put(genPolicy(as.EXPECT_GEN_EQUAL, 65536), k, as.BinMap{"v": 4}), types.GENERATION_ERROR)
	noErr(t, c.Put(genPolicy(as.EXPECT_GEN_EQUAL, 1), k, as.BinMap{"v": 5}))
	wantGen(t, c, k, 2)
}

// §6 "each successful write, touch, operate-with-write → gen += 1, including
// writes that change nothing"; reads do not.
func TestGenEveryWriteBumps(t *testing.T) {
	c := testClient(t)
	k := mustKey(t, "test", "demo", "bump")
	steps := []struct {
		name string
		do   func() error
	}{
		{"put", func() error { return c.Put(nil, k, as.BinMap{"v": 1, "s": "a", "m": map[any]any{"x": 1}}) }},
		{"same put", func() error { return c.Put(nil, k, as.BinMap{"v": 1}) }},
		{"touch", func() error { return c.Touch(nil, k) }},
		{"operate put", func() error { _, err := c.Operate(nil, k, as.PutOp(as.NewBin("v", 1))); return err }},
		{"add 0", func() error { return c.AddBins(nil, k, as.NewBin("v", 0)) }},
		{"append empty", func() error { return c.AppendBins(nil, k, as.NewBin("s", "")) }},
		{"map put same", func() error {
			_, err := c.Operate(nil, k, as.MapPutOp(as.DefaultMapPolicy(), "m", "x", 1))
			return err
		}},
	}
	for i, st := range steps {
		noErr(t, st.do())
		wantGen(t, c, k, uint32(i+1))
	}
	_, err := c.Operate(nil, k, as.GetBinOp("v"), as.MapSizeOp("m"))
	noErr(t, err)
	_, err = c.GetHeader(nil, k)
	noErr(t, err)
	wantGen(t, c, k, uint32(len(steps)))
}

// §6 "EXPECT_GEN_EQUAL g, record missing": g == 0 creates; g ≠ 0 → rc 3 and
// nothing is created.
func TestGenExpectEqualMissingRecord(t *testing.T) {
	c := testClient(t)
	for _, tc := range []struct {
		gen    uint32
		wantOK bool
	}{{0, true}, {1, false}, {7, false}, {65535, false}} {
		k := mustKey(t, "test", "demo", int(tc.gen))
		err := c.Put(genPolicy(as.EXPECT_GEN_EQUAL, tc.gen), k, as.BinMap{"v": 1})
		if tc.wantOK {
			noErr(t, err)
			wantGen(t, c, k, 1)
			continue
		}
		wantRC(t, err, types.GENERATION_ERROR)
		wantMissing(t, c, k)
	}
}

// §6 "EXPECT_GEN_EQUAL g, record present": g == gen ok, else rc 3 (g = 0
// included: it acts as create-only but fails with 3, not 5).
func TestGenExpectEqualPresentRecord(t *testing.T) {
	c := testClient(t)
	k := mustKey(t, "test", "demo", "present")
	noErr(t, c.Put(nil, k, as.BinMap{"v": 1}))
	noErr(t, c.Put(genPolicy(as.EXPECT_GEN_EQUAL, 1), k, as.BinMap{"v": 2}))
	for _, stale := range []uint32{0, 1, 3, 100} {
		wantRC(t, c.Put(genPolicy(as.EXPECT_GEN_EQUAL, stale), k, as.BinMap{"v": 99}), types.GENERATION_ERROR)
	}
	r := mustGet(t, c, k)
	if r.Generation != 2 || r.Bins["v"] != 2 {
		t.Fatalf("record after rejected writes = gen %d bins %v, want gen 2 v=2", r.Generation, r.Bins)
	}
}

// §6 "EXPECT_GEN_GT g": ok iff g > current gen (0 when missing).
func TestGenExpectGT(t *testing.T) {
	c := testClient(t)
	k := mustKey(t, "test", "demo", "gt")
	wantRC(t, c.Put(genPolicy(as.EXPECT_GEN_GT, 0), k, as.BinMap{"v": 1}), types.GENERATION_ERROR)
	wantMissing(t, c, k)
	noErr(t, c.Put(genPolicy(as.EXPECT_GEN_GT, 1), k, as.BinMap{"v": 1}))
	wantGen(t, c, k, 1)
	wantRC(t, c.Put(genPolicy(as.EXPECT_GEN_GT, 1), k, as.BinMap{"v": 2}), types.GENERATION_ERROR)
	noErr(t, c.Put(genPolicy(as.EXPECT_GEN_GT, 2), k, as.BinMap{"v": 2}))
	noErr(t, c.Put(genPolicy(as.EXPECT_GEN_GT, 100), k, as.BinMap{"v": 3}))
	wantGen(t, c, k, 3)
}

// §6 "CREATE_ONLY, record present → rc 5"; the record is unchanged.
func TestExistsCreateOnly(t *testing.T) {
	c := testClient(t)
	k := mustKey(t, "test", "demo", "co")
	noErr(t, c.Put(existsPolicy(as.CREATE_ONLY), k, as.BinMap{"v": 1}))
	wantRC(t, c.Put(existsPolicy(as.CREATE_ONLY), k, as.BinMap{"v": 2}), types.KEY_EXISTS_ERROR)
	r := mustGet(t, c, k)
	if r.Generation != 1 || r.Bins["v"] != 1 {
		t.Fatalf("record = gen %d %v, want gen 1 v=1", r.Generation, r.Bins)
	}
}

// §6 "UPDATE_ONLY / REPLACE_ONLY / Touch, record missing → rc 2".
func TestExistsMustExistOnMissing(t *testing.T) {
	c := testClient(t)
	cases := map[string]func(k *as.Key) error{
		"update-only":  func(k *as.Key) error { return c.Put(existsPolicy(as.UPDATE_ONLY), k, as.BinMap{"v": 1}) },
		"replace-only": func(k *as.Key) error { return c.Put(existsPolicy(as.REPLACE_ONLY), k, as.BinMap{"v": 1}) },
		"touch":        func(k *as.Key) error { return c.Touch(nil, k) },
		"operate-touch": func(k *as.Key) error {
			_, err := c.Operate(nil, k, as.TouchOp(), as.PutOp(as.NewBin("v", 1)))
			return err
		},
	}
	for name, do := range cases {
		t.Run(name, func(t *testing.T) {
			k := mustKey(t, "test", "demo", name)
			err := do(k)
			wantRC(t, err, types.KEY_NOT_FOUND_ERROR)
			if !errors.Is(err, as.ErrKeyNotFound) {
				t.Fatalf("client error %v is not ErrKeyNotFound", err)
			}
			wantMissing(t, c, k)
		})
	}
}

// §2.8 write rule 7: UPDATE merges bins, REPLACE / REPLACE_ONLY start from
// an empty bin set, UPDATE_ONLY merges into an existing record.
func TestExistsUpdateAndReplaceBins(t *testing.T) {
	c := testClient(t)
	for _, tc := range []struct {
		action as.RecordExistsAction
		want   as.BinMap
	}{
		{as.UPDATE, as.BinMap{"a": 1, "b": 2, "c": 3}},
		{as.UPDATE_ONLY, as.BinMap{"a": 1, "b": 2, "c": 3}},
		{as.REPLACE, as.BinMap{"c": 3}},
		{as.REPLACE_ONLY, as.BinMap{"c": 3}},
	} {
		k := mustKey(t, "test", "demo", int(tc.action))
		noErr(t, c.Put(nil, k, as.BinMap{"a": 1, "b": 2}))
		noErr(t, c.Put(existsPolicy(tc.action), k, as.BinMap{"c": 3}))
		r := mustGet(t, c, k)
		if len(r.Bins) != len(tc.want) {
			t.Fatalf("action %v: bins %v, want %v", tc.action, r.Bins, tc.want)
		}
		for name, v := range tc.want {
			if r.Bins[name] != v {
				t.Fatalf("action %v: bins %v, want %v", tc.action, r.Bins, tc.want)
			}
		}
		if r.Generation != 2 {
			t.Fatalf("action %v: gen %d, want 2", tc.action, r.Generation)
		}
	}
	// REPLACE creates when missing.
	k := mustKey(t, "test", "demo", "replace-new")
	noErr(t, c.Put(existsPolicy(as.REPLACE), k, as.BinMap{"c": 3}))
	wantGen(t, c, k, 1)
}

// §2.8 write rule 7: REPLACE combined with a bin delete, a modify op, a CDT
// modify, DELETE_ALL or a touch → rc 4, and the record is left as it was
// (real CE 8.1; a touch alone under REPLACE too).
func TestExistsReplaceWithModifyOpsIsParameterError(t *testing.T) {
	c := testClient(t)
	k := mustKey(t, "test", "demo", "rep")
	noErr(t, c.Put(nil, k, as.BinMap{"n": 1}))
	for name, o := range map[string]*as.Operation{
		"bin delete": as.PutOp(as.NewBin("n", nil)),
		"add":        as.AddOp(as.NewBin("n", 1)),
		"append":     as.AppendOp(as.NewBin("s", "x")),
		"map put":    as.MapPutOp(as.DefaultMapPolicy(), "m", 1, 1),
		"delete all": as.DeleteOp(),
		"touch":      as.TouchOp(),
	} {
		for _, action := range []as.RecordExistsAction{as.REPLACE, as.REPLACE_ONLY} {
			_, err := c.Operate(existsPolicy(action), k, as.PutOp(as.NewBin("x", 1)), o)
			if err == nil {
				t.Fatalf("%s with %v: no error", name, action)
			}
			wantRC(t, err, types.PARAMETER_ERROR)
		}
	}
	for _, action := range []as.RecordExistsAction{as.REPLACE, as.REPLACE_ONLY} {
		_, err := c.Operate(existsPolicy(action), k, as.TouchOp())
		wantRC(t, err, types.PARAMETER_ERROR)
	}
	wantGen(t, c, k, 1)
	if r := mustGet(t, c, k); !reflect.DeepEqual(map[string]any(r.Bins), map[string]any{"n": 1}) {
		t.Fatalf("bins after the refused writes = %v, want n: 1", r.Bins)
	}
}

// §6 "delete, missing → rc 2": the Go client reports existed=false, no error.
func TestDeleteMissing(t *testing.T) {
	c := testClient(t)
	existed, err := c.Delete(nil, mustKey(t, "test", "demo", "nope"))
	noErr(t, err)
	if existed {
		t.Fatal("Delete of a missing record reported existed=true")
	}
}

// §6 "delete with gen policy → checked like writes → rc 3".
func TestDeleteWithGeneration(t *testing.T) {
	c := testClient(t)
	k := mustKey(t, "test", "demo", "dg")
	noErr(t, c.Put(nil, k, as.BinMap{"v": 1}))
	noErr(t, c.Put(nil, k, as.BinMap{"v": 2}))
	_, err := c.Delete(genPolicy(as.EXPECT_GEN_EQUAL, 1), k)
	wantRC(t, err, types.GENERATION_ERROR)
	_, err = c.Delete(genPolicy(as.EXPECT_GEN_GT, 2), k)
	wantRC(t, err, types.GENERATION_ERROR)
	wantGen(t, c, k, 2)
	existed, err := c.Delete(genPolicy(as.EXPECT_GEN_EQUAL, 2), k)
	noErr(t, err)
	if !existed {
		t.Fatal("existed=false for a present record")
	}
	wantMissing(t, c, k)
}

// §6 "durable delete on CE → rc 25", checked before the lookup.
func TestDeleteDurableIsEnterpriseOnly(t *testing.T) {
	c := testClient(t)
	k := mustKey(t, "test", "demo", "dd")
	durable := writePolicy(func(p *as.WritePolicy) { p.DurableDelete = true })
	_, err := c.Delete(durable, k)
	wantRC(t, err, types.ENTERPRISE_ONLY)
	noErr(t, c.Put(nil, k, as.BinMap{"v": 1}))
	_, err = c.Delete(durable, k)
	wantRC(t, err, types.ENTERPRISE_ONLY)
	wantGen(t, c, k, 1)
	// A durable write that does not delete is fine.
	noErr(t, c.Put(durable, k, as.BinMap{"v": 2}))
}

// §2.8 delete: CE leaves no tombstone, so a re-created record starts at
// generation 1 again (the ABA hazard the sink's positions bin guards against).
func TestDeleteThenRecreateStartsAtOne(t *testing.T) {
	c := testClient(t)
	k := mustKey(t, "test", "demo", "aba")
	for i := 0; i < 3; i++ {
		noErr(t, c.Put(nil, k, as.BinMap{"v": i}))
	}
	wantGen(t, c, k, 3)
	existed, err := c.Delete(nil, k)
	noErr(t, err)
	if !existed {
		t.Fatal("existed=false")
	}
	noErr(t, c.Put(genPolicy(as.EXPECT_GEN_EQUAL, 0), k, as.BinMap{"v": 9}))
	wantGen(t, c, k, 1)
}

// §2.8 write rule 5 and read rule: a record written under one set cannot be
// read or written under another set name (same digest) → rc 4.
func TestSetNameMismatch(t *testing.T) {
	c := testClient(t)
	k := mustKey(t, "test", "demo", "s")
	noErr(t, c.Put(nil, k, as.BinMap{"v": 1}))
	other, err := as.NewKeyWithDigest(nsName(t, "test"), setName(t, "other"), "s", k.Digest())
	noErr(t, err)
	wantRC(t, c.Put(nil, other, as.BinMap{"v": 2}), types.PARAMETER_ERROR)
	_, err = c.Get(nil, other)
	wantRC(t, err, types.PARAMETER_ERROR)
	_, err = c.Delete(nil, other)
	wantRC(t, err, types.PARAMETER_ERROR)
	noSet, err := as.NewKeyWithDigest(nsName(t, "test"), "", "s", k.Digest())
	noErr(t, err)
	wantRC(t, c.Put(nil, noSet, as.BinMap{"v": 2}), types.PARAMETER_ERROR)
	wantGen(t, c, k, 1)
}

// fakeClock is a settable clock for TTL tests; it starts at real time so the
// client's void-time conversion (against its own clock) stays meaningful.
type fakeClock struct{ offset atomic.Int64 }

func (f *fakeClock) Now() time.Time          { return time.Now().Add(time.Duration(f.offset.Load())) }
func (f *fakeClock) Advance(d time.Duration) { f.offset.Add(int64(d)) }

func ttlServer(t *testing.T, ns ...aerofake.NamespaceConfig) (*aerofake.Server, *as.Client, *fakeClock) {
	t.Helper()
	clk := &fakeClock{}
	srv := startServer(t, aerofake.Config{Namespaces: ns, Now: clk.Now})
	return srv, newClient(t, srv), clk
}

func ttlPolicy(ttl uint32) *as.WritePolicy {
	return writePolicy(func(p *as.WritePolicy) { p.Expiration = ttl })
}

// §6 "TTL 0 → namespace default-ttl (default 0 = never)".
func TestTTLNamespaceDefault(t *testing.T) {
	srv, c, clk := ttlServer(t,
		aerofake.NamespaceConfig{Name: "test"},
		aerofake.NamespaceConfig{Name: "short", AllowTTL: true, DefaultTTL: time.Hour},
	)
	k := mustKey(t, "test", "demo", "d")
	noErr(t, c.Put(ttlPolicy(as.TTLServerDefault), k, as.BinMap{"v": 1}))
	if r := mustGet(t, c, k); r.Expiration != math.MaxUint32 {
		t.Fatalf("stock namespace default: expiration %d, want never (MaxUint32)", r.Expiration)
	}
	ks := mustKey(t, "short", "demo", "d")
	noErr(t, c.Put(ttlPolicy(as.TTLServerDefault), ks, as.BinMap{"v": 1}))
	if r := mustGet(t, c, ks); r.Expiration < 3590 || r.Expiration > 3600 {
		t.Fatalf("default-ttl 1h: expiration %d, want ~3600", r.Expiration)
	}
	clk.Advance(time.Hour + time.Second)
	if _, ok := srv.Record("short", [20]byte(ks.Digest())); ok {
		t.Fatal("record with default TTL still live after it expired")
	}
}

// §6 "TTL 0xFFFFFFFF (TTLDontExpire) → never".
func TestTTLNeverExpire(t *testing.T) {
	srv, c, _ := ttlServer(t, aerofake.NamespaceConfig{Name: "test", AllowTTL: true})
	k := mustKey(t, "test", "demo", "n")
	noErr(t, c.Put(ttlPolicy(100), k, as.BinMap{"v": 1}))
	noErr(t, c.Put(ttlPolicy(as.TTLDontExpire), k, as.BinMap{"v": 2}))
	if r := mustGet(t, c, k); r.Expiration != math.MaxUint32 {
		t.Fatalf("expiration %d, want never", r.Expiration)
	}
	rec, _ := srv.Record("test", [20]byte(k.Digest()))
	if rec.VoidTime != 0 {
		t.Fatalf("void-time %d, want 0", rec.VoidTime)
	}
}

// §6 "TTL 0xFFFFFFFE (TTLDontUpdate) → keep the void-time; on create, the
// default".
func TestTTLDontUpdate(t *testing.T) {
	srv, c, _ := ttlServer(t, aerofake.NamespaceConfig{Name: "test", AllowTTL: true})
	k := mustKey(t, "test", "demo", "du")
	noErr(t, c.Put(ttlPolicy(1000), k, as.BinMap{"v": 1}))
	before, _ := srv.Record("test", [20]byte(k.Digest()))
	noErr(t, c.Put(ttlPolicy(as.TTLDontUpdate), k, as.BinMap{"v": 2}))
	after, _ := srv.Record("test", [20]byte(k.Digest()))
	if before.VoidTime == 0 || after.VoidTime != before.VoidTime {
		t.Fatalf("void-time %d → %d, want unchanged and non-zero", before.VoidTime, after.VoidTime)
	}
	kn := mustKey(t, "test", "demo", "du-new")
	noErr(t, c.Put(ttlPolicy(as.TTLDontUpdate), kn, as.BinMap{"v": 1}))
	if r := mustGet(t, c, kn); r.Expiration != math.MaxUint32 {
		t.Fatalf("create with TTLDontUpdate: expiration %d, want namespace default (never)", r.Expiration)
	}
}

// §6 "TTL > 0": void = now+ttl; a stock namespace answers rc 22; more than
// 10 years → rc 4; an expired record behaves as missing.
func TestTTLPositive(t *testing.T) {
	srv, c, clk := ttlServer(t,
		aerofake.NamespaceConfig{Name: "test"},
		aerofake.NamespaceConfig{Name: "ttl", AllowTTL: true},
	)
	wantRC(t, c.Put(ttlPolicy(100), mustKey(t, "test", "demo", "p"), as.BinMap{"v": 1}), types.FAIL_FORBIDDEN)
	wantRC(t, c.Touch(ttlPolicy(100), mustKey(t, "test", "demo", "p")), types.KEY_NOT_FOUND_ERROR)
	wantRC(t, c.Put(ttlPolicy(315360001), mustKey(t, "ttl", "demo", "p"), as.BinMap{"v": 1}), types.PARAMETER_ERROR)
	noErr(t, c.Put(ttlPolicy(315360000), mustKey(t, "ttl", "demo", "10y"), as.BinMap{"v": 1}))

	k := mustKey(t, "ttl", "demo", "p")
	noErr(t, c.Put(ttlPolicy(100), k, as.BinMap{"v": 1}))
	r := mustGet(t, c, k)
	if r.Expiration < 98 || r.Expiration > 100 {
		t.Fatalf("expiration %d, want ~100", r.Expiration)
	}
	// Shortening and extending both apply on a client write.
	noErr(t, c.Put(ttlPolicy(50), k, as.BinMap{"v": 2}))
	if r := mustGet(t, c, k); r.Expiration < 48 || r.Expiration > 50 {
		t.Fatalf("after ttl 50: expiration %d, want ~50", r.Expiration)
	}
	noErr(t, c.Touch(ttlPolicy(200), k))
	if r := mustGet(t, c, k); r.Expiration < 198 || r.Expiration > 200 || r.Generation != 3 {
		t.Fatalf("after touch ttl 200: expiration %d gen %d, want ~200 and gen 3", r.Expiration, r.Generation)
	}

	clk.Advance(201 * time.Second)
	_, err := c.Get(nil, k)
	wantRC(t, err, types.KEY_NOT_FOUND_ERROR)
	wantMissing(t, c, k)
	if n := srv.Count("ttl", "demo"); n != 1 { // only the 10-year record is left
		t.Fatalf("count %d, want 1", n)
	}
	wantRC(t, c.Put(existsPolicy(as.UPDATE_ONLY), k, as.BinMap{"v": 3}), types.KEY_NOT_FOUND_ERROR)
	noErr(t, c.Put(nil, k, as.BinMap{"v": 3}))
	wantGen(t, c, k, 1)
}

// §6 "void-time in responses": seconds since 2010-01-01, which the client
// turns into a relative TTL. Checked on get, header, batch and scan replies.
func TestTTLVoidTimeInResponses(t *testing.T) {
	srv, c, _ := ttlServer(t, aerofake.NamespaceConfig{Name: "test", AllowTTL: true})
	k := mustKey(t, "test", "demo", "vt")
	noErr(t, c.Put(ttlPolicy(500), k, as.BinMap{"v": 1}))
	rec, _ := srv.Record("test", [20]byte(k.Digest()))
	wantVoid := uint32(time.Now().Unix() - 1262304000 + 500)
	if rec.VoidTime < wantVoid-2 || rec.VoidTime > wantVoid {
		t.Fatalf("void-time %d, want ~%d", rec.VoidTime, wantVoid)
	}
	check := func(what string, exp uint32) {
		t.Helper()
		if exp < 497 || exp > 500 {
			t.Fatalf("%s: expiration %d, want ~500", what, exp)
		}
	}
	h, err := c.GetHeader(nil, k)
	noErr(t, err)
	check("header", h.Expiration)
	recs, err := c.BatchGet(nil, []*as.Key{k, mustKey(t, "test", "demo", "other")})
	noErr(t, err)
	check("batch", recs[0].Expiration)
	rs, err := c.ScanAll(nil, nsName(t, "test"), setName(t, "demo"))
	noErr(t, err)
	for res := range rs.Results() {
		noErr(t, res.Err)
		check("scan", res.Record.Expiration)
	}
}
