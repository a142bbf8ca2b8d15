package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/connectd/connectd/framework/rest"
	"github.com/connectd/connectd/framework/workerconfig"
)

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// The generated sections of the docs equal what the code defines now.
func TestGeneratedDocsAreCurrent(t *testing.T) {
	stale, err := run(repoRoot(t), false)
	if err != nil {
		t.Fatal(err)
	}
	if len(stale) > 0 {
		t.Fatalf("generated docs are stale: %s; run `make docs` and commit the result", strings.Join(stale, ", "))
	}
}

// Every plugin the repository builds has a reference page.
func TestEveryShippedConnectorIsDocumented(t *testing.T) {
	root := repoRoot(t)
	mains, err := filepath.Glob(filepath.Join(root, "connectors", "*", "cmd", "*"))
	if err != nil {
		t.Fatal(err)
	}
	if len(mains) == 0 {
		t.Fatal("no connectors/*/cmd/* plugin mains found")
	}
	var known []string
	for _, c := range shipped {
		known = append(known, c.Main)
	}
	for _, m := range mains {
		rel, _ := filepath.Rel(root, m)
		if !slices.Contains(known, filepath.ToSlash(rel)) {
			t.Errorf("plugin %s has no entry in internal/docgen's shipped list (and so no docs/connectors page)", rel)
		}
	}
}

// Every worker key appears in docs/operations.md, and every REST operation
// in docs/rest-api.md: a check on the generator itself, independent of its
// table format.
func TestReferenceSectionsNameEveryKeyAndEndpoint(t *testing.T) {
	root := repoRoot(t)
	ops, err := os.ReadFile(filepath.Join(root, "docs", "operations.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range workerconfig.Def().Keys() {
		if !strings.Contains(string(ops), "`"+k.Name+"`") {
			t.Errorf("docs/operations.md does not document worker key %s", k.Name)
		}
	}
	api, err := os.ReadFile(filepath.Join(root, "docs", "rest-api.md"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(rest.OpenAPI(), &doc); err != nil {
		t.Fatal(err)
	}
	n := 0
	for path, item := range doc.Paths {
		for method := range item {
			if method == "parameters" {
				continue
			}
			n++
			row := "| " + strings.ToUpper(method) + " | `" + path + "` |"
			if !strings.Contains(string(api), row) {
				t.Errorf("docs/rest-api.md has no row for %s %s", strings.ToUpper(method), path)
			}
		}
	}
	if n < 20 {
		t.Fatalf("only %d operations in the OpenAPI document", n)
	}
}

func TestReplaceRegion(t *testing.T) {
	for _, tc := range []struct {
		name, doc, want, err string
	}{
		{"replaces between markers, keeps the rest",
			"intro\n<!-- x:begin -->\nold\n<!-- x:end -->\noutro\n",
			"intro\n<!-- x:begin -->\nnew\n<!-- x:end -->\noutro\n", ""},
		{"empty region", "<!-- x:begin -->\n<!-- x:end -->", "<!-- x:begin -->\nnew\n<!-- x:end -->", ""},
		{"missing begin", "<!-- x:end -->", "", "no \"<!-- x:begin -->\" marker"},
		{"missing end", "<!-- x:begin -->\n", "", "no \"<!-- x:end -->\" marker"},
		{"twice", "<!-- x:begin -->\n<!-- x:end --><!-- x:begin -->\n<!-- x:end -->", "", "appears twice"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := replaceRegion(tc.doc, "x", "new")
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

// A stale file is reported, and writing fixes it.
func TestRunReportsAndFixesStaleFiles(t *testing.T) {
	root := t.TempDir()
	src := repoRoot(t)
	var files []string
	for _, tg := range targets(src) {
		files = append(files, tg.Path)
	}
	examples, _ := filepath.Glob(filepath.Join(src, "examples", "linesource", "*.go"))
	examples = append(examples, filepath.Join(src, "examples", "linesource", "cmd", "connectd-lines", "main.go"))
	for _, e := range examples {
		rel, _ := filepath.Rel(src, e)
		files = append(files, rel)
	}
	for _, path := range files {
		tg := target{Path: path}
		raw, err := os.ReadFile(filepath.Join(src, tg.Path))
		if err != nil {
			t.Fatal(err)
		}
		dst := filepath.Join(root, tg.Path)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		if tg.Path == "docs/operations.md" {
			raw = []byte(strings.Replace(string(raw), "<!-- worker-config:begin -->\n", "<!-- worker-config:begin -->\nan edit by hand\n", 1))
		}
		if err := os.WriteFile(dst, raw, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	stale, err := run(root, false)
	if err != nil || !slices.Equal(stale, []string{"docs/operations.md"}) {
		t.Fatalf("stale = %v, %v; want [docs/operations.md]", stale, err)
	}
	if _, err := run(root, true); err != nil {
		t.Fatal(err)
	}
	if stale, err := run(root, false); err != nil || len(stale) != 0 {
		t.Fatalf("after writing: stale = %v, %v", stale, err)
	}
}
