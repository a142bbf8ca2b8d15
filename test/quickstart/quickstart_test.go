// Package quickstart_test runs `make quickstart` the way a newcomer does:
// on a clean clone of the repository, non-interactively (--once), against
// the test broker. It also feeds it the bad input a newcomer meets — a busy
// port, no Java, leftovers of a killed run — and checks that it says what
// is wrong in one line or recovers, and never leaves a process behind.
package quickstart_test

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/connectd/connectd/internal/kafkatest"
)

// clone is one clean clone shared by the tests (each build there starts
// from an empty bin/ and .run/).
var (
	cloneOnce sync.Once
	cloneDir  string
	cloneErr  error
)

func cleanClone(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs the whole quickstart; skipped with -short")
	}
	cloneOnce.Do(func() {
		root, err := filepath.Abs("../..")
		if err != nil {
			cloneErr = err
			return
		}
		if out, _ := exec.Command("git", "-C", root, "status", "--porcelain", "--untracked-files=no").Output(); len(out) > 0 {
			t.Logf("note: the working tree has uncommitted changes; the clean clone tests the committed HEAD")
		}
		dir, err := os.MkdirTemp("", "connectd-quickstart-clone-")
		if err != nil {
			cloneErr = err
			return
		}
		cloneDir = filepath.Join(dir, "connectd")
		if out, err := exec.Command("git", "clone", "--quiet", "--no-hardlinks", root, cloneDir).CombinedOutput(); err != nil {
			cloneErr = fmt.Errorf("git clone: %v\n%s", err, out)
		}
	})
	if cloneErr != nil {
		t.Fatal(cloneErr)
	}
	return cloneDir
}

func TestMain(m *testing.M) {
	code := m.Run()
	if cloneDir != "" {
		os.RemoveAll(filepath.Dir(cloneDir))
	}
	os.Exit(code)
}

type result struct {
	code           int
	stdout, stderr string
}

func (r result) String() string {
	return fmt.Sprintf("exit %d\n--- stdout\n%s\n--- stderr\n%s", r.code, r.stdout, r.stderr)
}

// quickstart runs `make quickstart QUICKSTART_ARGS=args` in dir with env
// added to the test's environment.
func quickstart(t *testing.T, dir string, timeout time.Duration, env []string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "make", "--no-print-directory", "quickstart", "QUICKSTART_ARGS="+strings.Join(args, " "))
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM) }
	cmd.WaitDelay = time.Minute
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	r := result{stdout: stdout.String(), stderr: stderr.String()}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("make quickstart: %v\n%s", err, r)
	}
	if ctx.Err() != nil {
		t.Fatalf("make quickstart did not finish within %s\n%s", timeout, r)
	}
	return r
}

// processesUnder lists live processes whose command line mentions dir.
func processesUnder(dir string) []string {
	var out []string
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		raw, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		cmdline := strings.TrimSpace(strings.ReplaceAll(string(raw), "\x00", " "))
		if strings.Contains(cmdline, dir) {
			out = append(out, fmt.Sprintf("%d %s", pid, cmdline))
		}
	}
	return out
}

