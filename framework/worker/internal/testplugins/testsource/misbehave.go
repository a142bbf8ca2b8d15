package main

import (
	"bufio"
	"bytes"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// Misbehaviours (the misbehave key). Each breaks the whole process, not
// just its task, because that is what a shared plugin process risks:
//
//   - die-at-start: the task's Start exits the process (status 7).
//   - exit: the process exits (status 8) once the task has returned
//     misbehave.after records.
//   - garbage: once past misbehave.after records, the task writes bytes
//     that are not a frame to the data channel, and binary junk to stdout.
//   - flood: past misbehave.after records, every Poll writes floodLines
//     lines to stdout, to os.Stderr and to the task's logger.
//   - leak: past misbehave.after records, the task caps the process's
//     address space (RLIMIT_AS, leakHeadroom above its current size) and
//     then keeps leakChunk more bytes per Poll until the Go runtime dies
//     with "out of memory". Nothing in the worker bounds a plugin's memory
//     (GOMEMLIMIT is a garbage-collection target, not a cap), so the test
//     connector brings its own limit.
//
// What the task says before it exits goes to its logger: it writes the real
// stderr synchronously, whose tail becomes the FAILED tasks' trace
// (os.Stderr is go-plugin's stdio stream once the plugin serves, which
// neither reaches the tail nor is flushed by os.Exit).
type misbehaviour struct {
	log     *slog.Logger
	mode    string
	after   int64
	emitted int64
	done    bool     // the one-shot misbehaviours happened
	hoard   [][]byte // leak's leaked memory, kept reachable
}

const (
	floodLines   = 500
	leakHeadroom = 192 << 20
	leakChunk    = 16 << 20
)

func (m *misbehaviour) atStart() error {
	switch m.mode {
	case "", "exit", "garbage", "flood", "leak":
		return nil
	case "die-at-start":
		m.log.Error("testsource: misbehave=die-at-start: exiting in task Start")
		os.Exit(7)
	}
	return fmt.Errorf("misbehave=%q: unknown misbehaviour", m.mode)
}

func (m *misbehaviour) inPoll() {
	if m.mode == "" || m.emitted < m.after {
		return
	}
	switch m.mode {
	case "exit":
		m.log.Error("testsource: misbehave=exit: exiting", "records", m.emitted)
		os.Exit(8)
	case "garbage":
		if !m.done {
			m.done = true
			os.Stdout.Write([]byte("\x00\xff\xfe garbage on stdout \x1b[2J\x07\n"))
			fd, ok := dataChannelFD()
			if !ok {
				m.log.Error("testsource: misbehave=garbage: no data channel found")
				os.Exit(9)
			}
			m.log.Warn("testsource: misbehave=garbage: writing garbage to the data channel", "fd", fd)
			_, _ = syscall.Write(fd, bytes.Repeat([]byte{0xee}, 64))
		}
	case "flood":
		out, errs := bufio.NewWriter(os.Stdout), bufio.NewWriter(os.Stderr)
		for i := range floodLines {
			fmt.Fprintf(out, "testsource: stdout flood line %d\n", i)
			fmt.Fprintf(errs, "testsource: stderr flood line %d\n", i)
			m.log.Info("testsource: log flood line", "line", i)
		}
		_ = out.Flush()
		_ = errs.Flush()
	case "leak":
		if !m.done {
			m.done = true
			size := vmSize()
			m.log.Warn("testsource: misbehave=leak: leaking memory under RLIMIT_AS", "vmsize", size, "headroom", leakHeadroom)
			limit := uint64(size + leakHeadroom)
			if err := syscall.Setrlimit(syscall.RLIMIT_AS, &syscall.Rlimit{Cur: limit, Max: limit}); err != nil {
				m.log.Error("testsource: misbehave=leak: setrlimit", "error", err)
				os.Exit(9)
			}
		}
		b := make([]byte, leakChunk)
		for i := 0; i < len(b); i += 4096 {
			b[i] = 1 // touched, so it is really resident
		}
		m.hoard = append(m.hoard, b)
	}
}

// dataChannelFD finds the plugin's end of the data channel: the SDK dups
// the inherited descriptor, so it is looked for as the only unnamed Unix
// stream socket (Go names it "@"; go-plugin's gRPC sockets carry the
// listener's path).
func dataChannelFD() (int, bool) {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return 0, false
	}
	for _, e := range ents {
		fd, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		sa, err := syscall.Getsockname(fd)
		if err != nil {
			continue
		}
		if u, ok := sa.(*syscall.SockaddrUnix); ok && (u.Name == "" || u.Name == "@") {
			if typ, err := syscall.GetsockoptInt(fd, syscall.SOL_SOCKET, syscall.SO_TYPE); err == nil && typ == syscall.SOCK_STREAM {
				return fd, true
			}
		}
	}
	return 0, false
}

// vmSize is the process's address space size in bytes (VmSize).
func vmSize() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(l, "VmSize:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}
