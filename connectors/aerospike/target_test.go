package aerospike

import (
	"encoding/base64"
	"encoding/hex"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	as "github.com/aerospike/aerospike-client-go/v7"

	"github.com/connectd/connectd/connectors/aerospike/aerofake"
	"github.com/connectd/connectd/connectors/aerospike/aerotest"
	"github.com/connectd/connectd/framework/sdk"
)

func withHeader(r *sdk.SinkRecord, k, v string) *sdk.SinkRecord {
	r.Headers = append(r.Headers, sdk.Header{Key: k, Value: []byte(v)})
	return r
}

// found returns the record in ns/set/key, or nil. The cluster's own
// namespace is read through the client; another one (only the test server
// has a second namespace) from the test server, skipping t in external
// mode.
func found(t *testing.T, srv *aerotest.Cluster, ns, set string, key any) *aerotest.Record {
	t.Helper()
	if ns == srv.Namespace {
		return stored(t, srv, set, key)
	}
	fake := srv.NeedFake(t, "a second namespace, "+ns)
	r, ok, err := fake.RecordByKey(ns, set, key)
	if err != nil {
		t.Fatal(err)
	}
	if !ok {
		return nil
	}
	return &aerotest.Record{Digest: r.Digest, Bins: r.Bins, Generation: uint32(r.Generation)}
}

// Namespace and set are taken from a value field or a header of each
// record; records naming what the cluster does not have, or nothing
// usable, are reported with the field and the reason.
func TestNamespaceAndSetFromRecord(t *testing.T) {
	// The records name sets through set, so that they are the test's own
	// on an external cluster, and the namespace "bar" as other: the test
	// server's second namespace, the cluster's own namespace on an
	// external cluster (which need not have a second one).
	tests := []struct {
		name      string
		kv        []string
		rec       func(other string, set func(string) string) *sdk.SinkRecord
		ns, set   string // where the record must land ("test": the first namespace, "bar": other); "" = reported
		wantError string
	}{
		{"namespace and set from value fields", []string{KeyNamespace, "${value.meta.ns}", KeySet, "${value.kind}"},
			func(other string, set func(string) string) *sdk.SinkRecord {
				return rec("t", 0, 0, "k", map[string]any{"meta": map[string]any{"ns": other}, "kind": set("users"), "v": int64(1)})
			}, "bar", "users", ""},
		{"namespace and set from headers", []string{KeyNamespace, "${header.ns}", KeySet, "${header.set}"},
			func(other string, set func(string) string) *sdk.SinkRecord {
				return withHeader(withHeader(rec("t", 0, 0, "k", map[string]any{"v": int64(1)}), "ns", other), "set", set("h"))
			}, "bar", "h", ""},
		{"static namespace, set from a field", []string{KeySet, "${value.kind}"},
			func(other string, set func(string) string) *sdk.SinkRecord {
				return rec("t", 0, 0, "k", map[string]any{"kind": set("users"), "v": int64(1)})
			}, "test", "users", ""},
		{"unknown namespace", []string{KeyNamespace, "${value.ns}"},
			func(string, func(string) string) *sdk.SinkRecord {
				return rec("t", 0, 0, "k", map[string]any{"ns": "nope", "v": int64(1)})
			}, "", "", `namespace "nope" does not exist on the cluster (namespaces: bar, test) (from value field "ns")`},
		{"namespace field missing", []string{KeyNamespace, "${value.ns}"},
			func(string, func(string) string) *sdk.SinkRecord {
				return rec("t", 0, 0, "k", map[string]any{"v": int64(1)})
			},
			"", "", `value field "ns", which names the namespace, is missing`},
		{"namespace field a number", []string{KeyNamespace, "${value.ns}"},
			func(string, func(string) string) *sdk.SinkRecord {
				return rec("t", 0, 0, "k", map[string]any{"ns": int64(3)})
			},
			"", "", `value field "ns", which names the namespace, has type int64; it must be a string`},
		{"namespace of a tombstone", []string{KeyNamespace, "${value.ns}"},
			func(string, func(string) string) *sdk.SinkRecord { return rec("t", 0, 0, "k", nil) },
			"", "", "tombstone"},
		{"set header missing", []string{KeySet, "${header.set}"},
			func(string, func(string) string) *sdk.SinkRecord {
				return rec("t", 0, 0, "k", map[string]any{"v": int64(1)})
			},
			"", "", `header "set", which names the set, is missing`},
		{"set too long", []string{KeySet, "${value.kind}"},
			func(string, func(string) string) *sdk.SinkRecord {
				return rec("t", 0, 0, "k", map[string]any{"kind": strings.Repeat("x", 64)})
			}, "", "", "at most 63"},
		{"set empty", []string{KeySet, "${value.kind}"},
			func(string, func(string) string) *sdk.SinkRecord {
				return rec("t", 0, 0, "k", map[string]any{"kind": ""})
			},
			"", "", "is empty"},
		{"set with a colon", []string{KeySet, "${value.kind}"},
			func(string, func(string) string) *sdk.SinkRecord {
				return rec("t", 0, 0, "k", map[string]any{"kind": "a:b"})
			},
			"", "", "contains ':'"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := startServer(t, aerofake.Config{Namespaces: []aerofake.NamespaceConfig{{Name: "test"}, {Name: "bar"}}})
			other, wantError := "bar", tt.wantError
			if srv.External() {
				other = srv.Namespace
				wantError = strings.Replace(wantError, "(namespaces: bar, test)", "(namespaces: "+clusterNamespaces(t, srv)+")", 1)
			}
			task, tc := startTask(t, baseProps(srv, tt.kv...))
			good := rec("t", 1, 0, "good", map[string]any{"ns": other, "kind": srv.Set("g"), "meta": map[string]any{"ns": other}, "v": int64(2)})
			good = withHeader(withHeader(good, "ns", other), "set", srv.Set("g"))
			for range 2 { // delivered, then replayed
				mustPut(t, task, tt.rec(other, srv.Set), good)
			}
			reps := tc.Reports()
			if tt.wantError == "" {
				if len(reps) != 0 {
					t.Fatalf("reports: %v", reps)
				}
				ns := srv.Namespace
				if tt.ns == "bar" {
					ns = other
				}
				r := found(t, srv, ns, tt.set, "k")
				if r == nil {
					t.Fatalf("record not in %s/%s", ns, tt.set)
				}
				if r.Generation != 1 {
					t.Errorf("generation %d after a replay, want 1", r.Generation)
				}
				return
			}
			if len(reps) != 2 || !strings.Contains(reps[0].err.Error(), wantError) {
				t.Fatalf("reports = %v, want 2 containing %q", reps, wantError)
			}
			// The good record of the batch lands where the configuration
			// sends it: namespace other or the first one, set g or s.
			goodNs, goodSet := srv.Namespace, "s"
			if slices.Contains(tt.kv, KeyNamespace) {
				goodNs = other
			}
			if slices.Contains(tt.kv, KeySet) {
				goodSet = "g"
			}
			if found(t, srv, goodNs, goodSet, "good") == nil {
				t.Errorf("the good record of the batch was not written to %s/%s", goodNs, goodSet)
			}
			if fake := fakeOnly(t, srv, "the server's write counter"); fake != nil && fake.Stats().Writes == 0 {
				t.Error("the good record of the batch was not written")
			}
		})
	}
}

