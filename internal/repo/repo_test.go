package repo

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestRoot(t *testing.T) {
	root, err := Root()
	if err != nil {
		t.Fatal(err)
	}
	// This package lives at internal/repo below the root.
	if want, _ := filepath.Abs("../.."); root != want {
		t.Fatalf("Root() = %s, want %s", root, want)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatal(err)
	}
}

func TestRootFrom(t *testing.T) {
	tmp := t.TempDir()
	deep := filepath.Join(tmp, "a", "b")
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := RootFrom(deep); !errors.Is(err, ErrNotInRepo) {
		t.Fatalf("RootFrom outside a module: err = %v, want ErrNotInRepo", err)
	}
	if err := os.WriteFile(filepath.Join(tmp, "a", "go.mod"), []byte("module x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := RootFrom(deep)
	if err != nil || got != filepath.Join(tmp, "a") {
		t.Fatalf("RootFrom = %q, %v; want %q", got, err, filepath.Join(tmp, "a"))
	}
}
