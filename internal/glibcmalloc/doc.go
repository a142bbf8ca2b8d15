// Package glibcmalloc sets the two glibc allocator settings that keep the
// resident memory of a process running librdkafka clients bounded: the
// number of malloc arenas and a fixed mmap threshold.
//
// Arenas. glibc gives each thread that contends for the allocator its own
// arena, up to eight per core, and an arena keeps the memory freed into it
// for reuse by that arena only. librdkafka runs several threads per
// client, and a worker creates and destroys clients as its tasks start,
// fail and move: every arena then holds its own high-water mark, and the
// process's resident memory grows with the number of arenas rather than
// with what it uses (the chaos soak's workers reached 60–112 MiB of arena
// memory against 5–49 MiB of Go heap within minutes of starting). Two
// arenas keep that bounded at a small cost in allocator contention.
//
// The mmap threshold. glibc serves an allocation of 128 KiB or more with
// its own mmap and returns it to the system on free, but by default it
// then raises the threshold to the size just freed (up to 32 MiB), and the
// threshold for trimming the heap's top with it. librdkafka's produce
// requests and fetch responses are such buffers, up to batch.size and
// fetch.max.bytes: after the first ones are freed, the next ones come from
// the arenas, whose free space is not given back while anything above it
// is in use. Fixing the threshold at glibc's initial 128 KiB keeps those
// buffers out of the arenas: in three alternating pairs of replication
// benchmark runs the worker's peak resident memory (six transactional
// producers) fell by 12–37 MB, with no measurable cost in throughput or
// CPU (docs/benchmarks.md).
//
// Importing the package is what applies both: glibc fixes its arena limit
// as soon as a second thread allocates, which in a Go program happens
// while the runtime starts, so they are set by a C constructor at load
// time, before any thread exists. MALLOC_ARENA_MAX and
// MALLOC_MMAP_THRESHOLD_ in the environment take precedence over the
// respective setting. Limited and MmapThresholdFixed report what happened.
//
// It owns only these settings: it must not tune Go's own memory (GOGC,
// GOMEMLIMIT), which is the caller's choice. Without cgo or glibc (a musl
// static build) it does nothing.
package glibcmalloc

// EnvVar is glibc's environment variable for the arena limit. A process
// started with it set already has the limit the operator chose, and child
// processes given it get the limit from their start.
const EnvVar = "MALLOC_ARENA_MAX"

// Default is the arena limit applied at start-up, and the value connectd
// passes to its plugins, unless MALLOC_ARENA_MAX is set.
const Default = 2

// MmapThresholdEnvVar is glibc's environment variable for the mmap
// threshold; when it is set, glibc applies it and this package does not.
const MmapThresholdEnvVar = "MALLOC_MMAP_THRESHOLD_"
