package worker

import (
	"testing"

	"github.com/connectd/connectd/framework/connconfig"
	"github.com/connectd/connectd/plugins/host"
)

// TestProcKey pins which connectors may share a plugin process: only those
// whose manifests name the same file with the same checksum. The chaos
// suite found the hole this closes: a manifest that copied another plugin's
// checksum for a tampered file was served by the genuine file's running
// process, so the tampered file was never checked.
func TestProcKey(t *testing.T) {
	base := host.Manifest{Name: "DatagenSource", Version: "1.0.0", Binary: "connectd-datagen", SHA256: "aa", Dir: "plugins"}
	with := func(f func(*host.Manifest)) host.Manifest { m := base; f(&m); return m }
	for _, tc := range []struct {
		name       string
		a, b       host.Manifest
		connA      string
		connB      string
		isolation  string
		wantShared bool
	}{
		{name: "same binary, two connectors", a: base, b: base, connA: "c1", connB: "c2", wantShared: true},
		{name: "other file, same checksum", a: base, b: with(func(m *host.Manifest) { m.Name, m.Binary = "Tampered", "connectd-tampered" }),
			connA: "c1", connB: "c2"},
		{name: "same file name in another plugin.path directory", a: base, b: with(func(m *host.Manifest) { m.Dir = "other" }),
			connA: "c1", connB: "c2"},
		{name: "another version", a: base, b: with(func(m *host.Manifest) { m.Version, m.SHA256 = "2.0.0", "bb" }),
			connA: "c1", connB: "c2"},
		{name: "isolated connectors", a: base, b: base, connA: "c1", connB: "c2", isolation: connconfig.IsolationConnector},
	} {
		t.Run(tc.name, func(t *testing.T) {
			iso := tc.isolation
			if iso == "" {
				iso = connconfig.IsolationPlugin
			}
			shared := procKey(tc.a, tc.connA, iso) == procKey(tc.b, tc.connB, iso)
			if shared != tc.wantShared {
				t.Errorf("share a process: %v, want %v", shared, tc.wantShared)
			}
		})
	}
}
