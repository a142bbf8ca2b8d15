package host

import (
	"os/exec"
	"testing"
	"time"
)

// TestExitNotice: the pidfd-based notice stays open while the process
// lives and closes once it has exited, before anyone reaps it.
func TestExitNotice(t *testing.T) {
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	exited := exitNotice(cmd.Process.Pid)
	if exited == nil {
		t.Skip("pidfd_open is not available")
	}
	// Nothing to await: the assertion is that no notice comes meanwhile.
	select {
	case <-exited:
		t.Fatal("exit notice for a live process")
	case <-time.After(200 * time.Millisecond):
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-exited:
	case <-time.After(10 * time.Second):
		t.Fatal("no exit notice for a killed (unreaped) process")
	}
}
