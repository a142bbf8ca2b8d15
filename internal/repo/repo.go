// Package repo locates the connectd repository from inside it: tests run
// in their package's directory and the project's tools may be started from
// any folder, yet both need paths relative to the repository's root (the
// broker's .run/kafka.env, the docs, the Makefile).
//
// It only finds the root; it reads and builds nothing. Its tests also hold
// the rules about the repository as a whole that belong to no one package:
// which packages may depend on which, what the connectd binary links, and
// that the SDK builds without cgo for a module outside this one.
package repo

import (
	"errors"
	"os"
	"path/filepath"
)

// ErrNotInRepo: no directory from the working directory upwards holds a
// go.mod.
var ErrNotInRepo = errors.New("go.mod not found above the working directory: run from inside the repository")

// Root walks up from the working directory to the first directory holding
// a go.mod and returns it.
func Root() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	return RootFrom(dir)
}

// RootFrom is Root starting at dir instead of the working directory.
func RootFrom(dir string) (string, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", ErrNotInRepo
		}
		dir = parent
	}
}
