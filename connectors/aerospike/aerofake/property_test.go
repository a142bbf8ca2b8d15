package aerofake_test

import (
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"reflect"
	"testing"

	as "github.com/aerospike/aerospike-client-go/v7"
	"github.com/aerospike/aerospike-client-go/v7/types"
)

// Property test: random sequences of writes, deletes, increments, appends,
// touches, map operations and batches against the server and against a
// small in-test model of the documented semantics (§2.8, §5, §6) must agree
// on every result code, every read and the final contents.

type modelRecord struct {
	bins map[string]any // "a": int, "s": string, "m": map[string]int
	gen  uint32
}

type model struct{ recs map[int]*modelRecord }

// mop is one op of a model write.
type mop struct {
	kind  string // put, add, append, touch, mapput, mapinc, deleteall
	bin   string
	value any // int, string or nil for put; int for add/mapinc; string for append
	key   string
}

type writeCmd struct {
	key    int
	action as.RecordExistsAction
	gp     as.GenerationPolicy
	gen    uint32
	ops    []mop
}

func (w writeCmd) String() string {
	return fmt.Sprintf("write key=%d action=%v gp=%v gen=%d ops=%+v", w.key, w.action, w.gp, w.gen, w.ops)
}

func nextGen(g uint32) uint32 {
	if g == 65535 {
		return 1
	}
	return g + 1
}

func genOK(gp as.GenerationPolicy, want, cur uint32) bool {
	switch gp {
	case as.EXPECT_GEN_EQUAL:
		return want == cur
	case as.EXPECT_GEN_GT:
		return want > cur
	}
	return true
}

// write applies a command to the model and returns the expected result code.
func (m *model) write(w writeCmd) types.ResultCode {
	replacing := w.action == as.REPLACE || w.action == as.REPLACE_ONLY
	mustNotCreate := w.action == as.UPDATE_ONLY || w.action == as.REPLACE_ONLY
	for _, o := range w.ops {
		if replacing && (o.kind == "add" || o.kind == "append" || o.kind == "mapput" || o.kind == "mapinc" ||
			o.kind == "deleteall" || o.kind == "touch" || (o.kind == "put" && o.value == nil)) {
			return types.PARAMETER_ERROR
		}
		if o.kind == "touch" {
			mustNotCreate = true
		}
	}
	rec := m.recs[w.key]
	if rec == nil && mustNotCreate {
		return types.KEY_NOT_FOUND_ERROR
	}
	if rec != nil && w.action == as.CREATE_ONLY {
		return types.KEY_EXISTS_ERROR
	}
	var cur uint32
	if rec != nil {
		cur = rec.gen
	}
	if !genOK(w.gp, w.gen, cur) {
		return types.GENERATION_ERROR
	}
	bins := map[string]any{}
	if rec != nil && !replacing {
		for k, v := range rec.bins {
			if mm, ok := v.(map[string]int); ok {
				v = maps.Clone(mm)
			}
			bins[k] = v
		}
	}
	for _, o := range w.ops {
		switch o.kind {
		case "put":
			if o.value == nil {
				delete(bins, o.bin)
			} else {
				bins[o.bin] = o.value
			}
		case "add":
			switch v := bins[o.bin].(type) {
			case nil:
				bins[o.bin] = o.value
			case int:
				bins[o.bin] = v + o.value.(int)
			default:
				return types.BIN_TYPE_ERROR
			}
		case "append":
			switch v := bins[o.bin].(type) {
			case nil:
				bins[o.bin] = o.value
			case string:
				bins[o.bin] = v + o.value.(string)
			default:
				return types.BIN_TYPE_ERROR
			}
		case "mapput", "mapinc":
			var mm map[string]int
			switch v := bins[o.bin].(type) {
			case nil:
				mm = map[string]int{}
			case map[string]int:
				mm = v
			default:
				return types.BIN_TYPE_ERROR
			}
			if o.kind == "mapput" {
				mm[o.key] = o.value.(int)
			} else {
				mm[o.key] += o.value.(int)
			}
			bins[o.bin] = mm
		case "deleteall":
			bins = map[string]any{}
		}
	}
	if len(bins) == 0 {
		if rec == nil {
			return types.KEY_NOT_FOUND_ERROR
		}
		delete(m.recs, w.key)
		return types.OK
	}
	m.recs[w.key] = &modelRecord{bins: bins, gen: nextGen(cur)}
	return types.OK
}

func (m *model) delete(key int, gp as.GenerationPolicy, gen uint32) types.ResultCode {
	rec := m.recs[key]
	if rec == nil {
		return types.KEY_NOT_FOUND_ERROR
	}
	if !genOK(gp, gen, rec.gen) {
		return types.GENERATION_ERROR
	}
	delete(m.recs, key)
	return types.OK
}

