package repo_test

import (
	"os/exec"
	"path"
	"strings"
	"testing"

	"github.com/connectd/connectd/internal/repo"
)

const module = "github.com/connectd/connectd"

// goList runs `go list` in the repository root and returns its output
// lines.
func goList(t *testing.T, args ...string) []string {
	t.Helper()
	root, err := repo.Root()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", append([]string{"list"}, args...)...)
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("go list %s: %v\n%s", strings.Join(args, " "), err, stderr)
	}
	return strings.Split(strings.TrimSpace(string(out)), "\n")
}

// The framework is what connectors are built on; a framework package that
// imports a connector turns that around (and drags the connector into
// every binary that uses the framework).
func TestFrameworkDependsOnNoConnector(t *testing.T) {
	// .Deps is the whole closure, so one line per package says it all.
	lines := goList(t, "-f", `{{.ImportPath}} {{join .Deps " "}}`, "./framework/...")
	if len(lines) < 10 {
		t.Fatalf("go list ./framework/... found only %q", lines)
	}
	for _, line := range lines {
		f := strings.Fields(line)
		for _, dep := range f[1:] {
			if strings.HasPrefix(dep, module+"/connectors/") {
				t.Errorf("%s depends on %s", f[0], dep)
			}
		}
	}
}

// isTestSupport reports whether pkg, a package of this module, exists for
// tests or the quickstart rather than for production: a test double
// (aerofake), a test kit (kafkatest, resttest, plugintest), test connectors
// and plugins, or the test suites under test/.
func isTestSupport(pkg string) bool {
	rel, ok := strings.CutPrefix(pkg, module+"/")
	if !ok {
		return false
	}
	if strings.HasPrefix(rel, "test/") {
		return true
	}
	for _, elem := range strings.Split(rel, "/") {
		if strings.Contains(elem, "fake") || strings.HasPrefix(elem, "test") || strings.HasSuffix(elem, "test") {
			return true
		}
	}
	return rel == "internal/quickstart" || strings.HasPrefix(rel, "cmd/connectd-dev")
}

func TestIsTestSupport(t *testing.T) {
	for _, tc := range []struct {
		pkg  string
		want bool
	}{
		{module + "/connectors/aerospike/aerofake", true},
		{module + "/connectors/aerospike/aerotest", true},
		{module + "/internal/kafkatest", true},
		{module + "/framework/rest/resttest", true},
		{module + "/plugins/plugintest", true},
		{module + "/plugins/internal/testconnectors/cmd/testplugin", true},
		{module + "/framework/worker/internal/testworker", true},
		{module + "/test/chaos", true},
		{module + "/internal/quickstart", true},
		{module + "/cmd/connectd-dev", true},
		{module + "/cmd/connectd", false},
		{module + "/framework/herder", false},
		{module + "/connectors/datagen/datagencheck", false},
		{"testing", false}, // not this module's
	} {
		if got := isTestSupport(tc.pkg); got != tc.want {
			t.Errorf("isTestSupport(%s) = %v, want %v", path.Base(tc.pkg), got, tc.want)
		}
	}
}

// The connectd binary is what operators deploy: test doubles, test kits
// and the quickstart's helpers live in connectd-dev, not in it.
func TestConnectdLinksNoTestSupport(t *testing.T) {
	deps := goList(t, "-deps", "./cmd/connectd")
	if len(deps) < 50 {
		t.Fatalf("go list -deps ./cmd/connectd found only %d packages", len(deps))
	}
	for _, dep := range deps {
		if isTestSupport(dep) {
			t.Errorf("./cmd/connectd links %s", dep)
		}
	}
}
