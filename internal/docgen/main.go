// Command docgen writes the reference sections of the docs from the code's
// own definitions, so that docs and code cannot drift: the worker
// properties (framework/workerconfig), every shipped connector's keys (its
// Spec().Config), the keys every connector has (framework/connconfig), the
// converters, transforms and predicates, and the REST endpoints (the
// OpenAPI document framework/rest serves).
//
// Each generated section sits between <!-- NAME:begin --> and
// <!-- NAME:end --> markers; everything outside them is written by hand
// and kept. `make docs` runs it; its test fails when a generated section
// is stale.
//
// What it must not do: edit hand-written text, or generate anything that
// is not derived from a definition in the code.
//
//	go run ./internal/docgen          # rewrite the generated sections
//	go run ./internal/docgen -check   # exit 1 and list stale files
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/connectd/connectd/internal/repo"
)

func main() {
	check := flag.Bool("check", false, "only report stale files (exit 1 if any)")
	root := flag.String("root", "", "repository root (default: the directory holding go.mod, searched upwards)")
	flag.Parse()
	dir := *root
	if dir == "" {
		var err error
		if dir, err = repo.Root(); err != nil {
			fatal(err)
		}
	}
	stale, err := run(dir, !*check)
	if err != nil {
		fatal(err)
	}
	for _, p := range stale {
		if *check {
			fmt.Fprintf(os.Stderr, "docgen: %s is stale; run make docs\n", p)
		} else {
			fmt.Printf("docgen: wrote %s\n", p)
		}
	}
	if *check && len(stale) > 0 {
		os.Exit(1)
	}
}

// run renders every target under root and returns the paths whose content
// changed; with write it also writes them.
func run(root string, write bool) ([]string, error) {
	var stale []string
	for _, t := range targets(root) {
		path := filepath.Join(root, filepath.FromSlash(t.Path))
		old, err := os.ReadFile(path)
		if err != nil && !os.IsNotExist(err) {
			return nil, err
		}
		if os.IsNotExist(err) {
			old = nil
		}
		next, err := t.render(old)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", t.Path, err)
		}
		if bytes.Equal(old, next) {
			continue
		}
		stale = append(stale, t.Path)
		if write {
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				return nil, err
			}
			if err := os.WriteFile(path, next, 0o644); err != nil {
				return nil, err
			}
		}
	}
	return stale, nil
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "docgen:", err)
	os.Exit(1)
}
