package repo_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/connectd/connectd/internal/repo"
)

// A connector written in its own Go module, outside this repository,
// depends on the SDK the way docs/writing-a-connector.md shows (require +
// replace to a checkout) and builds without cgo: the connector package,
// its plugin main and a test that uses the test kit. The module is
// examples/linesource moved to another module path, so the test follows
// the worked example as it changes.
//
// It runs offline: GOPROXY=off, with the module cache the repository's own
// build filled, and go.sum copied from the repository (the connector needs
// a subset of its modules).
func TestOutOfTreeConnectorBuildsWithoutCgo(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module; skipped with -short")
	}
	root, err := repo.Root()
	if err != nil {
		t.Fatal(err)
	}
	goMod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	goLine := regexp.MustCompile(`(?m)^go \S+$`).Find(goMod)
	if goLine == nil {
		t.Fatal("go.mod has no go line")
	}

	dir := t.TempDir()
	const modPath = "example.com/lines"
	write := func(rel, text string) {
		t.Helper()
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// What docs/writing-a-connector.md tells an author to write.
	write("go.mod", "module "+modPath+"\n\n"+string(goLine)+"\n\n"+
		"require github.com/connectd/connectd v0.0.0\n\n"+
		"replace github.com/connectd/connectd => "+root+"\n")
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	write("go.sum", string(sum))
	// The example's code, with its import path changed to the new module's.
	rewrite := strings.NewReplacer(module+"/examples/linesource", modPath)
	for _, f := range []struct{ from, to string }{
		{"examples/linesource/doc.go", "doc.go"},
		{"examples/linesource/connector.go", "connector.go"},
		{"examples/linesource/task.go", "task.go"},
		{"examples/linesource/cmd/connectd-lines/main.go", "cmd/connectd-lines/main.go"},
	} {
		src, err := os.ReadFile(filepath.Join(root, f.from))
		if err != nil {
			t.Fatal(err)
		}
		write(f.to, rewrite.Replace(string(src)))
	}
	write("lines_test.go", `package linesource_test

import (
	"testing"

	"github.com/connectd/connectd/plugins/plugintest"
)

// Built, not run: it proves the test kit links without cgo.
func TestKit(t *testing.T) {
	_ = plugintest.NewBuilder(t.TempDir())
}
`)

	env := append(os.Environ(),
		"CGO_ENABLED=0",
		"GOPROXY=off",       // offline: the module cache only
		"GOFLAGS=-mod=mod",  // let go record the requirements it infers
		"GOTOOLCHAIN=local", // no toolchain download either
		"GOWORK=off")        // the module alone, as its author builds it
	out := t.TempDir()
	for _, args := range [][]string{
		{"build", "-o", out + string(filepath.Separator), "./..."}, // links the plugin main
		{"test", "-c", "-o", filepath.Join(out, "lines.test"), "."},
	} {
		cmd := exec.Command("go", args...)
		cmd.Dir = dir
		cmd.Env = env
		if text, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("CGO_ENABLED=0 go %s in a module outside the repository: %v\n%s", strings.Join(args, " "), err, text)
		}
	}
	if _, err := os.Stat(filepath.Join(out, "connectd-lines")); err != nil {
		t.Fatalf("the plugin binary was not built: %v", err)
	}
}
