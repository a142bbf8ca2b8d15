//go:build unix

package host

import (
	"os"
	"syscall"
)

// socketpair returns the two ends of a connected Unix stream socketpair.
// Both are close-on-exec: a child receives one only through
// exec.Cmd.ExtraFiles, so no other process started meanwhile inherits it.
func socketpair() (hostEnd, pluginEnd *os.File, err error) {
	syscall.ForkLock.RLock()
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err == nil {
		syscall.CloseOnExec(fds[0])
		syscall.CloseOnExec(fds[1])
	}
	syscall.ForkLock.RUnlock()
	if err != nil {
		return nil, nil, os.NewSyscallError("socketpair", err)
	}
	return os.NewFile(uintptr(fds[0]), "connectd-data-host"), os.NewFile(uintptr(fds[1]), "connectd-data-plugin"), nil
}
