package glibcmalloc

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"slices"
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
	for _, v := range []string{"MALLOC_ARENA_MAX", "MALLOC_MMAP_THRESHOLD_", "GLIBC_TUNABLES"} {
		if os.Getenv(v) != "" && os.Getenv("GLIBCMALLOC_CHILD") == "" {
			citest.Unavailable(t, "%s is set in the test's environment: glibc's defaults are what these tests compare with", v)
		}
	}
}

// The fixed threshold's point: freeing a large buffer does not make glibc
// serve the next large ones from its arenas. Each case runs in a fresh
// process, so that no earlier allocation has moved the threshold.
func TestMmapThreshold(t *testing.T) {
	requireGlibc(t)
	if os.Getenv("GLIBCMALLOC_CHILD") == "threshold" {
		if os.Getenv("GLIBCMALLOC_APPLY") == "1" {
			if err := Apply(0, 128<<10); err != nil {
				fmt.Println("error:", err)
				return
			}
		}
		mmapped, first, ok := mmappedAfterFree()
		fmt.Printf("mmapped=%v first=%v ok=%v\n", mmapped, first, ok)
		return
	}
	for _, tc := range []struct {
		apply bool
		want  string
	}{
		{false, "mmapped=false first=true ok=true"}, // glibc raised its threshold on the free
		{true, "mmapped=true first=true ok=true"},
	} {
		out := child(t, "TestMmapThreshold", "threshold", tc.apply)
		if strings.Contains(out, "ok=false") {
			citest.Unavailable(t, "glibc older than 2.33 (no mallinfo2): not observable")
		}
		if !strings.Contains(out, tc.want) {
			t.Errorf("applied %v: %q, want %q", tc.apply, out, tc.want)
		}
	}
}

// The arena limit's point: threads that allocate at once get no arenas
// beyond it. A process started with Environment has it from its first
// thread (how the worker and its plugins run); set from Go with Apply it
// holds from then on, beyond the arenas the runtime's threads made while
// the process started.
func TestArenaLimit(t *testing.T) {
	requireGlibc(t)
	if os.Getenv("GLIBCMALLOC_CHILD") == "arenas" {
		before, _ := Arenas()
		if os.Getenv("GLIBCMALLOC_APPLY") == "1" {
			if err := Apply(2, 0); err != nil {
				fmt.Println("error:", err)
				return
			}
		}
		contend(48)
		after, _ := Arenas()
		fmt.Printf("before=%d after=%d\n", before, after)
		return
	}
	arenas := func(apply bool, env []string) (before, after int) {
		out := child(t, "TestArenaLimit", "arenas", apply, env...)
		i := strings.Index(out, "before=")
		if i < 0 {
			t.Fatalf("child output %q", out)
		}
		if _, err := fmt.Sscanf(out[i:], "before=%d after=%d", &before, &after); err != nil {
			t.Fatalf("child output %q: %v", out, err)
		}
		return before, after
	}
	_, unlimited := arenas(false, nil)
	applyBefore, applyAfter := arenas(true, nil)
	envBefore, envAfter := arenas(false, Environment(2, 0))
	t.Logf("arenas after 48 contending threads: glibc's default %d; Apply(2) %d (%d when applied); Environment(2) %d (%d at start)",
		unlimited, applyAfter, applyBefore, envAfter, envBefore)
	if applyAfter > max(applyBefore, 2) {
		t.Errorf("with the limit applied, arenas went from %d to %d", applyBefore, applyAfter)
	}
	if envAfter > 2 {
		t.Errorf("started with %v: %d arenas, want at most 2", Environment(2, 0), envAfter)
	}
	if unlimited <= max(applyAfter, envAfter) {
		t.Errorf("without the limit %d arenas, with it %d and %d: the threads did not contend enough to show the limit", unlimited, applyAfter, envAfter)
	}
}

func TestEnvironment(t *testing.T) {
	for _, tc := range []struct {
		arenas, threshold int
		want              []string
	}{
		{2, 128 << 10, []string{"MALLOC_ARENA_MAX=2", "MALLOC_MMAP_THRESHOLD_=131072"}},
		{0, 128 << 10, []string{"MALLOC_MMAP_THRESHOLD_=131072"}},
		{0, 0, nil},
	} {
		if got := Environment(tc.arenas, tc.threshold); !slices.Equal(got, tc.want) {
			t.Errorf("Environment(%d, %d) = %q, want %q", tc.arenas, tc.threshold, got, tc.want)
		}
	}
	got := WithEnvironment([]string{"A=1", "MALLOC_ARENA_MAX=8", "B=2"}, []string{"MALLOC_ARENA_MAX=2"})
	if want := []string{"A=1", "B=2", "MALLOC_ARENA_MAX=2"}; !slices.Equal(got, want) {
		t.Errorf("WithEnvironment = %q, want %q", got, want)
	}
	t.Setenv("MALLOC_ARENA_MAX", "2")
	if !StartedWith([]string{"MALLOC_ARENA_MAX=2"}) || StartedWith([]string{"MALLOC_ARENA_MAX=3"}) || !StartedWith(nil) {
		t.Error("StartedWith does not compare with the environment")
	}
}

func child(t *testing.T, test, what string, apply bool, env ...string) string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run", "^"+test+"$")
	cmd.Env = append(os.Environ(), "GLIBCMALLOC_CHILD="+what, fmt.Sprintf("GLIBCMALLOC_APPLY=%d", map[bool]int{false: 0, true: 1}[apply]))
	cmd.Env = append(cmd.Env, env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if strings.Contains(string(out), "error:") {
		t.Fatalf("child: %s", out)
	}
	return string(out)
}

func TestApplyRange(t *testing.T) {
	for _, tc := range [][2]int{{-1, 0}, {0, -1}, {0, MaxMmapThreshold + 1}} {
		if err := Apply(tc[0], tc[1]); err == nil {
			t.Errorf("Apply(%d, %d) accepted", tc[0], tc[1])
		}
	}
}
