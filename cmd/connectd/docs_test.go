package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/connectd/connectd/internal/doccheck"
)

// Every `connectd ...` command line in README.md and docs/ names real
// subcommands: the words up to the first flag, argument or placeholder
// must walk the command tree (a|b alternatives each must exist).
func TestDocumentedCommandsExist(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	files, err := doccheck.Files(root)
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, f := range files {
		d, err := doccheck.Read(root, f)
		if err != nil {
			t.Fatal(err)
		}
		for _, u := range d.ConnectdUses() {
			if len(u.Args) == 0 {
				continue // the binary itself
			}
			checked++
			if problem := walkCommand(rootCommand(), u.Args); problem != "" {
				t.Errorf("%s: %s", u, problem)
			}
		}
	}
	if checked < 5 {
		t.Fatalf("only %d connectd commands found in the docs; the extractor is broken", checked)
	}
}

// walkCommand follows args down the tree and says what is wrong, if
// anything.
func walkCommand(node *command, args []string) string {
	path := node.name
	for _, a := range args {
		if len(node.children) == 0 {
			return "" // a leaf: the rest are its arguments
		}
		if strings.HasPrefix(a, "-") || strings.ContainsAny(a, "<[{$…") || a == "..." || a == "help" {
			return ""
		}
		alts := strings.Split(a, "|")
		var next *command
		for _, alt := range alts {
			c := child(node, alt)
			if c == nil {
				return "no command " + strings.TrimSpace(path+" "+alt)
			}
			next = c
		}
		if len(alts) > 1 {
			return "" // alternatives: each exists; their arguments differ
		}
		node, path = next, path+" "+a
	}
	return ""
}

func child(node *command, name string) *command {
	for _, c := range node.children {
		if c.name == name {
			return c
		}
	}
	return nil
}

func TestWalkCommand(t *testing.T) {
	for _, tc := range []struct {
		args []string
		ok   bool
	}{
		{[]string{"connectors", "status", "orders", "--url", "x"}, true},
		{[]string{"connectors", "offsets", "get", "orders"}, true},
		{[]string{"plugin", "install", "bin/plugins"}, true},
		{[]string{"connectors", "list|get|status"}, true},
		{[]string{"connectors", "list|gett"}, false},
		{[]string{"connector", "list"}, false},
		{[]string{"verify", "datagen", "--topic", "x"}, true},
		{[]string{"verify", "kafka"}, false},
		{[]string{"dev", "aerospike"}, false}, // connectd-dev's, not connectd's
		{[]string{"worker", "worker.properties"}, true},
	} {
		if got := walkCommand(rootCommand(), tc.args) == ""; got != tc.ok {
			t.Errorf("walkCommand(%q) ok = %v, want %v", tc.args, got, tc.ok)
		}
	}
}
