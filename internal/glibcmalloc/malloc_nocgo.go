//go:build !cgo

package glibcmalloc

// Limited is false without cgo: there is no C allocator to tune.
func Limited() bool { return false }

// MmapThresholdFixed is false without cgo: there is no C allocator to tune.
func MmapThresholdFixed() bool { return false }

func mmappedAfterFree() (mmapped, firstMmapped, ok bool) { return false, false, false }
