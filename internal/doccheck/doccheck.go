// Package doccheck finds what the project's Markdown docs point at —
// relative links (with #anchors), repository paths in code, `make`
// targets and `connectd` command lines — so that tests can check that each
// one resolves. It reads Markdown only roughly (fenced blocks, inline code
// spans, inline and reference links), which is all the docs use.
//
// It checks links and paths itself; make targets and CLI commands are
// checked by tests that know the Makefile (this package's) and the command
// tree (cmd/connectd's). It must not fetch anything: external links are
// skipped.
package doccheck

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"unicode"
)

// Doc is one Markdown file, split into prose and code.
type Doc struct {
	Path  string   // relative to the repository root, slash-separated
	Lines []string // all lines
	// Code holds the code of the file: fenced blocks line by line, and
	// inline code spans, each with its line number.
	Code []Snippet
	// Prose holds the non-code lines with inline code removed.
	Prose []Snippet
}

// Snippet is text at a line of a file.
type Snippet struct {
	Line   int
	Text   string
	Inline bool // an inline code span (not a fenced block line)
}

// Files returns README.md and every Markdown file under docs/, relative
// to root.
func Files(root string) ([]string, error) {
	files := []string{"README.md"}
	err := filepath.WalkDir(filepath.Join(root, "docs"), func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".md") {
			rel, err := filepath.Rel(root, p)
			if err != nil {
				return err
			}
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	})
	slices.Sort(files[1:])
	return files, err
}

var inlineCode = regexp.MustCompile("(`+)([^`]|[^`].*?[^`])(`+)")

// Read reads and splits a Markdown file.
func Read(root, rel string) (*Doc, error) {
	raw, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
	if err != nil {
		return nil, err
	}
	d := &Doc{Path: rel, Lines: strings.Split(string(raw), "\n")}
	fence := ""
	for i, line := range d.Lines {
		n := i + 1
		trimmed := strings.TrimSpace(line)
		if fence != "" {
			if strings.HasPrefix(trimmed, fence) && strings.Trim(trimmed, fence[:1]) == "" {
				fence = ""
				continue
			}
			d.Code = append(d.Code, Snippet{Line: n, Text: line})
			continue
		}
		if strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~") {
			fence = trimmed[:3]
			continue
		}
		prose := inlineCode.ReplaceAllStringFunc(line, func(m string) string {
			sub := inlineCode.FindStringSubmatch(m)
			if len(sub[1]) == len(sub[3]) {
				d.Code = append(d.Code, Snippet{Line: n, Text: strings.TrimSpace(sub[2]), Inline: true})
			}
			return " "
		})
		d.Prose = append(d.Prose, Snippet{Line: n, Text: prose})
	}
	return d, nil
}

// Link is a link target found in prose.
type Link struct {
	Line   int
	Target string
}

var (
	inlineLink = regexp.MustCompile(`\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)
	refLink    = regexp.MustCompile(`^\s*\[[^\]]+\]:\s*(\S+)`)
	htmlLink   = regexp.MustCompile(`(?:href|src)="([^"]+)"`)
)

// Links returns the link targets of the prose.
func (d *Doc) Links() []Link {
	var out []Link
	for _, p := range d.Prose {
		for _, re := range []*regexp.Regexp{inlineLink, refLink, htmlLink} {
			for _, m := range re.FindAllStringSubmatch(p.Text, -1) {
				out = append(out, Link{Line: p.Line, Target: m[1]})
			}
		}
	}
	return out
}

// Anchors returns the GitHub heading anchors of the file.
func (d *Doc) Anchors() map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	fence := false
	for _, line := range d.Lines {
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
			fence = !fence
			continue
		}
		if fence || !strings.HasPrefix(t, "#") {
			continue
		}
		h := strings.TrimSpace(strings.TrimLeft(t, "#"))
		if h == t {
			continue
		}
		slug := Slug(h)
		if n := seen[slug]; n > 0 {
			out[fmt.Sprintf("%s-%d", slug, n)] = true
		} else {
			out[slug] = true
		}
		seen[slug]++
	}
	for _, m := range regexp.MustCompile(`<a (?:name|id)="([^"]+)"`).FindAllStringSubmatch(strings.Join(d.Lines, "\n"), -1) {
		out[m[1]] = true
	}
	return out
}

