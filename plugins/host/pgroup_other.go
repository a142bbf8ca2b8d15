//go:build !unix

package host

import (
	"os"
	"os/exec"
)

// setProcessGroup: no process groups here.
func setProcessGroup(*exec.Cmd) {}

// killGroup kills the plugin process only: without process groups its
// children cannot be reached.
func killGroup(pid int) error {
	if pid <= 0 {
		return nil
	}
	p, err := os.FindProcess(pid)
	if err != nil {
		return nil
	}
	return p.Kill()
}
