//go:build cgo

package glibcmalloc

/*
#include <stdlib.h>
#ifdef __GLIBC__
#define _GNU_SOURCE
#include <malloc.h>
#include <stdio.h>
#include <string.h>

static int set_arena_max(int n) { return mallopt(M_ARENA_MAX, n); }

// Setting M_MMAP_THRESHOLD also turns off glibc's dynamic raising of it
// and of M_TRIM_THRESHOLD.
static int set_mmap_threshold(int n) { return mallopt(M_MMAP_THRESHOLD, n); }

// count_arenas counts the arenas glibc reports in malloc_info's XML (one
// <heap> element per arena); -1 if it cannot.
static int count_arenas(void) {
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (f == NULL) {
		return -1;
	}
	int r = malloc_info(0, f);
	fclose(f);
	int n = 0;
	for (char *p = buf; p != NULL && (p = strstr(p, "<heap nr=")) != NULL; p++) {
		n++;
	}
	free(buf);
	return r == 0 ? n : -1;
}

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
		return 2;
	}
	return after.hblks > before.hblks;
#else
	return -1;
#endif
}

// contend runs n threads that allocate at the same time, so that glibc
// gives threads arenas of their own as far as its limit lets it.
#include <pthread.h>
static void *contend_thread(void *arg) {
	(void)arg;
	for (int i = 0; i < 20000; i++) {
		char *volatile p = malloc(256 + (i % 16) * 64);
		p[0] = 1;
		free(p);
	}
	return NULL;
}
static void contend(int n) {
	pthread_t t[64];
	if (n > 64) {
		n = 64;
	}
	for (int i = 0; i < n; i++) {
		pthread_create(&t[i], NULL, contend_thread, NULL);
	}
	for (int i = 0; i < n; i++) {
		pthread_join(t[i], NULL);
	}
}
static int is_glibc(void) { return 1; }
#else
static int set_arena_max(int n) { return 1; }
static int set_mmap_threshold(int n) { return 1; }
static int count_arenas(void) { return -1; }
static int mmapped_after_free(void) { return -1; }
static void contend(int n) {}
static int is_glibc(void) { return 0; }
#endif
*/
import "C"

import "fmt"

// Apply sets this process's arena limit (0: glibc's own, eight per core)
// and mmap threshold in bytes (0: glibc's dynamic threshold). Without
// glibc it does nothing.
func Apply(arenaMax, mmapThreshold int) error {
	if arenaMax < 0 || mmapThreshold < 0 || mmapThreshold > MaxMmapThreshold {
		return fmt.Errorf("malloc settings out of range: arenas %d, mmap threshold %d (want >= 0, threshold <= %d)", arenaMax, mmapThreshold, MaxMmapThreshold)
	}
	if arenaMax > 0 && C.set_arena_max(C.int(arenaMax)) != 1 {
		return fmt.Errorf("glibc refused an arena limit of %d", arenaMax)
	}
	if mmapThreshold > 0 && C.set_mmap_threshold(C.int(mmapThreshold)) != 1 {
		return fmt.Errorf("glibc refused an mmap threshold of %d bytes", mmapThreshold)
	}
	return nil
}

// Arenas is the number of malloc arenas glibc has made in this process;
// ok is false without glibc.
func Arenas() (n int, ok bool) {
	r := int(C.count_arenas())
	return r, r >= 0
}

func glibc() bool { return C.is_glibc() == 1 }

// contend makes n threads allocate at once (for tests).
func contend(n int) { C.contend(C.int(n)) }

// mmappedAfterFree is the behaviour the fixed threshold is for, observed:
// whether a 16 MiB block is served by mmap after a 24 MiB one (served by
// mmap, which firstMmapped reports) was freed. ok is false where it cannot
// be observed (no glibc, or one older than 2.33 without mallinfo2).
func mmappedAfterFree() (mmapped, firstMmapped, ok bool) {
	r := C.mmapped_after_free()
	return r == 1, r != 2, r >= 0 && glibc()
}
