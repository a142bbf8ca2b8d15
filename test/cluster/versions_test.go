package cluster

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/connectd/connectd/framework/rest/api"
	"github.com/connectd/connectd/internal/kafkatest"
)

// buildDatagenVersion builds the datagen plugin with another version
// compiled in, under the same file name as the default build, so that the
// catalog must keep the two side by side.
func buildDatagenVersion(t *testing.T, version string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "connectd-datagen")
	cmd := exec.Command("go", "build", "-o", out,
		"-ldflags", "-X github.com/connectd/connectd/connectors/datagen.Version="+version,
		"./connectors/datagen/cmd/connectd-datagen")
	cmd.Dir = repoRoot(t)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, b)
	}
	return out
}

// TestPluginVersionsSideBySide: two versions of DatagenSource installed
// side by side; connector.plugin.version chooses one, the status of the
// connector and of every task (wherever it runs: the other worker's status
// comes from the status topic) reports the running version, a changed
// range moves the connector to the other version, and a range nothing
// satisfies is a 400 naming the installed versions.
func TestPluginVersionsSideBySide(t *testing.T) {
	c := newCluster(t, nil)
	newer := buildDatagenVersion(t, "0.2.0")
	if out, err := exec.Command(c.bin, "plugin", "install", "--plugin-path", c.pluginDir, newer).CombinedOutput(); err != nil {
		t.Fatalf("plugin install: %v\n%s", err, out)
	}
	out, err := exec.Command(c.bin, "plugin", "list", "--plugin-path", c.pluginDir).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "0.1.0") || !strings.Contains(string(out), "0.2.0") {
		t.Fatalf("plugin list after installing two versions: %v\n%s", err, out)
	}
	w1 := c.start()
	c.start()
	ctx := ctxT(t, 3*time.Minute)
	cl := w1.client()

	ps, err := cl.Plugins(ctx, true)
	if err != nil {
		t.Fatal(err)
	}
	var versions []string
	for _, p := range ps {
		if p.Class == "DatagenSource" {
			versions = append(versions, p.Version)
		}
	}
	if strings.Join(versions, ",") != "0.1.0,0.2.0" {
		t.Fatalf("GET /connector-plugins lists DatagenSource versions %v, want one entry per version [0.1.0 0.2.0]", versions)
	}

	topic := kafkatest.UniqueName(t, "ver")
	kafkatest.CreateTopic(t, topic)
	cfg := datagenConfig(topic, 4)
	cfg["connector.plugin.version"] = "0.1.0"
	if _, err := cl.Create(ctx, "ver", cfg, ""); err != nil {
		t.Fatal(err)
	}
	waitVersion(ctx, t, w1, "ver", 4, "0.1.0")

	res, err := cl.Validate(ctx, "DatagenSource", cfg)
	if err != nil {
		t.Fatal(err)
	}
	found := map[string]string{}
	for _, ci := range res.Configs {
		if strings.HasSuffix(ci.Value.Name, ".plugin.version") && ci.Value.Value != nil {
			found[ci.Value.Name] = *ci.Value.Value
		}
	}
	if found["connector.plugin.version"] != "0.1.0" || len(found) != 4 {
		t.Fatalf("validate *.plugin.version keys = %v, want connector.plugin.version=0.1.0 and the three converter keys", found)
	}

	cfg["connector.plugin.version"] = "[0.2,1.0)"
	if _, _, err := cl.PutConfig(ctx, "ver", cfg); err != nil {
		t.Fatal(err)
	}
	waitVersion(ctx, t, w1, "ver", 4, "0.2.0")

	cfg["connector.plugin.version"] = "[1.0,2.0)"
	_, _, err = cl.PutConfig(ctx, "ver", cfg)
	if err == nil || !strings.Contains(err.Error(), "400") || !strings.Contains(err.Error(), "available versions: 0.1.0, 0.2.0") {
		t.Fatalf("PUT with a range no installed version satisfies: err = %v, want a 400 naming 0.1.0, 0.2.0", err)
	}
}

// waitVersion waits until the connector and its want tasks are RUNNING
// with plugin version v in their status.
func waitVersion(ctx context.Context, t *testing.T, w *workerProc, name string, want int, v string) {
	t.Helper()
	var last api.ConnectorStateInfo
	for {
		st, err := w.client().Status(ctx, name)
		if err == nil {
			last = st
			ok := st.Connector.State == "RUNNING" && st.Connector.Version == v && len(st.Tasks) == want
			for _, ts := range st.Tasks {
				ok = ok && ts.State == "RUNNING" && ts.Version == v
			}
			if ok {
				return
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("status never showed version %s on the connector and %d tasks; last %+v\n%s", v, want, last, w.c.logs())
		case <-time.After(200 * time.Millisecond):
		}
	}
}
