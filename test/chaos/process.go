package chaos

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"
)

// child is a process the harness started. It dies with the harness:
// Pdeathsig fires when the thread that started it exits, so that thread
// stays locked (and alive) until the child is gone, even if the harness
// itself is killed.
type child struct {
	cmd     *exec.Cmd
	logPath string
	exited  chan struct{}
	mu      sync.Mutex
	err     error
}

// startChild starts argv with stdout+stderr appended to logPath (and to
// stdout, when given, instead of the log for stdout).
func startChild(logPath string, stdout io.Writer, env []string, argv ...string) (*child, error) {
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	c := &child{cmd: exec.Command(argv[0], argv[1:]...), logPath: logPath, exited: make(chan struct{})}
	c.cmd.Stdout, c.cmd.Stderr = logf, logf
	if stdout != nil {
		c.cmd.Stdout = io.MultiWriter(logf, stdout)
	}
	if env != nil {
		c.cmd.Env = env
	}
	c.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		if err := c.cmd.Start(); err != nil {
			started <- err
			logf.Close()
			close(c.exited)
			return
		}
		started <- nil
		err := c.cmd.Wait()
		c.mu.Lock()
		c.err = err
		c.mu.Unlock()
		logf.Close()
		close(c.exited)
	}()
	if err := <-started; err != nil {
		return nil, fmt.Errorf("start %s: %w", argv[0], err)
	}
	return c, nil
}

func (c *child) pid() int { return c.cmd.Process.Pid }

func (c *child) alive() bool {
	select {
	case <-c.exited:
		return false
	default:
		return true
	}
}

func (c *child) exitErr() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

func (c *child) signal(sig syscall.Signal) error {
	if !c.alive() {
		return fmt.Errorf("process %d has exited", c.pid())
	}
	return c.cmd.Process.Signal(sig)
}

// kill SIGKILLs the child and waits for it.
func (c *child) kill() {
	if c.alive() {
		_ = c.cmd.Process.Signal(syscall.SIGKILL)
	}
	<-c.exited
}

// terminate asks the child to stop (SIGCONT first, in case it is stopped,
// then SIGTERM) and kills it after grace.
func (c *child) terminate(grace time.Duration) (graceful bool) {
	if !c.alive() {
		return true
	}
	_ = c.cmd.Process.Signal(syscall.SIGCONT)
	_ = c.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-c.exited:
		return true
	case <-time.After(grace):
		c.kill()
		return false
	}
}

// logTail returns the last n lines of the child's log.
func (c *child) logTail(n int) string { return fileTail(c.logPath, n) }

func fileTail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