// ttl.field gives each record its own TTL; bad TTLs are reported before
// anything is written.
func TestTTLFromField(t *testing.T) {
	srv := startServer(t, aerofake.Config{Namespaces: []aerofake.NamespaceConfig{{Name: "test", AllowTTL: true}}})
	needTTL(t, srv)
	task, tc := startTask(t, baseProps(srv, KeyTTLField, "ttl"))
	now := time.Now()
	mustPut(t, task,
		rec("t", 0, 0, "hour", map[string]any{"ttl": int64(3600)}),
		rec("t", 0, 1, "default", map[string]any{"ttl": int64(0)}),
		rec("t", 0, 2, "twice", map[string]any{"ttl": int64(60)}),
		rec("t", 0, 3, "twice", map[string]any{"ttl": int64(7200)}), // folded: the last TTL wins
	)
	// expiry is when the record expires, as the client reports it (the
	// remaining seconds from now).
	expiry := func(key string) time.Time {
		t.Helper()
		r := stored(t, srv, "s", key)
		if r == nil {
			t.Fatalf("record %s missing", key)
		}
		if r.TTL == aerotest.NeverExpires {
			return time.Time{}
		}
		return time.Now().Add(time.Duration(r.TTL) * time.Second)
	}
	if d := expiry("hour").Sub(now); d < 59*time.Minute || d > 61*time.Minute {
		t.Errorf("ttl 3600: expires in %v", d)
	}
	if e := expiry("default"); !e.IsZero() {
		t.Errorf("ttl 0: expires at %v, want never (the namespace default)", e)
	}
	twice := expiry("twice")
	if d := twice.Sub(now); d < 119*time.Minute || d > 121*time.Minute {
		t.Errorf("two records folded: expires in %v, want the last record's 2h", d)
	}
	voidTime := func(key string) uint32 {
		t.Helper()
		r, ok, err := srv.Fake().RecordByKey("test", "s", key)
		if err != nil || !ok {
			t.Fatalf("record %s on the test server: %v, %v", key, ok, err)
		}
		return r.VoidTime
	}
	var voidBefore uint32
	if srv.Fake() != nil {
		if v := voidTime("default"); v != 0 {
			t.Errorf("ttl 0: void time %d, want 0 (the namespace default: never)", v)
		}
		voidBefore = voidTime("twice")
	}
	mustPut(t, task, rec("t", 0, 4, "twice", nil))
	// The client reports whole seconds remaining: the same expiry reads up
	// to a second or two apart.
	if got := expiry("twice"); got.Sub(twice).Abs() > 2*time.Second {
		t.Errorf("a tombstone changed the expiry %v → %v", twice, got)
	}
	if fakeOnly(t, srv, "the exact void time") != nil {
		if got := voidTime("twice"); got != voidBefore {
			t.Errorf("a tombstone changed the void time %d → %d", voidBefore, got)
		}
	}

	bad := []struct {
		value map[string]any
		want  string
	}{
		{map[string]any{"ttl": int64(-1)}, `ttl field "ttl" is -1; it must be 0 (the namespace default) or 1..315360000 seconds, not negative`},
		{map[string]any{"ttl": "60"}, `ttl field "ttl" has type string; it must be an integer number of seconds`},
		{map[string]any{"ttl": 1.5}, `ttl field "ttl" has type non-integer number`},
		{map[string]any{"ttl": nil}, `ttl field "ttl" is null`},
		{map[string]any{"v": int64(1)}, `ttl field "ttl" is missing`},
		{map[string]any{"ttl": int64(maxTTL + 1)}, "at most 315360000 seconds"},
	}
	writes := statsOf(srv).Writes
	for i, b := range bad {
		mustPut(t, task, rec("t", 1, int64(i), "bad", b.value))
	}
	reps := tc.Reports()
	if len(reps) != len(bad) {
		t.Fatalf("%d reports, want %d: %v", len(reps), len(bad), reps)
	}
	for i, r := range reps {
		if !strings.Contains(r.err.Error(), bad[i].want) {
			t.Errorf("report %d = %v, want %q", i, r.err, bad[i].want)
		}
	}
	if r := stored(t, srv, "s", "bad"); r != nil {
		t.Errorf("bad TTLs wrote %+v", r)
	}
	if w := statsOf(srv).Writes; fakeOnly(t, srv, "the server's write counter") != nil && w != writes {
		t.Errorf("bad TTLs wrote something (server writes %d → %d)", writes, w)
	}
}

