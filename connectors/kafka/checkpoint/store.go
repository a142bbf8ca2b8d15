package checkpoint

import (
	"slices"

	"github.com/connectd/connectd/connectors/kafka/mirrorformat"
)

// maxSyncsPerPartition bounds the syncs kept per partition (16 bytes
// each). Past it the older half is thinned to every other sync, as MM2's
// OffsetSyncStore keeps older syncs sparser: a group within the newest
// half (at least 2048 syncs, about 150 000 records at offset.lag.max=100)
// translates as tightly as the syncs allow, an older one still translates,
// more loosely (it re-reads more, never skips).
const maxSyncsPerPartition = 4096

type sourcePartition struct {
	topic     string
	partition int32
}

type syncPair struct{ up, down int64 }

// syncStore holds the offset syncs read so far, per source partition,
// sorted by upstream offset.
type syncStore struct {
	parts map[sourcePartition][]syncPair
}

func newSyncStore() *syncStore { return &syncStore{parts: map[sourcePartition][]syncPair{}} }

// add records a sync. Syncs of one partition normally arrive in increasing
// order; one at or below an upstream offset already held means replication
// restarted from an earlier point (a reset or a new alias), and one whose
// downstream offset is below its predecessor's means the target was
// recreated or truncated: either way the older syncs no longer describe
// the target and are dropped.
func (s *syncStore) add(sync mirrorformat.OffsetSync) {
	sp := sourcePartition{sync.Topic, sync.Partition}
	list := s.parts[sp]
	i, _ := slices.BinarySearchFunc(list, sync.UpstreamOffset, func(p syncPair, up int64) int {
		switch {
		case p.up < up:
			return -1
		case p.up > up:
			return 1
		}
		return 0
	})
	if i < len(list) {
		list = list[:i] // superseded
	}
	if n := len(list); n > 0 && list[n-1].down > sync.DownstreamOffset {
		list = list[:0]
	}
	list = append(list, syncPair{sync.UpstreamOffset, sync.DownstreamOffset})
	if len(list) > maxSyncsPerPartition {
		half := len(list) / 2
		kept := list[:0]
		for j, p := range list {
			if j >= half || j%2 == 0 {
				kept = append(kept, p)
			}
		}
		list = kept
	}
	s.parts[sp] = list
}

// translate maps a committed source offset to a target offset the way MM2
// does (OffsetSyncStore.translateDownstream): the latest sync (u, d) with
// u ≤ committed gives d when committed == u and d+1 otherwise. Since every
// sync's d is at or below the true target offset of u's copy, the result is
// at or below the copy of the first record the group has not consumed.
// ok is false when no sync is at or below committed.
func (s *syncStore) translate(topic string, partition int32, committed int64) (int64, bool) {
	list := s.parts[sourcePartition{topic, partition}]
	i, found := slices.BinarySearchFunc(list, committed, func(p syncPair, up int64) int {
		switch {
		case p.up < up:
			return -1
		case p.up > up:
			return 1
		}
		return 0
	})
	if found {
		return list[i].down, true
	}
	if i == 0 {
		return 0, false
	}
	return list[i-1].down + 1, true
}
