//go:build linux

package datachan

import (
	"io"
	"net"
	"os"
	"syscall"
	"unsafe"
)

// rawSock reads and writes the channel's non-blocking socket with system
// calls made through syscall.RawSyscall, which skips the runtime's system
// call bookkeeping. A non-blocking read or write never blocks, so the
// bookkeeping buys nothing here, and it costs a thread wake-up: the first
// bookkept call after every part of the process went idle wakes the
// runtime's monitor thread, which then sleeps in 20 µs steps until the
// process is idle again, on every round trip (perf stat of the sink
// benchmark at batch 1, both processes: 1.1 nanosleep calls per put
// without this, 0.02 with it).
// Waiting for the socket still goes through the runtime's network poller
// (syscall.RawConn), and deadlines work as for net.Conn.
type rawSock struct{ rc syscall.RawConn }

// newRawSock returns nil when nc has no file descriptor to use.
func newRawSock(nc net.Conn) *rawSock {
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return nil
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil
	}
	return &rawSock{rc: rc}
}

// Read is io.Reader's Read (io.EOF once the peer closed).
func (s *rawSock) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	var n int
	var errno syscall.Errno
	err := s.rc.Read(func(fd uintptr) bool {
		for {
			r, _, e := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
			switch e {
			case syscall.EINTR:
				continue
			case syscall.EAGAIN:
				return false // wait for the poller
			}
			n, errno = int(r), e
			return true
		}
	})
	switch {
	case err != nil:
		return 0, err
	case errno != 0:
		return 0, os.NewSyscallError("read", errno)
	case n == 0:
		return 0, io.EOF
	}
	return n, nil
}

// maxIovecs bounds the parts of one writev (the kernel allows 1024).
const maxIovecs = 64

// writev writes all of bufs; it may modify bufs.
func (s *rawSock) writev(bufs [][]byte) error {
	var iov [maxIovecs]syscall.Iovec
	for {
		for len(bufs) > 0 && len(bufs[0]) == 0 {
			bufs = bufs[1:]
		}
		if len(bufs) == 0 {
			return nil
		}
		k := 0
		for _, b := range bufs {
			if k == len(iov) {
				break
			}
			if len(b) > 0 {
				iov[k].Base = &b[0]
				iov[k].SetLen(len(b))
				k++
			}
		}
		var n int
		var errno syscall.Errno
		err := s.rc.Write(func(fd uintptr) bool {
			for {
				r, _, e := syscall.RawSyscall(syscall.SYS_WRITEV, fd, uintptr(unsafe.Pointer(&iov[0])), uintptr(k))
				switch e {
				case syscall.EINTR:
					continue
				case syscall.EAGAIN:
					return false // the peer's buffer is full: wait for the poller
				}
				n, errno = int(r), e
				return true
			}
		})
		if err != nil {
			return err
		}
		if errno != 0 {
			return os.NewSyscallError("writev", errno)
		}
		for n > 0 {
			if n >= len(bufs[0]) {
				n -= len(bufs[0])
				bufs = bufs[1:]
				continue
			}
			bufs[0] = bufs[0][n:]
			n = 0
		}
	}
}
