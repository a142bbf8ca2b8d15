package citest

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// Each case runs TestUnavailableChild in a child process with CI set or
// not and checks how it ended.
func TestUnavailable(t *testing.T) {
	for _, tc := range []struct {
		ci   string
		want string // in the child's verbose output
		fail bool
	}{
		{"true", "--- FAIL: TestUnavailableChild", true},
		{"", "--- SKIP: TestUnavailableChild", false},
		{"false", "--- SKIP: TestUnavailableChild", false},
	} {
		t.Run("CI="+tc.ci, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run", "^TestUnavailableChild$", "-test.v")
			cmd.Env = append(os.Environ(), "CITEST_CHILD=1", "CI="+tc.ci)
			out, err := cmd.CombinedOutput()
			if (err != nil) != tc.fail || !strings.Contains(string(out), tc.want) || !strings.Contains(string(out), "no broker at 127.0.0.1:1") {
				t.Fatalf("CI=%q: err %v, output:\n%s\nwant %q and the reason", tc.ci, err, out, tc.want)
			}
		})
	}
}

func TestUnavailableChild(t *testing.T) {
	if os.Getenv("CITEST_CHILD") != "1" {
		return
	}
	Unavailable(t, "no broker at %s", "127.0.0.1:1")
	t.Fatal("Unavailable returned")
}
