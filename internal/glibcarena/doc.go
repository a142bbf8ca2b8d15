// Package glibcarena caps the number of glibc malloc arenas of a process
// that runs librdkafka clients.
//
// glibc gives each thread that contends for the allocator its own arena,
// up to eight per core, and an arena keeps the memory freed into it for
// reuse by that arena only. librdkafka runs several threads per client, and
// a worker creates and destroys clients as its tasks start, fail and move:
// every arena then holds its own high-water mark, and the process's
// resident memory grows with the number of arenas rather than with what it
// uses (the chaos soak's workers reached 60–112 MiB of arena memory against
// 5–49 MiB of Go heap within minutes of starting). Two arenas keep
// that bounded at a small cost in allocator contention.
//
// Importing the package is what applies the limit: glibc fixes its arena
// limit as soon as a second thread allocates, which in a Go program
// happens while the runtime starts, so the limit is set by a C constructor
// at load time, before any thread exists. MALLOC_ARENA_MAX in the
// environment takes precedence. Limited reports what happened.
//
// It owns only that setting: it must not tune Go's own memory (GOGC,
// GOMEMLIMIT), which is the caller's choice. Without cgo or glibc (a musl
// static build) it does nothing.
package glibcarena

// EnvVar is glibc's environment variable for the same limit. A process
// started with it set already has the limit the operator chose, and child
// processes given it get the limit from their start.
const EnvVar = "MALLOC_ARENA_MAX"

// Default is the arena limit applied at start-up, and the value connectd
// passes to its plugins, unless MALLOC_ARENA_MAX is set.
const Default = 2
