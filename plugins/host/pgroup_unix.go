//go:build unix

package host

import (
	"errors"
	"os/exec"
	"syscall"
)

// setProcessGroup starts the plugin as the leader of a new process group
// (after setPdeathsig, which replaces SysProcAttr).
func setProcessGroup(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
}

// killGroup sends SIGKILL to every process of the plugin's process group
// (the group id is the plugin's pid). A child the plugin forked keeps the
// plugin's stdout and stderr pipes open after the plugin itself is gone,
// and go-plugin waits for those pipes to close: killing the plugin alone
// can leave that wait hanging for as long as the child lives.
func killGroup(pid int) error {
	if pid <= 0 {
		return nil
	}
	err := syscall.Kill(-pid, syscall.SIGKILL)
	if errors.Is(err, syscall.ESRCH) {
		return nil // the group is already empty
	}
	return err
}
