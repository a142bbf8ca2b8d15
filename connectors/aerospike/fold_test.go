package aerospike

import (
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/connectd/connectd/connectors/aerospike/aerofake"
	"github.com/connectd/connectd/framework/sdk"
)

// randomRecords generates a stream for a few keys with every kind of
// field change: integer and float numbers (floats are multiples of 0.5, so
// their sums are exact), strings, nulls and tombstones, including type
// changes that make the server refuse an increment.
func randomRecords(r *rand.Rand, n int) []*sdk.SinkRecord {
	var out []*sdk.SinkRecord
	for i := 0; i < n; i++ {
		p := int32(r.IntN(2))
		k := keyName(r.IntN(4))
		var v any
		if r.IntN(10) > 0 {
			fields := map[string]any{}
			for _, f := range []string{"a", "b", "c"} {
				switch r.IntN(7) {
				case 0, 1, 2:
					fields[f] = int64(r.IntN(10))
				case 3:
					fields[f] = float64(r.IntN(10)) / 2
				case 4:
					fields[f] = "s" + keyName(r.IntN(3))
				case 5:
					fields[f] = nil
				}
			}
			v = fields
		}
		out = append(out, rec("t", p, int64(i), k, v))
	}
	// Offsets must grow per partition; they already do (i grows).
	return out
}

// Folding a batch gives the same records and the same reports as applying
// the records one put at a time.
func TestFoldEquivalentToOneByOne(t *testing.T) {
	for _, mode := range []string{ModeReplace, ModeUpdate, ModeIncrement} {
		for seed := uint64(0); seed < 8; seed++ {
			t.Run(mode+"/"+keyName(int(seed)), func(t *testing.T) {
				recs := randomRecords(rand.New(rand.NewPCG(seed, 77)), 120)
				one := startServer(t, aerofake.Config{})
				batched := startServer(t, aerofake.Config{})
				taskOne, tcOne := startTask(t, baseProps(one, KeyWriteMode, mode))
				taskBatched, tcBatched := startTask(t, baseProps(batched, KeyWriteMode, mode))
				for _, r := range recs {
					mustPut(t, taskOne, r)
				}
				r := rand.New(rand.NewPCG(seed, 78))
				for start := 0; start < len(recs); {
					end := min(start+1+r.IntN(60), len(recs))
					mustPut(t, taskBatched, recs[start:end]...)
					start = end
				}
				// Compared key by key through the client: on an external
				// cluster the two sets differ, and so do the digests.
				for i := range 4 {
					a, b := stored(t, one, "s", keyName(i)), stored(t, batched, "s", keyName(i))
					if (a == nil) != (b == nil) {
						t.Fatalf("%s: one by one %+v, batched %+v", keyName(i), a, b)
					}
					if a != nil && !reflect.DeepEqual(a.Bins, b.Bins) {
						t.Errorf("%s: one by one %v, batched %v", keyName(i), a.Bins, b.Bins)
					}
				}
				offsets := func(rs []reported) []int64 {
					var o []int64
					for _, r := range rs {
						o = append(o, r.rec.OriginalOffset)
					}
					slices.Sort(o)
					return o
				}
				if x, y := offsets(tcOne.Reports()), offsets(tcBatched.Reports()); !slices.Equal(x, y) {
					t.Errorf("reported offsets one by one %v, batched %v", x, y)
				}
			})
		}
	}
}

func TestFoldUnits(t *testing.T) {
	m := func(off int64, bins ...bin) *mapped { return &mapped{pos: "t-0", offset: off, bins: bins} }
	tomb := &mapped{pos: "t-0", offset: 9, tombstone: true}

	f := newFold(ModeIncrement)
	if !f.add(m(1, bin{"n", int64(2)})) || !f.add(m(2, bin{"n", int64(3)})) {
		t.Fatal("integer increments did not fold")
	}
	if f.incs["n"] != int64(5) || f.clear {
		t.Fatalf("fold = %+v", f)
	}
	if f.add(m(3, bin{"n", 1.5})) {
		t.Fatal("a float increment folded onto an integer one")
	}
	if len(f.recs) != 2 || f.pos["t-0"] != 2 {
		t.Fatal("a refused record changed the fold")
	}
	if f.add(tomb) {
		t.Fatal("a tombstone folded onto increments of stored bins")
	}
	f = newFold(ModeIncrement)
	f.add(tomb)
	f.add(m(10, bin{"n", int64(4)}))
	if !f.clear || f.sets["n"] != int64(4) || len(f.incs) != 0 {
		t.Fatalf("increment after tombstone = %+v, want a set of 4 on a cleared record", f)
	}

	f = newFold(ModeIncrement)
	f.add(m(1, bin{"s", "x"}))
	if f.add(m(2, bin{"s", int64(1)})) {
		t.Fatal("an increment folded onto a string")
	}
	f = newFold(ModeIncrement)
	f.add(m(1, bin{"s", int64(1)}))
	if f.add(m(2, bin{"s", "x"})) || f.add(m(2, bin{"s", nil})) {
		t.Fatal("a set folded onto an increment of a stored bin")
	}
	f = newFold(ModeIncrement)
	f.add(m(1, bin{"s", nil}))
	f.add(m(2, bin{"s", int64(1)}))
	if f.sets["s"] != int64(1) {
		t.Fatalf("increment of a deleted bin = %v, want a set of 1", f.sets["s"])
	}
	f = newFold(ModeReplace)
	f.add(m(1, bin{"a", "x"}, bin{"b", "y"}))
	f.add(m(2, bin{"a", "z"}, bin{"c", nil}))
	if !f.clear || !reflect.DeepEqual(f.sets, map[string]any{"a": "z"}) {
		t.Fatalf("replace fold sets = %v", f.sets)
	}
}