// key.type=digest addresses records by the digest the record carries: the
// record lands where a user key with that digest would put it.
func TestKeyAsDigest(t *testing.T) {
	srv := startServer(t, aerofake.Config{})
	ref, err := as.NewKey(srv.Namespace, srv.Set("s"), "user-7")
	if err != nil {
		t.Fatal(err)
	}
	d := ref.Digest()
	tests := []struct {
		name string
		kv   []string
		rec  *sdk.SinkRecord
	}{
		{"hex field", []string{KeyKeySource, KeySourceValueField, KeyKeyField, "digest"}, rec("t", 0, 0, nil, map[string]any{"digest": hex.EncodeToString(d), "v": "hex"})},
		{"base64 field", []string{KeyKeySource, KeySourceValueField, KeyKeyField, "digest"}, rec("t", 0, 1, nil, map[string]any{"digest": base64.StdEncoding.EncodeToString(d), "v": "b64"})},
		{"bytes record key", nil, rec("t", 0, 2, d, map[string]any{"v": "bytes"})},
		{"header bytes", []string{KeyKeySource, KeySourceHeader, KeyKeyHeader, "d"}, withHeader(rec("t", 0, 3, nil, map[string]any{"v": "header"}), "d", string(d))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			task, tc := startTask(t, baseProps(srv, append([]string{KeyKeyType, KeyTypeDigest}, tt.kv...)...))
			mustPut(t, task, tt.rec)
			if reps := tc.Reports(); len(reps) != 0 {
				t.Fatalf("reports: %v", reps)
			}
			r := stored(t, srv, "s", "user-7")
			if r == nil || r.Bins["v"] != tt.rec.Value.(map[string]any)["v"] {
				t.Fatalf("record at the digest of user-7 = %+v", r)
			}
		})
	}

	task, tc := startTask(t, baseProps(srv, KeyKeyType, KeyTypeDigest, KeyKeySource, KeySourceValueField, KeyKeyField, "digest"))
	bad := []struct {
		digest any
		want   string
	}{
		{base64.StdEncoding.EncodeToString(d[:19]), "holds 19 bytes; a digest is 20 bytes"},
		{strings.Repeat("z", 40), "is 40 characters but not hex"},
		{"not base64!", "neither 40 hex digits nor base64 of 20 bytes"},
		{int64(5), "has type int64; a digest must be bytes, hex or base64"},
		{nil, "is null"},
	}
	for i, b := range bad {
		mustPut(t, task, rec("t", 1, int64(i), nil, map[string]any{"digest": b.digest}))
	}
	reps := tc.Reports()
	if len(reps) != len(bad) {
		t.Fatalf("%d reports, want %d: %v", len(reps), len(bad), reps)
	}
	for i, r := range reps {
		if msg := r.err.Error(); !strings.Contains(msg, bad[i].want) || !strings.Contains(msg, `value field digest`) {
			t.Errorf("report %d = %v, want %q naming the field", i, r.err, bad[i].want)
		}
	}
}

