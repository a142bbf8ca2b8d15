package restapi

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A connector class the worker refuses — not installed, or installed with
// a binary that no longer matches its manifest's checksum — is the
// request's problem: 400 naming connector.class, never a 500. (The chaos
// suite's bad-input corpus found both answered 500.)
func TestRefusedConnectorClasses(t *testing.T) {
	c := newCluster(t, 1, nil)
	url := c.workers[0].url

	// Tamper with a copy of the datagen plugin under another class.
	mf, err := os.ReadFile(filepath.Join(c.pluginDir, datagenClass+"@"+datagenVersion+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(mf, &m); err != nil {
		t.Fatal(err)
	}
	bin, err := os.ReadFile(filepath.Join(c.pluginDir, m["binary"].(string)))
	if err != nil {
		t.Fatal(err)
	}
	m["name"], m["binary"] = "TamperedSource", "tampered-binary"
	out, _ := json.Marshal(m)
	if err := os.WriteFile(filepath.Join(c.pluginDir, "tampered-binary"), append(bin, 0), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(c.pluginDir, "TamperedSource.json"), out, 0o644); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		what, method, path, body string
		parts                    []string
	}{
		{"create with an unknown class", "POST", "/connectors",
			`{"name":"x","config":{"connector.class":"NoSuchConnector"}}`, []string{"connector.class", "NoSuchConnector"}},
		{"put config with an unknown class", "PUT", "/connectors/x/config",
			`{"connector.class":"NoSuchConnector"}`, []string{"connector.class"}},
		{"validate an unknown class", "PUT", "/connector-plugins/NoSuchConnector/config/validate",
			`{"connector.class":"NoSuchConnector"}`, []string{"connector.class"}},
		{"create with a tampered binary", "PUT", "/connectors/t/config",
			`{"connector.class":"TamperedSource","kafka.topic":"t"}`, []string{"connector.class", "checksum mismatch", "reinstall"}},
		{"validate a tampered binary", "PUT", "/connector-plugins/TamperedSource/config/validate",
			`{"connector.class":"TamperedSource","kafka.topic":"t"}`, []string{"checksum mismatch"}},
	} {
		code, _, body := raw(t, tc.method, url+tc.path, tc.body, true)
		wantError(t, tc.what, code, body, 400, tc.parts...)
	}
	code, _, body := raw(t, "GET", url+"/connectors", "", true)
	if code != 200 || strings.TrimSpace(body) != "[]" {
		t.Fatalf("refused requests created connectors: %d %s", code, body)
	}
}
