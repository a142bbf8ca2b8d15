package aerospike

import (
	"os"
	"strings"
	"testing"
)

const docsPath = "../../docs/connectors/aerospike-sink.md"

// The configuration table in the user docs is generated from the
// ConfigDef; this test keeps it current.
func TestDocsConfigTable(t *testing.T) {
	raw, err := os.ReadFile(docsPath)
	if err != nil {
		t.Fatal(err)
	}
	const begin, end = "<!-- config:begin -->\n", "<!-- config:end -->"
	doc := string(raw)
	i, j := strings.Index(doc, begin), strings.Index(doc, end)
	if i < 0 || j < i {
		t.Fatalf("%s lacks the %q … %q markers", docsPath, begin, end)
	}
	want := doc[:i+len(begin)] + configDef().Markdown() + doc[j:]
	if want == doc {
		return
	}
	if os.Getenv("UPDATE_DOCS") == "1" {
		if err := os.WriteFile(docsPath, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Fatalf("%s: the configuration table is stale; run UPDATE_DOCS=1 go test ./connectors/aerospike/ -run TestDocsConfigTable", docsPath)
}
