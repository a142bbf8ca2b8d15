package aerospike

import (
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/connectd/connectd/connectors/aerospike/aerofake"
	"github.com/connectd/connectd/framework/sdk"
)

// tombstone.behavior=delete deletes the record. The documented cost: the
// positions go with it, so a replay of a record older than the tombstone
// is applied again and brings the record back (clear mode skips it).
func TestTombstoneDelete(t *testing.T) {
	for _, mode := range []string{ModeReplace, ModeUpdate, ModeIncrement, ModeListAppend} {
		t.Run(mode, func(t *testing.T) {
			srv := startServer(t, aerofake.Config{})
			task, tc := startTask(t, baseProps(srv, KeyWriteMode, mode, KeyTombstone, TombstoneDelete))
			upd := rec("t", 0, 10, "user-1", map[string]any{"count": int64(3)})
			del := rec("t", 0, 11, "user-1", nil)
			mustPut(t, task, upd)
			mustPut(t, task, del)
			if r := stored(t, srv, "s", "user-1"); r != nil {
				t.Fatalf("after the tombstone the record is %+v, want it deleted", r)
			}
			// A tombstone of a record that does not exist writes nothing.
			writes := statsOf(srv).Writes
			mustPut(t, task, rec("t", 0, 12, "never", nil))
			if r := stored(t, srv, "s", "never"); r != nil {
				t.Fatalf("tombstone of an absent record wrote %+v", r)
			}
			if fakeOnly(t, srv, "the server's write counter") != nil && statsOf(srv).Writes != writes {
				t.Fatalf("tombstone of an absent record wrote (server writes %d → %d)", writes, statsOf(srv).Writes)
			}
			// A write, its tombstone and a newer write in one batch: the
			// newer write lands on an empty record.
			mustPut(t, task,
				rec("t", 1, 0, "user-2", map[string]any{"count": int64(5), "name": "x"}),
				rec("t", 1, 1, "user-2", nil),
				rec("t", 1, 2, "user-2", map[string]any{"count": int64(7)}))
			r := stored(t, srv, "s", "user-2")
			if r == nil || !reflect.DeepEqual(r.Bins["count"], wantAfterOne(mode, 7)) || r.Bins["name"] != nil {
				t.Fatalf("user-2 = %+v, want count %v alone", r, wantAfterOne(mode, 7))
			}
			if p := positionsOf(t, r, "kafka_pos"); !reflect.DeepEqual(p, map[string]int64{"t-1": 2}) {
				t.Fatalf("user-2 positions = %v, want only t-1 → 2", p)
			}
			// The caveat: the replayed older record resurrects user-1.
			mustPut(t, task, upd)
			r = stored(t, srv, "s", "user-1")
			if r == nil || !reflect.DeepEqual(r.Bins["count"], wantAfterOne(mode, 3)) {
				t.Fatalf("user-1 after replaying offset 10 = %+v, want it written again (the documented caveat)", r)
			}
			if len(tc.Reports()) != 0 {
				t.Fatalf("reports: %v", tc.Reports())
			}
		})
	}
}

// wantAfterOne is bin count after one record with value n on an empty
// record.
func wantAfterOne(mode string, n int64) any {
	if mode == ModeListAppend {
		return []any{n}
	}
	return n
}

// A zombie that read the record before the live task deleted it cannot
// write over the deletion with what it read: its generation-checked write
// fails and it reads again. The record is gone, positions and all, so the
// zombie applies the batch once more from an empty record (the caveat of
// delete, here brief) and its own tombstone deletes the record again.
func TestTombstoneDeleteZombie(t *testing.T) {
	srv := startServer(t, aerofake.Config{})
	fake := srv.NeedFake(t, "fault injection: the zombie's write is held up on the server")
	props := baseProps(srv, KeyWriteMode, ModeIncrement, KeyTombstone, TombstoneDelete)
	zombie, tcz := startTask(t, props)
	live, _ := startTask(t, props)
	mustPut(t, live, rec("t", 0, 0, "a", map[string]any{"count": int64(1)}))
	batch := []*sdk.SinkRecord{
		rec("t", 0, 1, "a", map[string]any{"count": int64(5)}),
		rec("t", 0, 2, "a", nil),
	}
	fake.InjectFault(aerofake.Fault{Ops: aerofake.OpWrite, Times: 1, Delay: 400 * time.Millisecond})
	done := make(chan error, 1)
	go func() { done <- zombie.Put(t.Context(), batch) }()
	waitFor(t, func() bool { return len(fake.PendingFaults()) == 0 })
	mustPut(t, live, batch...)
	if err := <-done; err != nil {
		t.Fatalf("zombie put: %v", err)
	}
	if r := stored(t, srv, "s", "a"); r != nil {
		t.Fatalf("a = %+v, want deleted", r)
	}
	if n := tcz.counter(t, "connectd_aerospike_sink_generation_conflicts_total"); n < 1 {
		t.Errorf("zombie conflicts = %v, want at least 1", n)
	}
	if n := tcz.counter(t, "connectd_aerospike_sink_records_written_total"); n != 2 {
		t.Errorf("zombie wrote %v records, want 2 (the deleted record's positions are gone)", n)
	}
}

// With deletes, folding a batch still gives the same records and reports
// as one put per record.
func TestTombstoneDeleteFoldEquivalent(t *testing.T) {
	for _, mode := range []string{ModeReplace, ModeUpdate, ModeIncrement} {
		for seed := uint64(0); seed < 4; seed++ {
			t.Run(mode+"/"+keyName(int(seed)), func(t *testing.T) {
				recs := randomRecords(rand.New(rand.NewPCG(seed, 91)), 120)
				one, batched := startServer(t, aerofake.Config{}), startServer(t, aerofake.Config{})
				props := []string{KeyWriteMode, mode, KeyTombstone, TombstoneDelete}
				taskOne, tcOne := startTask(t, baseProps(one, props...))
				taskBatched, tcBatched := startTask(t, baseProps(batched, props...))
				for _, r := range recs {
					mustPut(t, taskOne, r)
				}
				r := rand.New(rand.NewPCG(seed, 92))
				for start := 0; start < len(recs); {
					end := min(start+1+r.IntN(60), len(recs))
					mustPut(t, taskBatched, recs[start:end]...)
					start = end
				}
				sameRecords(t, one, batched, "s", 4)
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
