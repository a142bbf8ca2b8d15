package kafka

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const (
	docPath     = "../../docs/connectors/kafka-replication.md"
	beginMarker = "<!-- BEGIN GENERATED CONFIG (connectors/kafka: UPDATE_DOCS=1 go test -run TestConfigDoc) -->\n"
	endMarker   = "<!-- END GENERATED CONFIG -->\n"
)

// TestConfigDoc checks that the configuration reference in
// docs/connectors/kafka-replication.md is what the ConfigDef renders.
// UPDATE_DOCS=1 rewrites it.
func TestConfigDoc(t *testing.T) {
	raw, err := os.ReadFile(filepath.FromSlash(docPath))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	i, j := strings.Index(doc, beginMarker), strings.Index(doc, endMarker)
	if i < 0 || j < i {
		t.Fatalf("%s lacks the generated-config markers", docPath)
	}
	want := configDef().Markdown()
	if got := doc[i+len(beginMarker) : j]; got != want {
		if os.Getenv("UPDATE_DOCS") != "" {
			doc = doc[:i+len(beginMarker)] + want + doc[j:]
			if err := os.WriteFile(filepath.FromSlash(docPath), []byte(doc), 0o644); err != nil {
				t.Fatal(err)
			}
			return
		}
		t.Errorf("%s is stale; regenerate with UPDATE_DOCS=1 go test ./connectors/kafka/ -run TestConfigDoc", docPath)
	}
}
