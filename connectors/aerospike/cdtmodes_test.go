package aerospike

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	as "github.com/aerospike/aerospike-client-go/v7"

	"github.com/connectd/connectd/connectors/aerospike/aerofake"
	"github.com/connectd/connectd/connectors/aerospike/aerotest"
	"github.com/connectd/connectd/framework/sdk"
)

// cdtStream is a deterministic workload for the list and map modes:
// partitions × perPartition records over nKeys keys. In list_append mode
// every record appends its tag "<p>:<o>" to bin "l" (every third record as
// a list of the tag and a copy "<p>:<o>+"); in map_increment mode it adds
// an amount to the counter of item "i<n>" in map bin "qty"; in map_put mode
// it puts its tag under the partition's item "p<p>" of map bin "note", so
// the last offset of each partition must win.
type cdtStream struct {
	mode string
	recs map[int32][]*sdk.SinkRecord
	// tags: key → partition → the list elements in offset order.
	tags map[string]map[int32][]string
	// sums: key → item → expected counter.
	sums map[string]map[string]int64
	// notes: key → item → expected map_put value.
	notes map[string]map[string]string
}

func newCDTStream(mode string, partitions, perPartition, nKeys int, seed uint64) *cdtStream {
	r := rand.New(rand.NewPCG(seed, 3))
	s := &cdtStream{mode: mode, recs: map[int32][]*sdk.SinkRecord{}, tags: map[string]map[int32][]string{}, sums: map[string]map[string]int64{}, notes: map[string]map[string]string{}}
	for p := int32(0); p < int32(partitions); p++ {
		for o := int64(0); o < int64(perPartition); o++ {
			k := keyName(r.IntN(nKeys))
			var v map[string]any
			switch mode {
			case ModeListAppend:
				tag := fmt.Sprintf("%d:%d", p, o)
				if s.tags[k] == nil {
					s.tags[k] = map[int32][]string{}
				}
				if o%3 == 0 {
					v = map[string]any{"l": []any{tag, tag + "+"}}
					s.tags[k][p] = append(s.tags[k][p], tag, tag+"+")
				} else {
					v = map[string]any{"l": tag}
					s.tags[k][p] = append(s.tags[k][p], tag)
				}
			case ModeMapIncrement:
				item := "i" + strconv.Itoa(r.IntN(3))
				amt := int64(r.IntN(100) + 1)
				v = map[string]any{"item": item, "qty": amt}
				if s.sums[k] == nil {
					s.sums[k] = map[string]int64{}
				}
				s.sums[k][item] += amt
			case ModeMapPut:
				item, tag := fmt.Sprintf("p%d", p), fmt.Sprintf("%d:%d", p, o)
				v = map[string]any{"item": item, "note": tag}
				if s.notes[k] == nil {
					s.notes[k] = map[string]string{}
				}
				s.notes[k][item] = tag
			}
			s.recs[p] = append(s.recs[p], rec("cdt", p, o, k, v))
		}
	}
	return s
}

func (s *cdtStream) props(srv *aerotest.Cluster, kv ...string) map[string]string {
	kv = append([]string{KeyWriteMode, s.mode}, kv...)
	if s.mode == ModeMapIncrement || s.mode == ModeMapPut {
		kv = append(kv, KeyMapKeyField, "item")
	}
	return baseProps(srv, kv...)
}

func (s *cdtStream) total() int {
	n := 0
	for _, r := range s.recs {
		n += len(r)
	}
	return n
}

func (s *cdtStream) batches(r *rand.Rand, maxBatch int) [][]*sdk.SinkRecord {
	return (&counterStream{recs: s.recs}).batches(r, maxBatch)
}

