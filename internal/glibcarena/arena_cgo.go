//go:build cgo

package glibcarena

/*
#include <stdlib.h>
#ifdef __GLIBC__
#include <malloc.h>
static int limit_arenas(int n) { return mallopt(M_ARENA_MAX, n); }
#else
static int limit_arenas(int n) { (void)n; return 0; }
#endif
*/
import "C"

// Limit caps this process's malloc arenas at n and reports whether the
// allocator accepted it (false without glibc). Arenas that already exist
// stay; call it before the first librdkafka client starts.
func Limit(n int) bool {
	return C.limit_arenas(C.int(n)) == 1
}
