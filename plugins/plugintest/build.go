// Package plugintest is the connector test kit: it builds a plugin binary
// with `go build`, installs it into a throw-away catalog and runs it over
// the real go-plugin transport through its whole lifecycle: spec, validate
// good and bad configs, task configs, poll or put batches, crash and
// restart. Every connector in the repository passes SourceSuite or
// SinkSuite in its own tests.
//
// What it must not do: replace the worker. It drives one plugin at a time
// with no Kafka; the worker's own tests cover the rest.
package plugintest

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// Builder builds plugin binaries once per test process.
type Builder struct {
	dir   string
	mu    sync.Mutex
	built map[string]string
}

// NewBuilder builds into dir (a t.TempDir() or a directory TestMain owns).
func NewBuilder(dir string) *Builder { return &Builder{dir: dir, built: map[string]string{}} }

// Build compiles the main package pkg (an import path such as
// "github.com/connectd/connectd/connectors/datagen/cmd/connectd-datagen")
// with optional -ldflags -X settings and returns the binary's path.
// Repeated calls with the same arguments return the same binary.
func (b *Builder) Build(t testing.TB, pkg string, xflags ...string) string {
	t.Helper()
	key := pkg + "|" + strings.Join(xflags, " ")
	b.mu.Lock()
	defer b.mu.Unlock()
	if p, ok := b.built[key]; ok {
		return p
	}
	sum := sha256.Sum256([]byte(key))
	out := filepath.Join(b.dir, filepath.Base(pkg)+"-"+hex.EncodeToString(sum[:4]))
	args := []string{"build", "-o", out}
	if len(xflags) > 0 {
		var ld []string
		for _, x := range xflags {
			ld = append(ld, "-X", x)
		}
		args = append(args, "-ldflags", strings.Join(ld, " "))
	}
	args = append(args, pkg)
	cmd := exec.Command("go", args...)
	if outp, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, outp)
	}
	b.built[key] = out
	return out
}

// TestLogger returns a slog logger writing to t.Log, so plugin log lines
// merged by the host show up with the test's output.
func TestLogger(t testing.TB) *slog.Logger {
	w := &testWriter{t: t}
	// A goroutine abandoned by the code under test may log after the test
	// ended, and testing panics on that: drop such lines instead.
	t.Cleanup(func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		w.done = true
	})
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

type testWriter struct {
	t    testing.TB
	mu   sync.Mutex
	done bool
}

func (w *testWriter) Write(p []byte) (int, error) {
	w.t.Helper()
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.done {
		w.t.Log(strings.TrimRight(string(p), "\n"))
	}
	return len(p), nil
}

// CopyFile copies a binary (tests use it to tamper with a copy).
func CopyFile(t testing.TB, src, dst string) {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, data, 0o755); err != nil {
		t.Fatal(err)
	}
}

// PidAlive reports whether a process with pid exists (and is not a zombie).
func PidAlive(pid int) bool {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// state is the field after "(comm)".
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}