// Slug is GitHub's heading anchor: lower case, punctuation dropped
// (except - and _), spaces to hyphens.
func Slug(heading string) string {
	heading = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`).ReplaceAllString(heading, "$1")
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// CheckLinks reports every relative link of d that does not resolve: the
// file (or directory) must exist, and an #anchor must name a heading of
// the target Markdown file.
func CheckLinks(root string, d *Doc) []string {
	var problems []string
	for _, l := range d.Links() {
		t := l.Target
		if strings.Contains(t, "://") || strings.HasPrefix(t, "mailto:") {
			continue
		}
		path, anchor, _ := strings.Cut(t, "#")
		target := d.Path
		if path != "" {
			target = filepath.ToSlash(filepath.Join(filepath.Dir(d.Path), path))
			if strings.HasPrefix(path, "/") {
				problems = append(problems, fmt.Sprintf("%s:%d: link %q is absolute; use a path relative to the file", d.Path, l.Line, t))
				continue
			}
		}
		full := filepath.Join(root, filepath.FromSlash(target))
		if _, err := os.Stat(full); err != nil {
			problems = append(problems, fmt.Sprintf("%s:%d: link %q: %s does not exist", d.Path, l.Line, t, target))
			continue
		}
		if anchor == "" {
			continue
		}
		if !strings.HasSuffix(target, ".md") {
			continue
		}
		td, err := Read(root, target)
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s:%d: link %q: %v", d.Path, l.Line, t, err))
			continue
		}
		if !td.Anchors()[anchor] {
			problems = append(problems, fmt.Sprintf("%s:%d: link %q: %s has no heading #%s", d.Path, l.Line, t, target, anchor))
		}
	}
	return problems
}

// repoPath matches code that names a file or directory of the repository.
var repoPath = regexp.MustCompile(`^(?:\./)?((?:bench|cmd|connectors|deploy|docs|examples|framework|grafana|internal|offsets|plugins|quickstart|scripts|test)/[A-Za-z0-9_./*-]*|Makefile|README\.md|go\.mod|Dockerfile)$`)

// CheckPaths reports inline code spans that look like repository paths
// (scripts/kafka.sh, framework/rest/openapi.json, connectors/*/cmd/*) but
// match nothing.
func CheckPaths(root string, d *Doc) []string {
	var problems []string
	for _, c := range d.Code {
		if !c.Inline {
			continue
		}
		m := repoPath.FindStringSubmatch(c.Text)
		if m == nil {
			continue
		}
		p := strings.TrimSuffix(m[1], "/")
		matches, err := filepath.Glob(filepath.Join(root, filepath.FromSlash(p)))
		if err != nil || len(matches) == 0 {
			problems = append(problems, fmt.Sprintf("%s:%d: `%s` names no file or directory of the repository", d.Path, c.Line, c.Text))
		}
	}
	return problems
}

// Use is one mention of a command in a doc's code.
type Use struct {
	Path string
	Line int
	Args []string // the words after the command name
	Text string   // the whole code line or span
}

func (u Use) String() string {
	return fmt.Sprintf("%s:%d: %s", u.Path, u.Line, strings.TrimSpace(u.Text))
}

// segment splits shell text into simple commands.
var segment = regexp.MustCompile(`&&|\|\||[;|&()]|\$\(|\bdo\b|\bthen\b|\bxargs\b`)

// MakeUses returns every `make ...` in code, with the words after make.
func (d *Doc) MakeUses() []Use { return d.uses("make") }

// ConnectdUses returns every `connectd ...` (also bin/connectd,
// /usr/local/bin/connectd) in code that runs connectd, with the words
// after it: connectd must be the program of a simple command (so
// `install bin/connectd /usr/local/bin/` is no use).
func (d *Doc) ConnectdUses() []Use { return d.uses("connectd") }

func (d *Doc) uses(program string) []Use {
	var out []Use
	for _, c := range d.Code {
		text := c.Text
		if !c.Inline {
			// A shell comment is prose.
			if i := strings.Index(text, " #"); i >= 0 {
				text = text[:i]
			}
			if strings.HasPrefix(strings.TrimSpace(text), "#") {
				continue
			}
		}
		for _, seg := range segment.Split(text, -1) {
			f := strings.Fields(seg)
			for len(f) > 0 && (f[0] == "$" || f[0] == "sudo" || strings.Contains(f[0], "=") && !strings.HasPrefix(f[0], "-")) {
				f = f[1:] // prompts, sudo, VAR=value prefixes
			}
			if len(f) > 0 && (f[0] == program || strings.HasSuffix(f[0], "/"+program)) {
				out = append(out, Use{Path: d.Path, Line: c.Line, Args: f[1:], Text: c.Text})
			}
		}
	}
	return out
}

// MakeTargets returns the targets a use names: the words up to the first
// option or VAR=value.
func MakeTargets(u Use) []string {
	var out []string
	for _, a := range u.Args {
		if strings.HasPrefix(a, "-") || strings.Contains(a, "=") || !regexp.MustCompile(`^[A-Za-z0-9_.-]+$`).MatchString(a) {
			break
		}
		out = append(out, a)
	}
	return out
}

// Targets returns the targets a Makefile defines.
func Targets(makefile string) (map[string]bool, error) {
	f, err := os.Open(makefile)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]bool{}
	re := regexp.MustCompile(`^([A-Za-z0-9_.-]+(?:\s+[A-Za-z0-9_.-]+)*)\s*:([^=]|$)`)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if m := re.FindStringSubmatch(sc.Text()); m != nil {
			for _, t := range strings.Fields(m[1]) {
				if !strings.HasPrefix(t, ".") {
					out[t] = true
				}
			}
		}
	}
	return out, sc.Err()
}

var (
	testName = regexp.MustCompile(`^(Test|Benchmark|Fuzz)[A-Z0-9_]\w*$`)
	testFunc = regexp.MustCompile(`(?m)^func ((?:Test|Benchmark|Fuzz)\w*)\(`)
)

// TestFuncs returns the test, benchmark and fuzz functions defined in the
// repository's _test.go files.
func TestFuncs(root string) (map[string]bool, error) {
	out := map[string]bool{}
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") || d.Name() == "dist" || d.Name() == "bin") && p != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, "_test.go") {
			return nil
		}
		raw, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, m := range testFunc.FindAllStringSubmatch(string(raw), -1) {
			out[m[1]] = true
		}
		return nil
	})
	return out, err
}

// CheckTestNames reports inline code naming a test function (`TestX`,
// `BenchmarkX`, `FuzzX`) that no _test.go file defines.
func CheckTestNames(d *Doc, tests map[string]bool) []string {
	var problems []string
	for _, c := range d.Code {
		if c.Inline && testName.MatchString(c.Text) && !tests[c.Text] {
			problems = append(problems, fmt.Sprintf("%s:%d: `%s` is no test function of the repository", d.Path, c.Line, c.Text))
		}
	}
	return problems
}