func assertNothingLeft(t *testing.T, dir string) {
	t.Helper()
	// Give exiting processes a moment to be reaped.
	deadline := time.Now().Add(10 * time.Second)
	for {
		left := processesUnder(dir)
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("processes left behind:\n%s", strings.Join(left, "\n"))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// oneLine checks that the failure explains itself in one "quickstart:" line
// on stderr (the lines before are progress on stdout) that names want.
func oneLine(t *testing.T, r result, want ...string) {
	t.Helper()
	if r.code == 0 {
		t.Fatalf("quickstart succeeded, want a failure\n%s", r)
	}
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(r.stderr), "\n") {
		if strings.HasPrefix(l, "quickstart: ") {
			lines = append(lines, l)
		}
	}
	if len(lines) != 1 {
		t.Fatalf("want exactly one quickstart: line on stderr, got %d\n%s", len(lines), r)
	}
	for _, w := range want {
		if !strings.Contains(lines[0], w) {
			t.Errorf("message %q lacks %q", lines[0], w)
		}
	}
}

// Ports already in use: a one-line message naming the port and the flag.
func TestBusyPortIsOneLine(t *testing.T) {
	dir := cleanClone(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	r := quickstart(t, dir, time.Minute, []string{"KAFKA_BOOTSTRAP=127.0.0.1:1"}, "--once", "--rest-port", port)
	oneLine(t, r, "port "+port+" is already in use", "--rest-port")
	assertNothingLeft(t, dir)
}

// Java or Maven missing (and no broker to use): one line saying what to
// install, before any build.
func TestMissingJavaAndMavenAreOneLine(t *testing.T) {
	dir := cleanClone(t)
	for _, tool := range []string{"java", "mvn"} {
		t.Run(tool, func(t *testing.T) {
			path := pathWithout(t, tool)
			// An empty run directory too: a broker scripts/kafka.sh runs (the
			// test machine's shared one) must not be reused.
			r := quickstart(t, dir, time.Minute, []string{"PATH=" + path, "KAFKA_BOOTSTRAP=", "CONNECTD_RUN_DIR=" + t.TempDir()}, "--once")
			name := map[string]string{"java": "Java is not installed", "mvn": "Maven is not installed"}[tool]
			oneLine(t, r, name, "apt-get install", "KAFKA_BOOTSTRAP")
			if strings.Contains(r.stdout, "building") {
				t.Errorf("the quickstart built before checking for %s:\n%s", tool, r)
			}
			assertNothingLeft(t, dir)
		})
	}
}

// pathWithout returns a PATH whose directories hold links to every program
// of the test's PATH except tool.
func pathWithout(t *testing.T, tool string) string {
	t.Helper()
	bin := t.TempDir()
	seen := map[string]bool{tool: true}
	for _, d := range filepath.SplitList(os.Getenv("PATH")) {
		ents, err := os.ReadDir(d)
		if err != nil {
			continue
		}
		for _, e := range ents {
			if seen[e.Name()] || e.IsDir() {
				continue
			}
			seen[e.Name()] = true
			if err := os.Symlink(filepath.Join(d, e.Name()), filepath.Join(bin, e.Name())); err != nil {
				t.Fatal(err)
			}
		}
	}
	return bin
}

// The whole pipeline, twice: a first run is SIGKILLed (script and all)
// once the worker is up, leaving its processes behind; a second run on the
// same checkout stops those leftovers, leaves an unrelated process that
// got a recorded pid alone, runs the pipeline to completion, verifies the
// totals and exits 0; nothing of either run is left running.
func TestOnceOnCleanCloneRecoversFromAKilledRun(t *testing.T) {
	dir := cleanClone(t)
	bootstrap := kafkatest.Bootstrap(t)
	env := []string{"KAFKA_BOOTSTRAP=" + bootstrap}

	// First run, killed without a chance to clean up.
	killed := exec.Command("scripts/quickstart.sh", "--rest-port", "0", "--no-prometheus")
	killed.Dir = dir
	killed.Env = append(os.Environ(), env...)
	logPath := filepath.Join(t.TempDir(), "first-run.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()
	killed.Stdout, killed.Stderr = logFile, logFile
	if err := killed.Start(); err != nil {
		t.Fatal(err)
	}
	kafkatest.Eventually(t, 5*time.Minute, func() (bool, string) {
		raw, _ := os.ReadFile(logPath)
		if strings.Contains(string(raw), "quickstart: ") && !strings.Contains(string(raw), "worker healthy") {
			t.Fatalf("the first run failed:\n%s", raw)
		}
		return strings.Contains(string(raw), "progress ("), "waiting for the first run's pipeline: " + lastLine(string(raw))
	})
	_ = killed.Process.Kill()
	_ = killed.Wait()
	if left := processesUnder(dir); len(left) == 0 {
		t.Fatal("killing the script left nothing behind; the test does not exercise stale state")
	} else {
		t.Logf("left behind by the killed run:\n%s", strings.Join(left, "\n"))
	}

	// A process that is not the quickstart's, recorded under a pid file as
	// if its pid had been reused: the next run must not touch it.
	bystander := exec.Command("sleep", "600")
	if err := bystander.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = bystander.Process.Kill(); _ = bystander.Wait() })
	pidFile := filepath.Join(dir, ".run", "quickstart", "pids", "prometheus")
	if err := os.WriteFile(pidFile, fmt.Appendf(nil, "%d\n/usr/bin/prometheus --config.file=x\n", bystander.Process.Pid), 0o644); err != nil {
		t.Fatal(err)
	}

	start := time.Now()
	r := quickstart(t, dir, 10*time.Minute, env, "--once", "--rest-port", "0", "--prometheus-port", "0", "--timeout", "240")
	if r.code != 0 {
		t.Fatalf("make quickstart --once failed\n%s", r)
	}
	t.Logf("second run took %s\n%s", time.Since(start).Round(time.Second), r.stdout)
	for _, want := range []string{
		"earlier quickstart run that did not shut down",
		"complete:",
		"quickstart: verified",
		"quickstart: stopped",
	} {
		if !strings.Contains(r.stdout+r.stderr, want) {
			t.Errorf("output lacks %q\n%s", want, r)
		}
	}
	// With every connector of the pipeline in the checkout, the whole
	// pipeline must have run and matched.
	if exists(filepath.Join(dir, "connectors/kafka/cmd")) && exists(filepath.Join(dir, "connectors/aerospike/cmd")) {
		for _, want := range []string{
			"deploying the pipeline: DatagenSource → KafkaReplicationSource → AerospikeSink",
			"replicated once each",
			"all 20 counters equal their expected totals",
		} {
			if !strings.Contains(r.stdout, want) {
				t.Errorf("output lacks %q\n%s", want, r)
			}
		}
	}
	if err := bystander.Process.Signal(syscall.Signal(0)); err != nil {
		t.Errorf("the quickstart signalled a process that was not its own: %v", err)
	}
	assertNothingLeft(t, dir)
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	return s[strings.LastIndexByte(s, '\n')+1:]
}
