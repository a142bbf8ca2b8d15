package aerofake_test

import (
	"errors"
	"reflect"
	"testing"

	as "github.com/aerospike/aerospike-client-go/v7"
	"github.com/aerospike/aerospike-client-go/v7/types"
)

// List append is the one list operation the test server models. The
// expected answers are the documented behaviour of Aerospike 8.1 (list
// operations reference: append creates the bin, answers the new size,
// refuses a bin of another type with BIN_TYPE_ERROR); they were not
// recorded from a real server.
func TestListAppend(t *testing.T) {
	_, c := testServer(t)
	k := mustKey(t, "test", "lists", "k")
	wp := as.NewWritePolicy(0, 0)
	steps := []struct {
		name     string
		ops      []*as.Operation
		wantCode types.ResultCode
		wantSize int
		want     []any
	}{
		{"append creates the bin", []*as.Operation{as.ListAppendOp("l", "a")}, types.OK, 1, []any{"a"}},
		{"append items keeps order", []*as.Operation{as.ListAppendOp("l", int64(2), "b")}, types.OK, 3, []any{"a", 2, "b"}},
		{"a list value is one element", []*as.Operation{as.ListAppendOp("l", []any{1, 2})}, types.OK, 4, []any{"a", 2, "b", []any{1, 2}}},
		{"nested maps are stored sorted", []*as.Operation{as.ListAppendOp("l", map[any]any{"z": 1, "a": 2})}, types.OK, 5, nil},
		{"a string bin refuses an append", []*as.Operation{as.PutOp(as.NewBin("s", "x")), as.ListAppendOp("s", 1)}, types.BIN_TYPE_ERROR, 0, nil},
		{"ordered lists are not modelled", []*as.Operation{as.ListAppendWithPolicyOp(as.NewListPolicy(as.ListOrderOrdered, as.ListWriteFlagsDefault), "o", 1)}, types.UNSUPPORTED_FEATURE, 0, nil},
		{"other list ops are not modelled", []*as.Operation{as.ListInsertOp("l", 0, 1)}, types.UNSUPPORTED_FEATURE, 0, nil},
	}
	for _, s := range steps {
		rec, err := c.Operate(wp, k, s.ops...)
		if s.wantCode != types.OK {
			var ae *as.AerospikeError
			if !errors.As(err, &ae) || ae.ResultCode != s.wantCode {
				t.Fatalf("%s: err = %v, want result code %v", s.name, err, s.wantCode)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if got := rec.Bins["l"]; got != s.wantSize {
			t.Fatalf("%s: size = %v (%T), want %d", s.name, got, got, s.wantSize)
		}
		if s.want == nil {
			continue
		}
		r, err := c.Get(nil, k, "l")
		if err != nil {
			t.Fatal(err)
		}
		if got := r.Bins["l"]; !reflect.DeepEqual(got, s.want) {
			t.Fatalf("%s: l = %#v, want %#v", s.name, got, s.want)
		}
	}
	r, err := c.Get(nil, k, "l", "s")
	if err != nil {
		t.Fatal(err)
	}
	l := r.Bins["l"].([]any)
	if len(l) != 5 {
		t.Fatalf("l = %#v, want 5 elements", l)
	}
	if m, ok := l[4].(map[any]any); !ok || m["z"] != 1 || m["a"] != 2 {
		t.Errorf("appended map = %#v", l[4])
	}
	if _, ok := r.Bins["s"]; ok {
		t.Errorf("a refused operate left bin s = %v", r.Bins["s"])
	}
}
