package benchkit

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// Proc is a started process, in a process group of its own so that Stop
// reaches its children too.
type Proc struct {
	Name   string
	Cmd    *exec.Cmd
	exited chan struct{}
	at     time.Time // when it exited
	err    error
}

// StartProc starts cmd with its output in logPath. The process dies with
// the benchmark (Pdeathsig), so an interrupted run leaves no worker behind.
func StartProc(name string, cmd *exec.Cmd, logPath string) (*Proc, error) {
	f, err := os.Create(logPath)
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		f.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &Proc{Name: name, Cmd: cmd, exited: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		p.at = time.Now()
		f.Close()
		close(p.exited)
	}()
	return p, nil
}

// Pid is the process id (and process group id).
func (p *Proc) Pid() int { return p.Cmd.Process.Pid }

// Done is closed when the process has exited.
func (p *Proc) Done() <-chan struct{} { return p.exited }

// Exit is when the process exited and how; valid once Done is closed.
func (p *Proc) Exit() (time.Time, error) { return p.at, p.err }

// ExitCPU is the process's exact CPU time once it has exited.
func (p *Proc) ExitCPU() (time.Duration, bool) {
	select {
	case <-p.exited:
		st := p.Cmd.ProcessState
		return st.UserTime() + st.SystemTime(), true
	default:
		return 0, false
	}
}

// Stop sends SIGTERM to the process group, then SIGKILL after grace.
func (p *Proc) Stop(grace time.Duration) {
	select {
	case <-p.exited:
		return
	default:
	}
	_ = syscall.Kill(-p.Pid(), syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(grace):
		_ = syscall.Kill(-p.Pid(), syscall.SIGKILL)
		<-p.exited
	}
}

// Kill sends SIGKILL to the process alone (not its group), as a crash
// would, and waits until it has exited.
func (p *Proc) Kill() {
	_ = p.Cmd.Process.Signal(syscall.SIGKILL)
	<-p.exited
}

// KillGroup sends SIGKILL to what is left of the process group.
func (p *Proc) KillGroup() {
	_ = syscall.Kill(-p.Pid(), syscall.SIGKILL)
}
