package host

import (
	"os/exec"
	"syscall"
)

// setPdeathsig makes the kernel kill the plugin when the worker dies, so no
// plugin outlives a SIGKILLed worker. (It fires when the forking thread
// exits; the plugin's exit when the data channel closes covers that case.)
func setPdeathsig(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
