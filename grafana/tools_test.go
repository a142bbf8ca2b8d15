package grafana

import (
	"os/exec"
	"testing"

	"github.com/connectd/connectd/internal/citest"
)

// promTool returns the path of a Prometheus binary (prometheus, promtool).
// Missing, it fails the test under CI=true, and skips it with the reason
// otherwise: scripts/test.sh installs Debian's prometheus package.
func promTool(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err == nil {
		return p
	}
	citest.Unavailable(t, "%s is not installed: apt-get install -y --no-install-recommends prometheus (scripts/test.sh installs it)", name)
	return ""
}