// check asserts exact results: every list holds each element once, each
// partition's elements in offset order; every counter holds its sum.
func (s *cdtStream) check(t *testing.T, srv *aerotest.Cluster) {
	t.Helper()
	for k, parts := range s.tags {
		r := stored(t, srv, "s", k)
		if r == nil {
			t.Fatalf("key %s missing", k)
		}
		l, ok := r.Bins["l"].([]any)
		if !ok {
			t.Fatalf("key %s: bin l = %#v, want a list", k, r.Bins["l"])
		}
		got := map[int32][]string{}
		for _, e := range l {
			tag := e.(string)
			p, _ := strconv.Atoi(tag[:strings.IndexByte(tag, ':')])
			got[int32(p)] = append(got[int32(p)], tag)
		}
		for p, want := range parts {
			if !slices.Equal(got[p], want) {
				t.Errorf("key %s partition %d: list elements %v, want %v", k, p, got[p], want)
			}
		}
		if len(got) != len(parts) {
			t.Errorf("key %s: elements of partitions %v, want %d partitions", k, got, len(parts))
		}
	}
	for k, items := range s.sums {
		r := stored(t, srv, "s", k)
		if r == nil {
			t.Fatalf("key %s missing", k)
		}
		want := map[any]any{}
		for item, n := range items {
			want[item] = n
		}
		if got := r.Bins["qty"]; !reflect.DeepEqual(got, want) {
			t.Errorf("key %s: qty = %v, want %v", k, got, want)
		}
		if _, ok := r.Bins["item"]; ok {
			t.Errorf("key %s: the map key field was written as a bin", k)
		}
	}
	for k, items := range s.notes {
		r := stored(t, srv, "s", k)
		if r == nil {
			t.Fatalf("key %s missing", k)
		}
		want := map[any]any{}
		for item, tag := range items {
			want[item] = tag
		}
		if got := r.Bins["note"]; !reflect.DeepEqual(got, want) {
			t.Errorf("key %s: note = %v, want %v", k, got, want)
		}
	}
}

var cdtReplayModes = []string{ModeListAppend, ModeMapPut, ModeMapIncrement}

// Batches delivered again (a consumer's redelivery after a crash before a
// commit) append and count nothing twice.
func TestCDTModesExactUnderReplay(t *testing.T) {
	for _, mode := range cdtReplayModes {
		t.Run(mode, func(t *testing.T) {
			srv := startServer(t, aerofake.Config{})
			s := newCDTStream(mode, 3, 200, 15, 5)
			task, tc := startTask(t, s.props(srv))
			r := rand.New(rand.NewPCG(42, 43))
			batches := s.batches(r, 40)
			for i, b := range batches {
				mustPut(t, task, b...)
				mustPut(t, task, b...) // the same batch twice
				if r.IntN(3) == 0 {
					for _, old := range batches[r.IntN(i+1) : i+1] {
						mustPut(t, task, old...)
					}
				}
			}
			s.check(t, srv)
			if n := tc.counter(t, "connectd_aerospike_sink_records_written_total"); n != float64(s.total()) {
				t.Errorf("records written = %v, want %d", n, s.total())
			}
			if n := tc.counter(t, "connectd_aerospike_sink_duplicates_skipped_total"); n < float64(s.total()) {
				t.Errorf("duplicates skipped = %v, want at least %d (every batch was delivered twice)", n, s.total())
			}
			if len(tc.Reports()) != 0 {
				t.Fatalf("unexpected reports: %v", tc.Reports())
			}
		})
	}
}

