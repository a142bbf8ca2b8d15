package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"

	"github.com/connectd/connectd/connectors/aerospike"
	"github.com/connectd/connectd/connectors/datagen"
	"github.com/connectd/connectd/connectors/kafka"
	"github.com/connectd/connectd/connectors/kafka/checkpoint"
	"github.com/connectd/connectd/connectors/kafka/heartbeat"
	"github.com/connectd/connectd/framework/configdef"
	"github.com/connectd/connectd/framework/connconfig"
	"github.com/connectd/connectd/framework/convert"
	"github.com/connectd/connectd/framework/convert/schemaregistry"
	"github.com/connectd/connectd/framework/rest"
	"github.com/connectd/connectd/framework/sdk"
	"github.com/connectd/connectd/framework/transform"
	"github.com/connectd/connectd/framework/workerconfig"
)

// shipped lists every connector plugin the repository builds
// (connectors/*/cmd/*) with its reference page. The test fails when a
// plugin main has no entry.
var shipped = []struct {
	Main string // plugin main package directory
	Spec func() sdk.Spec
	Doc  string
}{
	{"connectors/datagen/cmd/connectd-datagen", datagen.New().Spec, "docs/connectors/datagen.md"},
	{"connectors/aerospike/cmd/connectd-aerospike-sink", (&aerospike.Connector{}).Spec, "docs/connectors/aerospike-sink.md"},
	{"connectors/kafka/cmd/connectd-kafka-replication", kafka.NewConnector().Spec, "docs/connectors/kafka-replication.md"},
	{"connectors/kafka/cmd/connectd-kafka-checkpoint", checkpoint.NewConnector().Spec, "docs/connectors/kafka-checkpoint.md"},
	{"connectors/kafka/cmd/connectd-kafka-heartbeat", heartbeat.NewConnector().Spec, "docs/connectors/kafka-heartbeat.md"},
}

// target is one generated file: its regions, and the text it starts from
// when it does not exist yet.
type target struct {
	Path     string
	Skeleton string
	Regions  []region
}

type region struct {
	Name    string
	Content func() (string, error)
}

// targets lists the generated files; root is where the example sources are read.
func targets(root string) []target {
	ts := []target{
		{
			Path: "docs/operations.md",
			Regions: []region{{"worker-config", func() (string, error) {
				return workerconfig.Def().Markdown(), nil
			}}},
		},
		{
			Path: "docs/connectors/common.md",
			Regions: []region{
				{"source-config", defMarkdown(connconfig.CommonDef(sdk.Source))},
				{"sink-config", defMarkdown(connconfig.CommonDef(sdk.Sink))},
			},
		},
		{
			Path: "docs/converters-and-transforms.md",
			Regions: []region{
				{"converters", converters},
				{"transforms", transforms},
				{"predicates", predicates},
			},
		},
		{
			Path: "docs/writing-a-connector.md",
			Regions: []region{
				{"example-connector", exampleFile(root, "examples/linesource/connector.go")},
				{"example-task", exampleFile(root, "examples/linesource/task.go")},
				{"example-main", exampleFile(root, "examples/linesource/cmd/connectd-lines/main.go")},
				{"example-suite", exampleFunc(root, "examples/linesource/linesource_test.go", "TestSuite")},
			},
		},
		{
			Path:    "docs/rest-api.md",
			Regions: []region{{"openapi", func() (string, error) { return openAPIMarkdown(rest.OpenAPI()) }}},
		},
	}
	for _, c := range shipped {
		spec := c.Spec()
		ts = append(ts, target{
			Path:     c.Doc,
			Skeleton: connectorSkeleton(spec),
			Regions: []region{
				{"spec", func() (string, error) { return specMarkdown(c.Main, spec), nil }},
				{"config", defMarkdown(spec.Config)},
			},
		})
	}
	return ts
}

func defMarkdown(d *configdef.Def) func() (string, error) {
	return func() (string, error) { return d.Markdown(), nil }
}

// render replaces the regions of old (or of the skeleton when old is nil).
func (t target) render(old []byte) ([]byte, error) {
	doc := string(old)
	if old == nil {
		if t.Skeleton == "" {
			return nil, fmt.Errorf("the file is missing (it has hand-written parts; restore it)")
		}
		doc = t.Skeleton
	}
	for _, r := range t.Regions {
		content, err := r.Content()
		if err != nil {
			return nil, fmt.Errorf("region %s: %w", r.Name, err)
		}
		if doc, err = replaceRegion(doc, r.Name, content); err != nil {
			return nil, err
		}
	}
	return []byte(doc), nil
}

func markers(name string) (begin, end string) {
	return "<!-- " + name + ":begin -->\n", "<!-- " + name + ":end -->"
}

// replaceRegion puts content between the markers of region name.
func replaceRegion(doc, name, content string) (string, error) {
	begin, end := markers(name)
	i := strings.Index(doc, begin)
	if i < 0 {
		return "", fmt.Errorf("no %q marker", strings.TrimSpace(begin))
	}
	j := strings.Index(doc[i:], end)
	if j < 0 {
		return "", fmt.Errorf("no %q marker after %q", end, strings.TrimSpace(begin))
	}
	if strings.Count(doc, begin) > 1 {
		return "", fmt.Errorf("marker %q appears twice", strings.TrimSpace(begin))
	}
	if content != "" && !strings.HasSuffix(content, "\n") {
		content += "\n"
	}
	return doc[:i+len(begin)] + content + doc[i+j:], nil
}

