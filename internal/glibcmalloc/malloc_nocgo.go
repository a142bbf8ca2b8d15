//go:build !cgo

package glibcmalloc

import "fmt"

// Apply checks its arguments and does nothing more without cgo: there is
// no C allocator to tune.
func Apply(arenaMax, mmapThreshold int) error {
	if arenaMax < 0 || mmapThreshold < 0 || mmapThreshold > MaxMmapThreshold {
		return fmt.Errorf("malloc settings out of range: arenas %d, mmap threshold %d (want >= 0, threshold <= %d)", arenaMax, mmapThreshold, MaxMmapThreshold)
	}
	return nil
}

// Arenas reports nothing without cgo.
func Arenas() (int, bool) { return 0, false }

func contend(int) {}

func mmappedAfterFree() (mmapped, firstMmapped, ok bool) { return false, false, false }