// Two tasks apply the same stream at the same time: each element is
// appended, each amount counted, once.
func TestCDTModesConcurrentWritersExact(t *testing.T) {
	for _, mode := range cdtReplayModes {
		t.Run(mode, func(t *testing.T) {
			srv := startServer(t, aerofake.Config{})
			s := newCDTStream(mode, 4, 150, 6, 9)
			props := s.props(srv, KeyRetryAttempts, "1000")
			a, tca := startTask(t, props)
			b, tcb := startTask(t, props)
			var wg sync.WaitGroup
			for i, task := range []*SinkTask{a, b} {
				wg.Add(1)
				go func() {
					defer wg.Done()
					r := rand.New(rand.NewPCG(uint64(i), 7))
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
			if written != float64(s.total()) {
				t.Errorf("records written by both tasks = %v, want %d", written, s.total())
			}
		})
	}
}

// The zombie's write is held up on the server after it read the records;
// the live task applies the same batch meanwhile. The zombie's late write
// fails its generation (or exists) check, and on the re-read it finds
// every record applied.
func TestCDTModesZombieWriteLoses(t *testing.T) {
	tests := []struct {
		mode  string
		props []string
		batch []*sdk.SinkRecord
		first *sdk.SinkRecord // applied by the live task before, to key "a"
		want  map[string]map[string]any
	}{
		{
			mode: ModeListAppend,
			batch: []*sdk.SinkRecord{
				rec("t", 0, 0, "a", map[string]any{"l": "x"}),
				rec("t", 0, 1, "b", map[string]any{"l": []any{"y", "z"}}),
				rec("t", 0, 2, "a", map[string]any{"l": []any{"w"}}),
			},
			first: rec("t", 1, 0, "a", map[string]any{"l": "first"}),
			want: map[string]map[string]any{
				"a": {"l": []any{"first", "x", "w"}},
				"b": {"l": []any{"y", "z"}},
			},
		},
		{
			mode:  ModeMapIncrement,
			props: []string{KeyMapKeyField, "item"},
			batch: []*sdk.SinkRecord{
				rec("t", 0, 0, "a", map[string]any{"item": "i1", "qty": int64(5)}),
				rec("t", 0, 1, "b", map[string]any{"item": "i1", "qty": int64(7)}),
				rec("t", 0, 2, "a", map[string]any{"item": "i2", "qty": int64(1), "note": "n"}),
			},
			first: rec("t", 1, 0, "a", map[string]any{"item": "i1", "qty": int64(100)}),
			want: map[string]map[string]any{
				"a": {"qty": map[any]any{"i1": int64(105), "i2": int64(1)}, "note": map[any]any{"i2": "n"}},
				"b": {"qty": map[any]any{"i1": int64(7)}},
			},
		},
		{
			mode:  ModeMapPut,
			props: []string{KeyMapKeyField, "item"},
			batch: []*sdk.SinkRecord{
				rec("t", 0, 0, "a", map[string]any{"item": "i1", "v": "x"}),
				rec("t", 0, 1, "b", map[string]any{"item": "i1", "v": "y"}),
				rec("t", 0, 2, "a", map[string]any{"item": "i2", "v": "z"}),
			},
			first: rec("t", 1, 0, "a", map[string]any{"item": "i0", "v": "first"}),
			want: map[string]map[string]any{
				"a": {"v": map[any]any{"i0": "first", "i1": "x", "i2": "z"}},
				"b": {"v": map[any]any{"i1": "y"}},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.mode, func(t *testing.T) {
			srv := startServer(t, aerofake.Config{})
			fake := srv.NeedFake(t, "fault injection: the zombie's write is held up on the server")
			props := baseProps(srv, append([]string{KeyWriteMode, tt.mode}, tt.props...)...)
			zombie, tcz := startTask(t, props)
			live, _ := startTask(t, props)
			mustPut(t, live, tt.first) // "a" exists, "b" does not
			fake.InjectFault(aerofake.Fault{Ops: aerofake.OpWrite, Times: 1, Delay: 400 * time.Millisecond})
			done := make(chan error, 1)
			go func() { done <- zombie.Put(context.Background(), tt.batch) }()
			waitFor(t, func() bool { return len(fake.PendingFaults()) == 0 })
			mustPut(t, live, tt.batch...)
			if err := <-done; err != nil {
				t.Fatalf("zombie put: %v", err)
			}
			for k, bins := range tt.want {
				r := stored(t, srv, "s", k)
				if r == nil {
					t.Fatalf("key %s missing", k)
				}
				for name, want := range bins {
					if got := r.Bins[name]; !reflect.DeepEqual(got, want) {
						t.Errorf("%s.%s = %#v, want %#v", k, name, got, want)
					}
				}
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
		})
	}
}

// randomCDTRecords generates list and map mode records for a few keys,
// with values the server refuses now and then: map increments of an entry
// holding a string or a float, appends to a bin holding a string (seeded).
func randomCDTRecords(r *rand.Rand, mode string, n int) []*sdk.SinkRecord {
	var out []*sdk.SinkRecord
	for i := 0; i < n; i++ {
		k := keyName(r.IntN(4))
		var v any
		if r.IntN(12) > 0 {
			fields := map[string]any{}
			switch mode {
			case ModeListAppend:
				for _, f := range []string{"a", "b"} {
					switch r.IntN(4) {
					case 0:
						fields[f] = int64(r.IntN(10))
					case 1:
						fields[f] = "s" + strconv.Itoa(i)
					case 2:
						fields[f] = []any{int64(i), map[string]any{"z": int64(1), "a": "x"}}
					}
				}
			default:
				fields["item"] = "i" + strconv.Itoa(r.IntN(3))
				for _, f := range []string{"qty", "note"} {
					switch r.IntN(6) {
					case 0, 1, 2:
						fields[f] = int64(r.IntN(10))
					case 3:
						fields[f] = float64(r.IntN(10)) / 2
					case 4:
						fields[f] = "s" + strconv.Itoa(i)
					case 5:
						fields[f] = nil
					}
				}
			}
			v = fields
		}
		out = append(out, rec("t", int32(r.IntN(2)), int64(i), k, v))
	}
	return out
}

// Writing the records of a key in one operate gives the same records and
// the same reports as one put per record.
func TestCDTFoldEquivalentToOneByOne(t *testing.T) {
	for _, mode := range []string{ModeListAppend, ModeMapPut, ModeMapIncrement} {
		for seed := uint64(0); seed < 6; seed++ {
			t.Run(mode+"/"+keyName(int(seed)), func(t *testing.T) {
				recs := randomCDTRecords(rand.New(rand.NewPCG(seed, 11)), mode, 120)
				var servers [2]*aerotest.Cluster
				var tasks [2]*SinkTask
				var tcs [2]*taskCtx
				for i := range servers {
					servers[i] = startServer(t, aerofake.Config{})
					// k0's bin b holds a string: appends to it are refused.
					k, err := as.NewKey(servers[i].Namespace, servers[i].Set("s"), "k0")
					if err != nil {
						t.Fatal(err)
					}
					if err := servers[i].Client(t).PutBins(nil, k, as.NewBin("b", "str"), as.NewBin("kafka_pos", map[any]any{})); err != nil {
						t.Fatal(err)
					}
					tasks[i], tcs[i] = startTask(t, baseProps(servers[i], KeyWriteMode, mode, KeyMapKeyField, "item"))
				}
				for _, r := range recs {
					mustPut(t, tasks[0], r)
				}
				r := rand.New(rand.NewPCG(seed, 12))
				for start := 0; start < len(recs); {
					end := min(start+1+r.IntN(60), len(recs))
					mustPut(t, tasks[1], recs[start:end]...)
					start = end
				}
				sameRecords(t, servers[0], servers[1], "s", 4)
				offsets := func(rs []reported) []int64 {
					var o []int64
					for _, r := range rs {
						o = append(o, r.rec.OriginalOffset)
					}
					slices.Sort(o)
					return o
				}
				x, y := offsets(tcs[0].Reports()), offsets(tcs[1].Reports())
				if !slices.Equal(x, y) {
					t.Errorf("reported offsets one by one %v, batched %v", x, y)
				}
				if mode != ModeMapPut && len(x) == 0 {
					t.Error("no record was refused; the workload should make the server refuse some")
				}
			})
		}
	}
}

// Records the list and map modes cannot apply are reported with the field
// and the reason; nothing of such a record is written, so a replay cannot
// apply part of it twice.
func TestCDTModesBadInput(t *testing.T) {
	tests := []struct {
		name  string
		mode  string
		value map[string]any
		want  string // in the reported error
	}{
		{"null append", ModeListAppend, map[string]any{"ok": "x", "l": nil}, `field "l": null cannot be appended`},
		{"null element", ModeListAppend, map[string]any{"ok": "x", "l": []any{"a", nil}}, `field "l": element 1 is null`},
		{"unsigned out of range", ModeListAppend, map[string]any{"ok": "x", "l": uint64(1 << 63)}, `field "l": unsigned integer`},
		{"append to a string bin", ModeListAppend, map[string]any{"ok": "x", "s": "y"}, "result code 12 BIN_TYPE_ERROR"},
		{"map key missing", ModeMapIncrement, map[string]any{"ok": int64(1)}, `map key field "item" is missing`},
		{"map key null", ModeMapPut, map[string]any{"item": nil, "ok": int64(1)}, `map key field "item" is null`},
		{"map key a float", ModeMapIncrement, map[string]any{"item": 1.5, "ok": int64(1)}, `map key field "item" has type non-integer number`},
		{"map key an object", ModeMapPut, map[string]any{"item": map[string]any{"a": "b"}, "ok": int64(1)}, `map key field "item" has type object`},
		{"map put into a string bin", ModeMapPut, map[string]any{"item": "i", "ok": int64(1), "s": int64(2)}, "result code 12 BIN_TYPE_ERROR"},
		{"map increment of a string entry", ModeMapIncrement, map[string]any{"item": "str", "ok": int64(1), "m": int64(2)}, "result code"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := startServer(t, aerofake.Config{})
			k, err := as.NewKey(srv.Namespace, srv.Set("s"), "k")
			if err != nil {
				t.Fatal(err)
			}
			// A record the sink wrote before: bin s a string, bin m a map
			// whose entry "str" is a string.
			seed := []*as.Bin{as.NewBin("s", "str"), as.NewBin("m", map[any]any{"str": "x"}), as.NewBin("kafka_pos", map[any]any{})}
			if err := srv.Client(t).PutBins(nil, k, seed...); err != nil {
				t.Fatal(err)
			}
			task, tc := startTask(t, baseProps(srv, KeyWriteMode, tt.mode, KeyMapKeyField, "item"))
			before := stored(t, srv, "s", "k")
			bad := rec("t", 0, 5, "k", tt.value)
			for range 2 { // delivered, then replayed
				mustPut(t, task, bad)
			}
			reps := tc.Reports()
			if len(reps) != 2 {
				t.Fatalf("%d reports, want 2 (one per delivery): %v", len(reps), reps)
			}
			for _, r := range reps {
				if msg := r.err.Error(); !strings.Contains(msg, tt.want) || !strings.Contains(msg, "t-0@5") {
					t.Errorf("report = %v, want %q and the record position", r.err, tt.want)
				}
			}
			after := stored(t, srv, "s", "k")
			if !reflect.DeepEqual(before.Bins, after.Bins) || before.Generation != after.Generation {
				t.Errorf("the refused record changed the stored one: %v (gen %d) → %v (gen %d)", before.Bins, before.Generation, after.Bins, after.Generation)
			}
			// The next record of the partition is written normally.
			good := map[string]any{"ok": "y"}
			if tt.mode != ModeListAppend {
				good = map[string]any{"item": "i", "ok": int64(3)}
			}
			mustPut(t, task, rec("t", 0, 6, "k", good))
			if got := positionsOf(t, stored(t, srv, "s", "k"), "kafka_pos")["t-0"]; got != 6 {
				t.Errorf("position after the good record = %d, want 6", got)
			}
		})
	}
}

func TestCDTModesConfig(t *testing.T) {
	srv := startServer(t, aerofake.Config{})
	tests := []struct {
		name    string
		kv      []string
		key     string // "" = valid
		message string
	}{
		{"list_append", []string{KeyWriteMode, ModeListAppend}, "", ""},
		{"map_put", []string{KeyWriteMode, ModeMapPut, KeyMapKeyField, "a.b"}, "", ""},
		{"blind list_append", []string{KeyWriteMode, ModeListAppend, KeyEffectivelyOne, "false"}, KeyWriteMode, "needs effectively.once=true"},
		{"blind map_increment", []string{KeyWriteMode, ModeMapIncrement, KeyMapKeyField, "a", KeyEffectivelyOne, "false"}, KeyWriteMode, "needs effectively.once=true"},
		{"blind map_put", []string{KeyWriteMode, ModeMapPut, KeyMapKeyField, "a", KeyEffectivelyOne, "false"}, "", ""},
		{"map mode without key field", []string{KeyWriteMode, ModeMapIncrement}, KeyMapKeyField, "needs map.key.field"},
		{"empty path element", []string{KeyWriteMode, ModeMapPut, KeyMapKeyField, "a..b"}, KeyMapKeyField, "empty path element"},
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

// sameRecords asserts that set holds the same records on one and batched:
// as many of them, and the same bins for each of keys k0..k<nKeys-1>.
// Compared key by key through the client: on an external cluster the two
// sets differ, and so do the digests.
func sameRecords(t *testing.T, one, batched *aerotest.Cluster, set string, nKeys int) {
	t.Helper()
	if a, b := len(one.Scan(t, set)), len(batched.Scan(t, set)); a != b {
		t.Fatalf("%d records one by one, %d batched", a, b)
	}
	for i := range nKeys {
		a, b := stored(t, one, set, keyName(i)), stored(t, batched, set, keyName(i))
		if (a == nil) != (b == nil) {
			t.Fatalf("%s: one by one %+v, batched %+v", keyName(i), a, b)
		}
		if a != nil && !reflect.DeepEqual(a.Bins, b.Bins) {
			t.Errorf("%s: one by one %v, batched %v", keyName(i), a.Bins, b.Bins)
		}
	}
}
