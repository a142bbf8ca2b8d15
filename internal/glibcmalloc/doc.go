// Package glibcmalloc sets the two glibc allocator settings that keep the
// resident memory of a process running librdkafka clients bounded: the
// number of malloc arenas and a fixed mmap threshold. The worker applies
// them to itself at start-up from malloc.arena.max and
// malloc.mmap.threshold.bytes, and passes the arena limit to its plugin
// processes. glibc reads its own environment variables (Environment) when
// a process starts, before any thread: the worker restarts itself once
// with them, and Apply sets them where that is not possible.
//
// Arenas. glibc gives each thread that contends for the allocator its own
// arena, up to eight per core, and an arena keeps the memory freed into it
// for reuse by that arena only. librdkafka runs several threads per
// client, and a worker creates and destroys clients as its tasks start,
// fail and move: every arena then holds its own high-water mark, and the
// process's resident memory grows with the number of arenas rather than
// with what it uses (the chaos soak's workers reached 60–112 MiB of arena
// memory against 5–49 MiB of Go heap within minutes of starting). A limit
// keeps that bounded at a small cost in allocator contention. Set from Go,
// the limit stops new arenas from then on; the few that the runtime's
// threads made while the process started remain (a process started with
// glibc's MALLOC_ARENA_MAX, as plugin processes are, has the limit from its
// first thread).
//
// The mmap threshold. glibc serves an allocation of 128 KiB or more with
// its own mmap and returns it to the system on free, but by default it
// then raises the threshold to the size just freed (up to 32 MiB), and the
// threshold for trimming the heap's top with it. librdkafka's produce
// requests and fetch responses are such buffers, up to batch.size and
// fetch.max.bytes: after the first ones are freed, the next ones come from
// the arenas, whose free space is not given back while anything above it
// is in use. Fixing the threshold keeps those buffers out of the arenas.
//
// Both settings are process-wide by nature (glibc has one allocator per
// process); this package only applies what its caller chose. It must not
// tune Go's own memory (GOGC, GOMEMLIMIT), which is the caller's choice.
// Without cgo or glibc (a musl static build) Apply does nothing.
package glibcmalloc

import (
	"fmt"
	"os"
	"slices"
	"strings"
)

// MaxMmapThreshold is the largest mmap threshold glibc accepts on 64-bit
// systems (DEFAULT_MMAP_THRESHOLD_MAX).
const MaxMmapThreshold = 32 << 20

// Environment is glibc's environment variables for these settings:
// MALLOC_ARENA_MAX and MALLOC_MMAP_THRESHOLD_, each left out when 0
// (glibc's own behaviour, or the operator's variable, applies then).
func Environment(arenaMax, mmapThreshold int) []string {
	var env []string
	if arenaMax > 0 {
		env = append(env, fmt.Sprintf("MALLOC_ARENA_MAX=%d", arenaMax))
	}
	if mmapThreshold > 0 {
		env = append(env, fmt.Sprintf("MALLOC_MMAP_THRESHOLD_=%d", mmapThreshold))
	}
	return env
}

// StartedWith reports whether this process's environment holds every
// variable of env (from Environment) with its value: glibc then applied
// them when the process started.
func StartedWith(env []string) bool {
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		if got, ok := os.LookupEnv(k); !ok || got != v {
			return false
		}
	}
	return true
}

// WithEnvironment is environ with the variables of env set to their
// values (replacing any it had).
func WithEnvironment(environ, env []string) []string {
	out := make([]string, 0, len(environ)+len(env))
	for _, kv := range environ {
		k, _, _ := strings.Cut(kv, "=")
		if !slices.ContainsFunc(env, func(e string) bool { return strings.HasPrefix(e, k+"=") }) {
			out = append(out, kv)
		}
	}
	return append(out, env...)
}
