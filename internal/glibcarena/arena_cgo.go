//go:build cgo

package glibcarena

/*
#include <stdlib.h>
#ifdef __GLIBC__
#include <malloc.h>

static int connectd_arenas_limited;

// glibc fixes its arena limit when a second thread first needs an arena,
// which in a Go program happens while the runtime starts, long before any
// Go code runs: a mallopt from Go is then ignored. A constructor runs at
// load time, before any thread exists. MALLOC_ARENA_MAX in the
// environment (read by glibc itself) takes precedence.
__attribute__((constructor)) static void connectd_limit_arenas(void) {
	if (getenv("MALLOC_ARENA_MAX") == NULL) {
		connectd_arenas_limited = mallopt(M_ARENA_MAX, 2) == 1;
	}
}

static int arenas_limited(void) { return connectd_arenas_limited; }
#else
static int arenas_limited(void) { return 0; }
#endif
*/
import "C"

// Limited reports whether this process's arenas were capped at Default
// when it started: false without glibc, and when MALLOC_ARENA_MAX was set
// (glibc then applied the operator's value itself).
func Limited() bool { return C.arenas_limited() == 1 }
