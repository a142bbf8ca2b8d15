//go:build !linux

package host

import "os/exec"

// setPdeathsig is Linux-only; elsewhere the plugin's exit when its data
// channel closes alone ends orphans.
func setPdeathsig(*exec.Cmd) {}
