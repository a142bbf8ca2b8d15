package restapi

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/connectd/connectd/connectors/datagen"
)

// datagenVersion is the version of the datagen plugin the harness
// installs (built without -ldflags).
var datagenVersion = datagen.Version

// Kafka Connect 4.1 (KIP-891) puts the running plugin's version in every
// connector and task status object ("version", left out when empty) and
// lists connector.plugin.version and the three converter version keys in
// validate results.
func (p *parityWorker) testStatusVersion(t *testing.T) {
	type state struct {
		State    string `json:"state"`
		WorkerID string `json:"worker_id"`
		Version  string `json:"version"`
	}
	type status struct {
		Connector state   `json:"connector"`
		Tasks     []state `json:"tasks"`
	}
	check := func(what string, s status) {
		t.Helper()
		if s.Connector.Version != datagenVersion || len(s.Tasks) != 1 || s.Tasks[0].Version != datagenVersion {
			t.Errorf("%s: status %+v, want version %s on the connector and its task", what, s, datagenVersion)
		}
	}
	code, _, body := rawHdr(t, "GET", p.url+"/connectors/"+p.name+"/status", "", true)
	var st status
	if code != 200 || json.Unmarshal([]byte(body), &st) != nil {
		t.Fatalf("status: %d %s", code, body)
	}
	check("GET status", st)

	code, _, body = rawHdr(t, "GET", p.url+"/connectors/"+p.name+"/tasks/0/status", "", true)
	var ts state
	if code != 200 || json.Unmarshal([]byte(body), &ts) != nil || ts.Version != datagenVersion {
		t.Errorf("task status: %d %s, want version %s", code, body, datagenVersion)
	}

	code, _, body = rawHdr(t, "GET", p.url+"/connectors?expand=status", "", true)
	var exp map[string]struct {
		Status status `json:"status"`
	}
	if code != 200 || json.Unmarshal([]byte(body), &exp) != nil {
		t.Fatalf("expand=status: %d %s", code, body)
	}
	check("expand=status", exp[p.name].Status)

	code, _, body = rawHdr(t, "POST", p.url+"/connectors/"+p.name+"/restart?includeTasks=true", "", true)
	var rs status
	if code != 202 || json.Unmarshal([]byte(body), &rs) != nil {
		t.Fatalf("restart: %d %s, want 202 with the status", code, body)
	}
	check("restart 202 body", rs)
}

func (p *parityWorker) testValidatePluginVersion(t *testing.T) {
	code, _, body := rawHdr(t, "GET", p.url+"/", "", true)
	var info struct{ Version string }
	if code != 200 || json.Unmarshal([]byte(body), &info) != nil || info.Version == "" {
		t.Fatalf("GET /: %d %s", code, body)
	}
	validate := func(extra map[string]string) (int, string) {
		cfg := map[string]string{"name": "parity-versions"}
		for k, v := range p.cfg {
			cfg[k] = v
		}
		for k, v := range extra {
			cfg[k] = v
		}
		code, _, body := rawHdr(t, "PUT", p.url+"/connector-plugins/"+datagenClass+"/config/validate", mustJSON(cfg), true, "Content-Type", "application/json")
		return code, body
	}
	code, body = validate(nil)
	var res struct {
		Configs []struct {
			Definition *struct {
				Name, Type, Group string
			} `json:"definition"`
			Value struct {
				Name   string
				Value  *string
				Errors []string
			} `json:"value"`
		} `json:"configs"`
	}
	if code != 200 || json.Unmarshal([]byte(body), &res) != nil {
		t.Fatalf("validate: %d %s", code, body)
	}
	want := map[string]string{
		"connector.plugin.version":        datagenVersion, // the version that runs when none is chosen
		"key.converter.plugin.version":    info.Version,
		"value.converter.plugin.version":  info.Version,
		"header.converter.plugin.version": info.Version,
	}
	for _, c := range res.Configs {
		w, ok := want[c.Value.Name]
		if !ok {
			continue
		}
		delete(want, c.Value.Name)
		if c.Definition == nil || c.Definition.Type != "STRING" || c.Definition.Group != "Common" || c.Value.Value == nil || *c.Value.Value != w || len(c.Value.Errors) != 0 {
			t.Errorf("%s: definition %+v value %+v, want a STRING key of group Common with value %q", c.Value.Name, c.Definition, c.Value, w)
		}
	}
	if len(want) != 0 {
		t.Errorf("validate does not list %v", want)
	}

	for _, tc := range []struct {
		name  string
		extra map[string]string
		want  []string // in the 400's message
	}{
		{"no such connector version", map[string]string{"connector.plugin.version": "[9.0,)"},
			[]string{"Plugin DatagenSource not found that matches the version range [9.0,)", "available versions: " + datagenVersion}},
		{"bare version is exact", map[string]string{"connector.plugin.version": "0.1.1"},
			[]string{"version range [0.1.1]", "available versions: " + datagenVersion}},
		{"invalid range", map[string]string{"connector.plugin.version": "[1.0"}, []string{"Invalid version range for DatagenSource"}},
		{"no such converter version", map[string]string{"value.converter": "org.apache.kafka.connect.json.JsonConverter", "value.converter.plugin.version": "[99,)"},
			[]string{"value.converter.plugin.version", "available versions: " + info.Version}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, body := validate(tc.extra)
			if code != 400 || !strings.Contains(body, `"error_code":400`) {
				t.Fatalf("validate: %d %s, want 400", code, body)
			}
			for _, w := range tc.want {
				if !strings.Contains(body, w) {
					t.Errorf("400 body %s does not contain %q", body, w)
				}
			}
		})
	}
	// The version the config asks for is accepted, and ?version= chooses
	// the plugin config as Kafka Connect's endpoint does.
	if code, body := validate(map[string]string{"connector.plugin.version": "[0.1,1.0)"}); code != 200 {
		t.Errorf("validate with a satisfiable range: %d %s", code, body)
	}
	if code, _, body := rawHdr(t, "GET", p.url+"/connector-plugins/"+datagenClass+"/config?version="+datagenVersion, "", true); code != 200 {
		t.Errorf("plugin config ?version=%s: %d %s", datagenVersion, code, body)
	}
	if code, _, body := rawHdr(t, "GET", p.url+"/connector-plugins/"+datagenClass+"/config?version=9.9", "", true); code != 400 || !strings.Contains(body, "available versions: "+datagenVersion) {
		t.Errorf("plugin config ?version=9.9: %d %s, want 400 naming the installed versions", code, body)
	}
}
