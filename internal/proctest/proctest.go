// Package proctest runs a child process for a test and follows its output
// line by line, so that a test can wait for a log line, show the output's
// tail when something fails, and SIGKILL the process. Tests that drive
// real worker processes use it.
//
// What it must not do: know anything about what the process is. It runs a
// command; the caller builds it.
package proctest

import (
	"bufio"
	"bytes"
	"io"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// keepBytes bounds the output a Proc keeps for Tail.
const keepBytes = 4 << 20

// Proc is a running child process whose stdout and stderr lines are
// collected.
type Proc struct {
	cmd   *exec.Cmd
	lines chan string
	done  chan struct{}

	mu  sync.Mutex
	log bytes.Buffer
}

// Start starts cmd with Pdeathsig set (the child dies with the test) and
// its stdout and stderr followed; t's cleanup SIGKILLs it.
func Start(t testing.TB, cmd *exec.Cmd) *Proc {
	t.Helper()
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	p := &Proc{cmd: cmd, lines: make(chan string, 100000), done: make(chan struct{})}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for _, r := range []io.Reader{stdout, stderr} {
		wg.Go(func() { p.follow(r) })
	}
	go func() {
		wg.Wait()
		_ = cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(p.Kill)
	return p
}

func (p *Proc) follow(r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		p.mu.Lock()
		if p.log.Len() < keepBytes {
			p.log.WriteString(line + "\n")
		}
		p.mu.Unlock()
		select {
		case p.lines <- line:
		default: // nobody waits for lines now
		}
	}
}

// Kill SIGKILLs the process and returns once it has exited.
func (p *Proc) Kill() {
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
}

// Signal sends sig to the process.
func (p *Proc) Signal(sig syscall.Signal) error { return p.cmd.Process.Signal(sig) }

// Done is closed once the process has exited and its output is read.
func (p *Proc) Done() <-chan struct{} { return p.done }

// Tail returns the last 4000 bytes of the output kept.
func (p *Proc) Tail() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := p.log.String()
	if len(s) > 4000 {
		s = s[len(s)-4000:]
	}
	return s
}

// WaitLine waits for an output line that contains every one of subs and
// returns it; the test fails when the process exits or timeout passes
// first. Lines printed while nobody waited are not seen.
func (p *Proc) WaitLine(t testing.TB, timeout time.Duration, subs ...string) string {
	t.Helper()
	deadline := time.After(timeout)
	for {
		select {
		case line := <-p.lines:
			if containsAll(line, subs) {
				return line
			}
		case <-p.done:
			t.Fatalf("process exited while waiting for a line with %q; output:\n%s", subs, p.Tail())
		case <-deadline:
			t.Fatalf("no line with %q within %v; output:\n%s", subs, timeout, p.Tail())
		}
	}
}

func containsAll(line string, subs []string) bool {
	for _, s := range subs {
		if !strings.Contains(line, s) {
			return false
		}
	}
	return true
}