func toOps(ops []mop) []*as.Operation {
	out := make([]*as.Operation, 0, len(ops))
	for _, o := range ops {
		switch o.kind {
		case "put":
			out = append(out, as.PutOp(as.NewBin(o.bin, o.value)))
		case "add":
			out = append(out, as.AddOp(as.NewBin(o.bin, o.value)))
		case "append":
			out = append(out, as.AppendOp(as.NewBin(o.bin, o.value)))
		case "touch":
			out = append(out, as.TouchOp())
		case "mapput":
			out = append(out, as.MapPutOp(as.DefaultMapPolicy(), o.bin, o.key, o.value))
		case "mapinc":
			out = append(out, as.MapIncrementOp(as.DefaultMapPolicy(), o.bin, o.key, o.value))
		case "deleteall":
			out = append(out, as.DeleteOp())
		}
	}
	return out
}

func resultCode(err error) types.ResultCode {
	if err == nil {
		return types.OK
	}
	var ae as.Error
	if errors.As(err, &ae) {
		for _, rc := range []types.ResultCode{types.KEY_NOT_FOUND_ERROR, types.GENERATION_ERROR,
			types.PARAMETER_ERROR, types.KEY_EXISTS_ERROR, types.BIN_TYPE_ERROR} {
			if ae.Matches(rc) {
				return rc
			}
		}
	}
	return types.ResultCode(-1000)
}

// normalize converts a client bin map into the model's value shapes.
func normalize(bins as.BinMap) map[string]any {
	out := map[string]any{}
	for k, v := range bins {
		if mv, ok := v.(map[any]any); ok {
			mm := map[string]int{}
			for mk, vv := range mv {
				mm[mk.(string)] = vv.(int)
			}
			v = mm
		}
		out[k] = v
	}
	return out
}

type propGen struct {
	rng *rand.Rand
	m   *model
}

func (g *propGen) key() int { return g.rng.IntN(6) }

func (g *propGen) genPolicy(key int) (as.GenerationPolicy, uint32) {
	cur := uint32(0)
	if r := g.m.recs[key]; r != nil {
		cur = r.gen
	}
	gens := []uint32{cur, cur, cur + 1, 0, uint32(g.rng.IntN(4))}
	if cur > 0 {
		gens = append(gens, cur-1)
	}
	gen := gens[g.rng.IntN(len(gens))]
	switch g.rng.IntN(6) {
	case 0, 1:
		return as.EXPECT_GEN_EQUAL, gen
	case 2:
		return as.EXPECT_GEN_GT, gen
	}
	return as.NONE, 0
}

func (g *propGen) op() mop {
	switch g.rng.IntN(10) {
	case 0, 1:
		return mop{kind: "put", bin: "a", value: g.rng.IntN(100)}
	case 2:
		return mop{kind: "put", bin: "s", value: fmt.Sprint("v", g.rng.IntN(10))}
	case 3:
		bins := []string{"a", "s", "m"}
		return mop{kind: "put", bin: bins[g.rng.IntN(3)], value: nil}
	case 4:
		return mop{kind: "add", bin: []string{"a", "a", "s"}[g.rng.IntN(3)], value: g.rng.IntN(5) - 2}
	case 5:
		return mop{kind: "append", bin: []string{"s", "s", "a"}[g.rng.IntN(3)], value: "x"}
	case 6:
		return mop{kind: "mapput", bin: []string{"m", "m", "a"}[g.rng.IntN(3)], key: fmt.Sprint("k", g.rng.IntN(3)), value: g.rng.IntN(9)}
	case 7:
		return mop{kind: "mapinc", bin: "m", key: fmt.Sprint("k", g.rng.IntN(3)), value: g.rng.IntN(3) + 1}
	case 8:
		return mop{kind: "touch"}
	}
	return mop{kind: "deleteall"}
}

func (g *propGen) write(key int) writeCmd {
	w := writeCmd{key: key}
	w.action = []as.RecordExistsAction{as.UPDATE, as.UPDATE, as.UPDATE, as.UPDATE, as.UPDATE_ONLY,
		as.REPLACE, as.REPLACE_ONLY, as.CREATE_ONLY}[g.rng.IntN(8)]
	w.gp, w.gen = g.genPolicy(key)
	n := 1 + g.rng.IntN(3)
	for i := 0; i < n; i++ {
		w.ops = append(w.ops, g.op())
	}
	if w.ops[0].kind == "deleteall" && n == 1 && g.rng.IntN(2) == 0 {
		w.ops = append(w.ops, mop{kind: "mapput", bin: "m", key: "pos", value: 1})
	}
	return w
}

