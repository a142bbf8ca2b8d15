package glibcmalloc

import (
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"

	"github.com/connectd/connectd/internal/citest"
)

// requireGlibc skips off glibc (fails in CI, whose machine has
// everything these tests observe: Linux, glibc 2.33 or later, no operator
// settings).
func requireGlibc(t *testing.T) {
	t.Helper()
	if runtime.GOOS != "linux" {
		citest.Unavailable(t, "glibc's allocator is a Linux matter, this is %s", runtime.GOOS)
	}
	out, err := exec.Command("ldd", "--version").CombinedOutput()
	if err != nil || !strings.Contains(strings.ToLower(string(out)), "glibc") && !strings.Contains(string(out), "GNU libc") {
		citest.Unavailable(t, "not a glibc system: ldd --version says %s (%v)", out, err)
	}
}

// On a glibc system with cgo both settings are applied when the process
// starts, unless the environment chose them.
func TestSettingsAppliedAtStart(t *testing.T) {
	requireGlibc(t)
	for _, tc := range []struct {
		name, env string
		applied   func() bool
	}{
		{"arena limit", EnvVar, Limited},
		{"mmap threshold", MmapThresholdEnvVar, MmapThresholdFixed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			set := os.Getenv(tc.env) != ""
			if got := tc.applied(); got == set {
				t.Fatalf("applied = %v with %s set = %v; want the opposite", got, tc.env, set)
			}
		})
	}
}

// The fixed threshold's point: freeing a large buffer does not make glibc
// serve the next large ones from its arenas.
func TestLargeBlocksStayMmappedAfterAFree(t *testing.T) {
	requireGlibc(t)
	if os.Getenv(MmapThresholdEnvVar) != "" {
		citest.Unavailable(t, "%s is set: the operator's threshold applies", MmapThresholdEnvVar)
	}
	mmapped, firstMmapped, ok := mmappedAfterFree()
	switch {
	case !ok:
		citest.Unavailable(t, "glibc older than 2.33 (no mallinfo2): not observable")
	case !firstMmapped:
		t.Fatal("a 24 MiB block did not come from mmap at all")
	case !mmapped:
		t.Fatal("a 16 MiB block came from the heap after a 24 MiB block was freed: the mmap threshold was raised")
	}
}
