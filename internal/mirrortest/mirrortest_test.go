package mirrortest_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/connectd/connectd/internal/mirrortest"
)

// TestRoundTrip: what MM2's encoders write, MM2's decoders read back, for
// each format; bytes that are no record of the format come back as an
// error, not as fields.
func TestRoundTrip(t *testing.T) {
	tool := mirrortest.Build(t)
	for _, tc := range []mirrortest.Record{
		{Format: mirrortest.Heartbeat, SourceClusterAlias: "a", TargetClusterAlias: "b", Timestamp: 1_700_000_000_000},
		{Format: mirrortest.Checkpoint, ConsumerGroupID: "g", Topic: "a.t", Partition: 3, UpstreamOffset: 150, DownstreamOffset: 102, Metadata: "m"},
		{Format: mirrortest.OffsetSync, Topic: "t", Partition: 1, UpstreamOffset: 7, DownstreamOffset: 5},
	} {
		t.Run(tc.Format, func(t *testing.T) {
			kv := tool.Encode(t, tc)
			got := tool.Decode(t, tc.Format, kv[0], mirrortest.KV{Key: []byte{0}, Value: []byte{0}})
			if got[0] != tc {
				t.Errorf("decoded %+v, want %+v", got[0], tc)
			}
			if got[1].Error == "" {
				t.Errorf("garbage decoded as %+v", got[1])
			}
		})
	}
}

// TestMissingJava: without java on PATH the tool's build ends the test, as
// a failure under CI=true and a skip otherwise, with the reason.
func TestMissingJava(t *testing.T) {
	for _, tc := range []struct {
		ci, want string
		fail     bool
	}{{"true", "--- FAIL: TestMissingJavaChild", true}, {"", "--- SKIP: TestMissingJavaChild", false}} {
		t.Run("CI="+tc.ci, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run", "^TestMissingJavaChild$", "-test.v")
			cmd.Env = append(os.Environ(), "MIRRORTEST_CHILD=1", "CI="+tc.ci, "PATH="+t.TempDir())
			out, err := cmd.CombinedOutput()
			if (err != nil) != tc.fail || !strings.Contains(string(out), tc.want) || !strings.Contains(string(out), "java is not installed") {
				t.Fatalf("err %v, output:\n%s\nwant %q and the reason", err, out, tc.want)
			}
		})
	}
}

func TestMissingJavaChild(t *testing.T) {
	if os.Getenv("MIRRORTEST_CHILD") != "1" {
		t.Skip("run by TestMissingJava")
	}
	mirrortest.Build(t)
	t.Fatal("Build returned without java")
}
