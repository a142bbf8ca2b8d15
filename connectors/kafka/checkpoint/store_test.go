package checkpoint

import (
	"testing"

	"github.com/connectd/connectd/connectors/kafka/mirrorformat"
)

func TestTranslate(t *testing.T) {
	s := newSyncStore()
	for _, p := range []syncPair{{10, 100}, {20, 112}, {30, 125}} {
		s.add(mirrorformat.OffsetSync{Topic: "t", Partition: 0, UpstreamOffset: p.up, DownstreamOffset: p.down})
	}
	cases := []struct {
		committed int64
		want      int64
		ok        bool
	}{
		{5, 0, false},   // before the first sync: no translation
		{10, 100, true}, // exactly at a sync: its downstream offset
		{11, 101, true}, // past it: one past, never further
		{19, 101, true},
		{20, 112, true},
		{1000, 126, true},
	}
	for _, c := range cases {
		got, ok := s.translate("t", 0, c.committed)
		if got != c.want || ok != c.ok {
			t.Errorf("translate(%d) = %d, %v; want %d, %v", c.committed, got, ok, c.want, c.ok)
		}
	}
	if _, ok := s.translate("t", 1, 50); ok {
		t.Error("a partition without syncs translates")
	}
}

func TestStoreDropsSupersededSyncs(t *testing.T) {
	s := newSyncStore()
	add := func(up, down int64) {
		s.add(mirrorformat.OffsetSync{Topic: "t", UpstreamOffset: up, DownstreamOffset: down})
	}
	add(10, 100)
	add(20, 110)
	// Replication restarted from upstream 15 into a fresh target topic.
	add(15, 3)
	if got, _ := s.translate("t", 0, 25); got != 4 {
		t.Errorf("after a restart, translate(25) = %d, want 4 (the old syncs are gone)", got)
	}
	if _, ok := s.translate("t", 0, 12); ok {
		t.Error("an upstream offset below the restart still translates with a dropped sync")
	}
}

func TestStoreThinsOldSyncs(t *testing.T) {
	s := newSyncStore()
	const n = 3 * maxSyncsPerPartition
	for i := range int64(n) {
		s.add(mirrorformat.OffsetSync{Topic: "t", UpstreamOffset: i * 10, DownstreamOffset: i * 11})
	}
	if n := len(s.parts[sourcePartition{"t", 0}]); n > maxSyncsPerPartition {
		t.Fatalf("%d syncs kept, cap %d", n, maxSyncsPerPartition)
	}
	// The newest half is dense: recent offsets translate exactly.
	for _, i := range []int64{n - 1, n - maxSyncsPerPartition/2} {
		if got, _ := s.translate("t", 0, i*10); got != i*11 {
			t.Errorf("translate(%d) = %d, want %d", i*10, got, i*11)
		}
	}
	// An old one still translates, to at most its exact value.
	got, ok := s.translate("t", 0, 55)
	if !ok || got > 5*11+1 {
		t.Errorf("translate(55) = %d, %v; want at most %d", got, ok, 5*11+1)
	}
}
