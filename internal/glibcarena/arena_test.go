package glibcarena

import (
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
)

// On a glibc system with cgo the limit is applied when the process starts.
func TestArenasLimitedAtStart(t *testing.T) {
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
	if os.Getenv(EnvVar) != "" {
		if Limited() {
			t.Fatalf("capped although %s is set", EnvVar)
		}
		return
	}
	if !Limited() {
		t.Fatal("the arena limit was not applied at start-up")
	}
}