func TestPropertyRandomOpsMatchModel(t *testing.T) {
	for seed := uint64(1); seed <= 4; seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			srv, c := testServer(t)
			m := &model{recs: map[int]*modelRecord{}}
			g := &propGen{rng: rand.New(rand.NewPCG(seed, 99)), m: m}
			k := func(i int) *as.Key { return mustKey(t, "test", "prop", i) }
			seen := map[types.ResultCode]int{}
			check := func(step int, what string, got, want types.ResultCode) {
				t.Helper()
				if got != want {
					t.Fatalf("step %d %s: result %v, model says %v", step, what, got, want)
				}
				seen[got]++
			}
			for step := 0; step < 800; step++ {
				switch r := g.rng.IntN(20); {
				case r < 11:
					w := g.write(g.key())
					p := writePolicy(func(p *as.WritePolicy) {
						p.RecordExistsAction, p.GenerationPolicy, p.Generation = w.action, w.gp, w.gen
					})
					_, err := c.Operate(p, k(w.key), toOps(w.ops)...)
					check(step, w.String(), resultCode(err), m.write(w))
				case r < 13:
					key := g.key()
					gp, gen := g.genPolicy(key)
					existed, err := c.Delete(genPolicy(gp, gen), k(key))
					got := resultCode(err)
					if err == nil && !existed {
						got = types.KEY_NOT_FOUND_ERROR
					}
					check(step, fmt.Sprintf("delete %d gp=%v gen=%d", key, gp, gen), got, m.delete(key, gp, gen))
				case r < 15:
					// A batch of writes and deletes on distinct keys.
					perm := g.rng.Perm(6)[:2+g.rng.IntN(4)]
					rows := make([]as.BatchRecordIfc, 0, len(perm))
					want := make([]types.ResultCode, 0, len(perm))
					for _, key := range perm {
						if g.rng.IntN(4) == 0 {
							gp, gen := g.genPolicy(key)
							dp := as.NewBatchDeletePolicy()
							dp.GenerationPolicy, dp.Generation = gp, gen
							rows = append(rows, as.NewBatchDelete(dp, k(key)))
							want = append(want, m.delete(key, gp, gen))
							continue
						}
						w := g.write(key)
						wp := as.NewBatchWritePolicy()
						wp.RecordExistsAction, wp.GenerationPolicy, wp.Generation = w.action, w.gp, w.gen
						rows = append(rows, as.NewBatchWrite(wp, k(key), toOps(w.ops)...))
						want = append(want, m.write(w))
					}
					if err := c.BatchOperate(nil, rows); err != nil && !errors.Is(err, as.ErrKeyNotFound) {
						var ae as.Error
						if !errors.As(err, &ae) || ae.Matches(types.TIMEOUT, types.NETWORK_ERROR, types.SERVER_ERROR) {
							t.Fatalf("step %d batch: %v", step, err)
						}
					}
					for i, row := range rows {
						check(step, fmt.Sprintf("batch row %d (%v)", i, row), row.BatchRec().ResultCode, want[i])
					}
				default:
					key := g.key()
					r, err := c.Get(nil, k(key))
					rec := m.recs[key]
					if rec == nil {
						check(step, fmt.Sprint("get ", key), resultCode(err), types.KEY_NOT_FOUND_ERROR)
						continue
					}
					noErr(t, err)
					if got := normalize(r.Bins); !reflect.DeepEqual(got, rec.bins) || r.Generation != rec.gen {
						t.Fatalf("step %d get %d: gen %d bins %#v; model gen %d bins %#v", step, key, r.Generation, got, rec.gen, rec.bins)
					}
				}
			}
			// The run must have exercised every outcome class, or it proves little.
			for _, rc := range []types.ResultCode{types.OK, types.KEY_NOT_FOUND_ERROR, types.GENERATION_ERROR,
				types.PARAMETER_ERROR, types.KEY_EXISTS_ERROR, types.BIN_TYPE_ERROR} {
				if seen[rc] == 0 {
					t.Fatalf("result %v never occurred (outcomes %v)", rc, seen)
				}
			}
			// Final state: a scan sees exactly the model.
			rs, err := c.ScanAll(nil, "test", "prop")
			noErr(t, err)
			scanned := 0
			for res := range rs.Results() {
				noErr(t, res.Err)
				scanned++
			}
			if scanned != len(m.recs) || srv.Count("test", "prop") != len(m.recs) {
				t.Fatalf("scan saw %d records, server counts %d, model has %d", scanned, srv.Count("test", "prop"), len(m.recs))
			}
			for key, rec := range m.recs {
				r := mustGet(t, c, k(key))
				if got := normalize(r.Bins); !reflect.DeepEqual(got, rec.bins) || r.Generation != rec.gen {
					t.Fatalf("final key %d: gen %d bins %#v; model gen %d bins %#v", key, r.Generation, got, rec.gen, rec.bins)
				}
			}
			t.Logf("%d records at the end; outcomes %v", len(m.recs), seen)
		})
	}
}
