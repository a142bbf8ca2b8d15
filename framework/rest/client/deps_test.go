package client_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/connectd/connectd/internal/citest"
	"github.com/connectd/connectd/internal/repo"
)

// The client and the API's types are documented as usable by programs that
// do not link librdkafka (and against Kafka Connect itself): nothing in
// their dependency closure may use cgo. The standard library's cgo files
// (net, os/user) are excluded: they have pure-Go fallbacks, which
// CGO_ENABLED=0 selects, and that build is checked too.
func TestDependenciesArePureGo(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		citest.Unavailable(t, "the go command is not on PATH")
	}
	root, err := repo.Root()
	if err != nil {
		t.Fatal(err)
	}
	for _, pkg := range []string{
		"github.com/connectd/connectd/framework/rest/client",
		"github.com/connectd/connectd/framework/rest/api",
	} {
		t.Run(pkg[strings.LastIndexByte(pkg, '/')+1:], func(t *testing.T) {
			// With cgo on (the default build): no package outside the
			// standard library may have cgo files.
			for _, line := range goList(t, root, "1", pkg, "{{.ImportPath}} {{.Standard}} {{len .CgoFiles}}") {
				f := strings.Fields(line)
				if len(f) != 3 {
					t.Fatalf("unexpected go list line %q", line)
				}
				if strings.Contains(f[0], "confluent-kafka-go") {
					t.Errorf("%s depends on %s", pkg, f[0])
				} else if f[1] == "false" && f[2] != "0" {
					t.Errorf("%s depends on %s, which uses cgo", pkg, f[0])
				}
			}
			// With cgo off: every dependency still builds.
			for _, line := range goList(t, root, "0", pkg, "{{.ImportPath}} {{if .Error}}{{.Error}}{{end}}") {
				if path, errText, _ := strings.Cut(line, " "); errText != "" {
					t.Errorf("%s with CGO_ENABLED=0: %s: %s", pkg, path, errText)
				}
			}
		})
	}
}

// goList runs go list -deps -e over pkg with CGO_ENABLED=cgo and returns
// one line per package.
func goList(t *testing.T, root, cgo, pkg, format string) []string {
	t.Helper()
	cmd := exec.Command("go", "list", "-deps", "-e", "-f", format, pkg)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED="+cgo)
	out, err := cmd.Output()
	if err != nil {
		var stderr string
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("go list %s (CGO_ENABLED=%s): %v\n%s", pkg, cgo, err, stderr)
	}
	return strings.Split(strings.TrimSpace(string(out)), "\n")
}
