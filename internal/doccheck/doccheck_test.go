package doccheck

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func root(t *testing.T) string {
	t.Helper()
	r, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func readAll(t *testing.T) []*Doc {
	t.Helper()
	files, err := Files(root(t))
	if err != nil {
		t.Fatal(err)
	}
	var docs []*Doc
	for _, f := range files {
		d, err := Read(root(t), f)
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, d)
	}
	if len(docs) < 5 {
		t.Fatalf("only %d docs found", len(docs))
	}
	return docs
}

// Every relative link of README.md and docs/ resolves, anchors included,
// every repository path named in inline code exists, and every test
// function named in inline code is defined.
func TestLinksAndPathsResolve(t *testing.T) {
	tests, err := TestFuncs(root(t))
	if err != nil {
		t.Fatal(err)
	}
	if !tests["TestLinksAndPathsResolve"] {
		t.Fatal("TestFuncs does not find this very test")
	}
	var problems []string
	links := 0
	for _, d := range readAll(t) {
		links += len(d.Links())
		problems = append(problems, CheckLinks(root(t), d)...)
		problems = append(problems, CheckPaths(root(t), d)...)
		problems = append(problems, CheckTestNames(d, tests)...)
	}
	if links == 0 {
		t.Fatal("no links found at all; the extractor is broken")
	}
	if len(problems) > 0 {
		t.Fatalf("%d broken references:\n%s", len(problems), strings.Join(problems, "\n"))
	}
}

// Every `make X` in the docs' code names a target of the Makefile.
func TestMakeTargetsExist(t *testing.T) {
	targets, err := Targets(filepath.Join(root(t), "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"quickstart", "test", "docs", "release", "build", "plugins"} {
		if !targets[want] {
			t.Errorf("the Makefile has no %s target", want)
		}
	}
	uses := 0
	for _, d := range readAll(t) {
		for _, u := range d.MakeUses() {
			for _, target := range MakeTargets(u) {
				uses++
				if !targets[target] {
					t.Errorf("%s: make target %q does not exist", u, target)
				}
			}
		}
	}
	if uses == 0 {
		t.Fatal("no make commands found in the docs; the extractor is broken")
	}
}

// The checker itself: a broken link, a missing anchor, a missing path and
// an unknown make target are found; good ones are not reported.
func TestCheckerFindsBrokenReferences(t *testing.T) {
	dir := t.TempDir()
	write := func(rel, text string) {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("docs/b.md", "# Title\n\n## Exactly-once (EOS), step 2\n")
	write("scripts/run.sh", "")
	write("docs/a.md", strings.Join([]string{
		"# A",
		"[ok](b.md) [ok anchor](b.md#exactly-once-eos-step-2) [self](#a) [web](https://example.com/x)",
		"[missing](c.md) [bad anchor](b.md#nope) [abs](/docs/b.md)",
		"Run `scripts/run.sh` and `scripts/gone.sh`, not `the scripts/ folder`.",
		"```sh",
		"make build plugins QUICKSTART_ARGS=--once",
		"bin/connectd connectors status orders --url x   # a comment: make nothing",
		"connectd-datagen spec",
		"```",
		"Prose may say make sure; code says `make lint`; `TestGone` and `TestHere` are tests.",
	}, "\n"))
	d, err := Read(dir, "docs/a.md")
	if err != nil {
		t.Fatal(err)
	}
	write("scripts/x_test.go", "package x\n\nfunc TestHere(t *testing.T) {}\n")
	tests, err := TestFuncs(dir)
	if err != nil {
		t.Fatal(err)
	}
	problems := strings.Join(append(append(CheckLinks(dir, d), CheckPaths(dir, d)...), CheckTestNames(d, tests)...), "\n")
	for _, want := range []string{`link "c.md"`, `link "b.md#nope"`, `link "/docs/b.md" is absolute`, "`scripts/gone.sh`", "`TestGone`"} {
		if !strings.Contains(problems, want) {
			t.Errorf("problems lack %s:\n%s", want, problems)
		}
	}
	for _, notWant := range []string{"b.md#exactly", `"#a"`, "example.com", "scripts/run.sh", "TestHere"} {
		if strings.Contains(problems, notWant) {
			t.Errorf("problems wrongly report %s:\n%s", notWant, problems)
		}
	}
	var makes []string
	for _, u := range d.MakeUses() {
		makes = append(makes, MakeTargets(u)...)
	}
	if !slices.Equal(makes, []string{"build", "plugins", "lint"}) {
		t.Errorf("make targets = %q, want [build plugins lint]", makes)
	}
	cds := d.ConnectdUses()
	if len(cds) != 1 || !slices.Equal(cds[0].Args, []string{"connectors", "status", "orders", "--url", "x"}) {
		t.Errorf("connectd uses = %+v", cds)
	}
}
