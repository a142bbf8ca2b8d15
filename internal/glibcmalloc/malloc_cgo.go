//go:build cgo

package glibcmalloc

/*
#include <stdlib.h>
#ifdef __GLIBC__
#include <malloc.h>

static int connectd_arenas_limited;
static int connectd_mmap_threshold_fixed;

// glibc fixes its arena limit when a second thread first needs an arena,
// which in a Go program happens while the runtime starts, long before any
// Go code runs: a mallopt from Go is then ignored. A constructor runs at
// load time, before any thread exists. The environment (read by glibc
// itself) takes precedence. Keep the arena value in step with doc.go's
// Default; the threshold is glibc's own initial one, 128 KiB.
__attribute__((constructor)) static void connectd_tune_malloc(void) {
	if (getenv("MALLOC_ARENA_MAX") == NULL) {
		connectd_arenas_limited = mallopt(M_ARENA_MAX, 2) == 1;
	}
	// Setting M_MMAP_THRESHOLD also turns off glibc's dynamic raising of
	// it and of M_TRIM_THRESHOLD.
	if (getenv("MALLOC_MMAP_THRESHOLD_") == NULL) {
		connectd_mmap_threshold_fixed = mallopt(M_MMAP_THRESHOLD, 128 * 1024) == 1;
	}
}

static int arenas_limited(void) { return connectd_arenas_limited; }
static int mmap_threshold_fixed(void) { return connectd_mmap_threshold_fixed; }

// mmapped_after_free frees a large block and then asks for a smaller one
// that is still above the threshold, and reports whether glibc served it
// with its own mmap (1) or not (0): with the dynamic threshold the free
// raises the threshold above the second size, and the second block comes
// from the heap. 2: the first block was not mmapped either. -1: glibc
// before 2.33 (no mallinfo2), nothing to observe.
static int mmapped_after_free(void) {
#if __GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33)
	// volatile: the compiler may drop a malloc whose block is unused.
	struct mallinfo2 start = mallinfo2();
	char *volatile big = malloc(24 << 20);
	struct mallinfo2 held = mallinfo2();
	free(big);
	struct mallinfo2 before = mallinfo2();
	char *volatile p = malloc(16 << 20);
	struct mallinfo2 after = mallinfo2();
	free(p);
	if (held.hblks <= start.hblks) {
		return 2; // the first block did not come from mmap either
	}
	return after.hblks > before.hblks;
#else
	return -1;
#endif
}
#else
static int arenas_limited(void) { return 0; }
static int mmap_threshold_fixed(void) { return 0; }
static int mmapped_after_free(void) { return -1; }
#endif

static int is_glibc(void) {
#ifdef __GLIBC__
	return 1;
#else
	return 0;
#endif
}
*/
import "C"

// Limited reports whether this process's arenas were capped at Default
// when it started: false without glibc, and when MALLOC_ARENA_MAX was set
// (glibc then applied the operator's value itself).
func Limited() bool { return C.arenas_limited() == 1 }

// MmapThresholdFixed reports whether this process's mmap threshold was
// fixed at 128 KiB when it started: false without glibc, and when
// MALLOC_MMAP_THRESHOLD_ was set.
func MmapThresholdFixed() bool { return C.mmap_threshold_fixed() == 1 }

func glibc() bool { return C.is_glibc() == 1 }

// mmappedAfterFree is the behaviour the fixed threshold is for, observed:
// whether a 16 MiB block is served by mmap after a 24 MiB one (served by
// mmap, which firstMmapped reports) was freed. ok is false where it cannot
// be observed (no glibc, or one older than 2.33 without mallinfo2).
func mmappedAfterFree() (mmapped, firstMmapped, ok bool) {
	r := C.mmapped_after_free()
	return r == 1, r != 2, r >= 0 && glibc()
}
