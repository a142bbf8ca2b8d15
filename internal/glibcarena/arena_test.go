package glibcarena

import (
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
)

// On a glibc system with cgo the allocator accepts the limit.
func TestLimitAcceptedByGlibc(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("glibc arenas are a Linux matter")
	}
	out, err := exec.Command("ldd", "--version").CombinedOutput()
	if err != nil || !strings.Contains(strings.ToLower(string(out)), "glibc") && !strings.Contains(string(out), "GNU libc") {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI runs on glibc, but ldd --version says: %s (%v)", out, err)
		}
		t.Skipf("not a glibc system: %s", out)
	}
	if !Limit(Default) {
		t.Fatal("glibc refused M_ARENA_MAX")
	}
}