// connectorSkeleton starts a connector's page; the text outside the
// regions is then written by hand.
func connectorSkeleton(s sdk.Spec) string {
	sb, se := markers("spec")
	cb, ce := markers("config")
	return "# " + s.Class + "\n\n" + s.Summary + "\n\n" + sb + se + "\n\n## Configuration\n\n" +
		"The connector's own keys, generated from its config definition by `make docs`. Every connector also takes the " +
		"[common keys](common.md).\n\n" + cb + ce + "\n"
}

func specMarkdown(main string, s sdk.Spec) string {
	var b strings.Builder
	b.WriteString("| | |\n|---|---|\n")
	fmt.Fprintf(&b, "| `connector.class` | `%s` |\n", s.Class)
	fmt.Fprintf(&b, "| type | %s |\n", s.Type)
	fmt.Fprintf(&b, "| version | %s |\n", s.Version)
	plugin := main[strings.LastIndexByte(main, '/')+1:]
	fmt.Fprintf(&b, "| plugin binary | `%s` (built from `%s` by `make plugins`) |\n", plugin, main)
	if s.Type == sdk.Source {
		eos := "no"
		if s.ExactlyOnce {
			eos = "yes (`exactly.once.support=required` is accepted)"
		}
		fmt.Fprintf(&b, "| exactly-once source | %s |\n", eos)
		tb := "no"
		if s.DefinesTransactionBoundaries {
			tb = "yes"
		}
		fmt.Fprintf(&b, "| `transaction.boundary=connector` | %s |\n", tb)
		if s.RawBytes {
			b.WriteString("| raw bytes | yes: keys and values are written unchanged whatever the worker's default converters; converters set in the connector config still apply |\n")
		}
	}
	return b.String()
}

func converters() (string, error) {
	var b strings.Builder
	// The Schema Registry converters ship with every connectd plugin
	// (plugins.WithConverters), so they are documented with the built-ins.
	for _, c := range convert.NewSet(schemaregistry.Infos()...).Infos() {
		uses := []string{}
		if c.Record {
			uses = append(uses, "`key.converter`", "`value.converter`")
		}
		if c.Header {
			uses = append(uses, "`header.converter`")
		}
		fmt.Fprintf(&b, "### %s\n\n%s\n\n", shortClass(c.Class), c.Summary)
		fmt.Fprintf(&b, "Class `%s`; aliases %s. Usable as %s.\n\n", c.Class, codeList(c.Aliases), strings.Join(uses, ", "))
		keys := c.Def().Markdown()
		if strings.Count(keys, "\n") > 2 {
			b.WriteString("Settings (after the `key.converter.`, `value.converter.` or `header.converter.` prefix):\n\n" + keys + "\n")
		}
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}

func transforms() (string, error) {
	var b strings.Builder
	for _, t := range transform.Transformations() {
		fmt.Fprintf(&b, "### %s\n\n%s.\n\nClass `%s`; aliases %s. Settings (after `transforms.<alias>.`):\n\n",
			shortClass(t.Class), t.Summary, t.Class, codeList(t.Aliases))
		b.WriteString(t.New().Def().Markdown() + "\n")
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}

func predicates() (string, error) {
	var b strings.Builder
	for _, p := range transform.Predicates() {
		fmt.Fprintf(&b, "### %s\n\n%s.\n\nClass `%s`; aliases %s.", shortClass(p.Class), p.Summary, p.Class, codeList(p.Aliases))
		keys := p.New().Def().Markdown()
		if strings.Count(keys, "\n") > 2 {
			b.WriteString(" Settings (after `predicates.<alias>.`):\n\n" + keys)
		} else {
			b.WriteString(" No settings.\n")
		}
		b.WriteString("\n")
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}

func shortClass(class string) string { return class[strings.LastIndexByte(class, '.')+1:] }

func codeList(xs []string) string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = "`" + x + "`"
	}
	return strings.Join(out, ", ")
}

// exampleFile renders a file of the worked example as a Go code block.
func exampleFile(root, path string) func() (string, error) {
	return func() (string, error) {
		raw, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(path)))
		if err != nil {
			return "", err
		}
		return "```go\n// " + path + "\n" + string(raw) + "```\n", nil
	}
}

// exampleFunc renders one function (with its doc comment) of a Go file.
func exampleFunc(root, path, name string) func() (string, error) {
	return func() (string, error) {
		full := filepath.Join(root, filepath.FromSlash(path))
		src, err := os.ReadFile(full)
		if err != nil {
			return "", err
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, full, src, parser.ParseComments)
		if err != nil {
			return "", err
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Name.Name != name {
				continue
			}
			start := fn.Pos()
			if fn.Doc != nil {
				start = fn.Doc.Pos()
			}
			code := string(src[fset.Position(start).Offset:fset.Position(fn.End()).Offset])
			return "```go\n// " + path + "\n" + code + "\n```\n", nil
		}
		return "", fmt.Errorf("%s has no func %s", path, name)
	}
}
