package host

import (
	"fmt"
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

// leaderExited reports whether the plugin process itself has exited (it
// is a zombie or gone) while go-plugin has not noticed: go-plugin reaps it
// only after its stdout and stderr pipes close, which a child that
// inherited them can delay for as long as the child lives.
func leaderExited(pid int) bool {
	if pid <= 0 {
		return false
	}
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && i+2 < len(s) && s[i+2] == 'Z'
}

// exitNotice returns a channel that is closed once process pid has exited
// (a zombie or gone). It waits on a pidfd in the runtime's network poller,
// so a plugin that lives costs no wake-ups. Should the pidfd not be
// watchable after all, the channel is closed at once and the caller polls
// as it would without it. nil when pidfd_open is unavailable (Linux before
// 5.3).
func exitNotice(pid int) <-chan struct{} {
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return nil
	}
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		return nil
	}
	unix.CloseOnExec(fd)
	f := os.NewFile(uintptr(fd), "pidfd")
	rc, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return nil
	}
	ch := make(chan struct{})
	go func() {
		defer close(ch)
		defer f.Close()
		// A pidfd reads as ready once its process has exited.
		_ = rc.Read(func(fd uintptr) bool {
			pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
			n, err := unix.Poll(pfd, 0)
			return err != nil || n > 0
		})
	}()
	return ch
}