func TestRecordSourcesConfig(t *testing.T) {
	srv := startServer(t, aerofake.Config{})
	tests := []struct {
		name    string
		kv      []string
		key     string
		message string
	}{
		{"namespace from a field", []string{KeyNamespace, "${value.a.b}"}, "", ""},
		{"set from a header", []string{KeySet, "${header.x}"}, "", ""},
		{"ttl field", []string{KeyTTLField, "meta.ttl"}, "", ""},
		{"digest keys", []string{KeyKeyType, KeyTypeDigest}, "", ""},
		{"bad namespace placeholder", []string{KeyNamespace, "${value.}"}, KeyNamespace, "is not ${value.<field>}"},
		{"unclosed set placeholder", []string{KeySet, "${header.x"}, KeySet, "is not ${header.<name>}"},
		{"set placeholder inside a name", []string{KeySet, "a_${value.x}"}, KeySet, "placeholders are"},
		{"ttl field empty element", []string{KeyTTLField, "a..b"}, KeyTTLField, "empty path element"},
		{"digest with send.key", []string{KeyKeyType, KeyTypeDigest, KeySendKey, "true"}, KeySendKey, "no user key to store"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			errs := validateAll(t, baseProps(srv, tt.kv...))
			if tt.key == "" {
				if len(errs) != 0 {
					t.Fatalf("errors = %v, want none", errs)
				}
				return
			}
			if msgs := errs[tt.key]; len(msgs) == 0 || !strings.Contains(strings.Join(msgs, "; "), tt.message) {
				t.Fatalf("errors = %v, want %q on %s", errs, tt.message, tt.key)
			}
		})
	}
}

// Nested objects and arrays are written as Aerospike maps and lists, not
// strings: map operations work on the one, list_append extends the other.
func TestNestedValuesAreCDTs(t *testing.T) {
	srv := startServer(t, aerofake.Config{})
	update, tc := startTask(t, baseProps(srv))
	mustPut(t, update, rec("t", 0, 0, "k", map[string]any{
		"obj": map[string]any{"b": int64(2), "a": []any{"x", map[string]any{"n": 1.5}}},
		"arr": []any{int64(1), "two", []any{int64(3)}},
	}))
	r := stored(t, srv, "s", "k")
	if r == nil {
		t.Fatal("record k missing")
	}
	wantObj := map[any]any{"a": []any{"x", map[any]any{"n": 1.5}}, "b": int64(2)}
	if got := r.Bins["obj"]; !reflect.DeepEqual(got, wantObj) {
		t.Fatalf("obj = %#v (%T), want the map %#v", got, got, wantObj)
	}
	if got := r.Bins["arr"]; !reflect.DeepEqual(got, []any{int64(1), "two", []any{int64(3)}}) {
		t.Fatalf("arr = %#v (%T), want a list", got, got)
	}
	k, err := as.NewKey(srv.Namespace, srv.Set("s"), "k")
	if err != nil {
		t.Fatal(err)
	}
	res, err := srv.Client(t).Operate(nil, k, as.MapSizeOp("obj"))
	if err != nil || res.Bins["obj"] != 2 {
		t.Fatalf("map size of obj = %v, %v; want 2 (a map bin)", res, err)
	}
	appender, _ := startTask(t, baseProps(srv, KeyWriteMode, ModeListAppend, KeyBinsInclude, "arr"))
	mustPut(t, appender, rec("t", 0, 1, "k", map[string]any{"arr": "four"}))
	if got := stored(t, srv, "s", "k").Bins["arr"]; !reflect.DeepEqual(got, []any{int64(1), "two", []any{int64(3)}, "four"}) {
		t.Fatalf("arr after list_append = %#v", got)
	}
	if len(tc.Reports()) != 0 {
		t.Fatalf("reports: %v", tc.Reports())
	}
}
