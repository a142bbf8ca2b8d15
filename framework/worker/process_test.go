package worker_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/connectd/connectd/framework/worker"
	"github.com/connectd/connectd/internal/kafkatest"
)

// workerProc is a test worker process (internal/testworker) running
// connectors, so tests can SIGKILL, SIGSTOP and restart a real worker.
type workerProc struct {
	t      *testing.T
	cmd    *exec.Cmd
	status *statusLog
	stderr string
	done   chan struct{}
}

// writeProps writes a connector's properties to a file for the test worker.
func (e *env) writeProps(props map[string]string) string {
	e.t.Helper()
	f := filepath.Join(e.t.TempDir(), "connector.json")
	raw, _ := json.Marshal(props)
	if err := os.WriteFile(f, raw, 0o644); err != nil {
		e.t.Fatal(err)
	}
	return f
}

// also is the spawn argument that runs another connector in the worker.
func (e *env) also(name string, props map[string]string) []string {
	return []string{"-also", name + "=" + e.writeProps(props)}
}

// spawn starts a test worker for connector name with props (and the
// connectors of args made by also).
func (e *env) spawn(name string, props map[string]string, eos bool, args ...string) *workerProc {
	e.t.Helper()
	bin := builder.Build(e.t, testWorkerPkg)
	dir := e.t.TempDir()
	cfg := e.writeProps(props)
	stderr := filepath.Join(dir, "stderr.log")
	errFile, err := os.Create(stderr)
	if err != nil {
		e.t.Fatal(err)
	}
	cmd := exec.Command(bin, append([]string{
		"-bootstrap", e.bootstrap, "-group", e.group, "-offsets-topic", e.offsets,
		"-plugins", e.pluginDir, "-eos=" + strconv.FormatBool(eos), "-connector", name, "-config", cfg,
		"-flush-interval", "300ms", "-backoff", "200ms",
	}, args...)...)
	cmd.Stderr = errFile
	out, err := cmd.StdoutPipe()
	if err != nil {
		e.t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	p := &workerProc{t: e.t, cmd: cmd, status: &statusLog{}, stderr: stderr, done: make(chan struct{})}
	go func() {
		defer close(p.done)
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			f := strings.SplitN(sc.Text(), " ", 4)
			if len(f) != 4 {
				continue
			}
			var trace string
			_ = json.Unmarshal([]byte(f[3]), &trace)
			p.status.mu.Lock()
			p.status.events = append(p.status.events, statusEvent{f[0], f[1], worker.State(f[2]), trace, time.Now()})
			p.status.mu.Unlock()
		}
		_ = cmd.Wait()
		errFile.Close()
	}()
	e.t.Cleanup(func() {
		p.signal(syscall.SIGCONT)
		p.signal(syscall.SIGKILL)
		<-p.done
		if e.t.Failed() {
			p.dumpStderr()
		}
	})
	return p
}

func (p *workerProc) pid() int { return p.cmd.Process.Pid }

func (p *workerProc) signal(sig syscall.Signal) {
	select {
	case <-p.done:
	default:
		_ = p.cmd.Process.Signal(sig)
	}
}

// kill SIGKILLs the worker and waits until it is gone.
func (p *workerProc) kill() {
	p.signal(syscall.SIGKILL)
	<-p.done
}

// stop asks for a graceful stop (SIGTERM) and waits for the exit.
func (p *workerProc) stop() {
	p.signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(time.Minute):
		p.t.Errorf("test worker %d did not stop within a minute of SIGTERM", p.pid())
		p.kill()
	}
}

func (p *workerProc) dumpStderr() {
	data, _ := os.ReadFile(p.stderr)
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > 60 {
		lines = lines[len(lines)-60:]
	}
	p.t.Logf("test worker %d stderr (tail):\n%s\nstatus:%s", p.pid(), strings.Join(lines, "\n"), p.status)
}

// children returns the pids of the worker's child processes (its plugins).
func (p *workerProc) children() []int {
	var out []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue
		}
		s := string(data)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		fields := strings.Fields(s[i+1:])
		if len(fields) > 2 && fields[0] != "Z" && fields[1] == strconv.Itoa(p.pid()) {
			out = append(out, pid)
		}
	}
	return out
}

// pluginChildren returns the pids of the worker's plugin processes whose
// binary's name contains binary.
func (p *workerProc) pluginChildren(binary string) []int {
	var out []int
	for _, pid := range p.children() {
		if exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid)); err == nil && strings.Contains(filepath.Base(exe), binary) {
			out = append(out, pid)
		}
	}
	return out
}

// waitRunning waits until every task of the connector reports RUNNING
// after event index from.
func (p *workerProc) waitRunning(name string, tasks int, timeout time.Duration) {
	p.t.Helper()
	kafkatest.Eventually(p.t, timeout, func() (bool, string) {
		for i := range tasks {
			if _, _, ok := p.status.find(fmt.Sprintf("%s-%d", name, i), worker.StateRunning, 0); !ok {
				return false, fmt.Sprintf("task %s-%d not RUNNING in worker %d; events:%s", name, i, p.pid(), p.status)
			}
		}
		return true, ""
	})
}
