//go:build !linux

package host

import "os/exec"

// setPdeathsig is Linux-only; elsewhere the plugin's parent watchdog alone
// ends orphans.
func setPdeathsig(*exec.Cmd) {}
