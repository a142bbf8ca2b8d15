package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	as "github.com/aerospike/aerospike-client-go/v7"

	"github.com/connectd/connectd/internal/syncbuf"
)

// waitAddr polls the command's stdout for the AEROSPIKE_ADDR line.
func waitAddr(t *testing.T, out *syncbuf.Buffer) string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		for _, line := range strings.Split(out.String(), "\n") {
			if addr, ok := strings.CutPrefix(line, "AEROSPIKE_ADDR="); ok {
				return addr
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("no AEROSPIKE_ADDR line within 10s; stdout %q", out.String())
	return ""
}

func useServer(t *testing.T, addr string) {
	t.Helper()
	host, portStr, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	port, _ := strconv.Atoi(portStr)
	c, err := as.NewClientWithPolicyAndHost(nil, as.NewHost(host, port))
	if err != nil {
		t.Fatalf("client: %v", err)
	}
	defer c.Close()
	for _, ns := range []string{"test", "bar"} {
		k, _ := as.NewKey(ns, "demo", "cli")
		if err := c.Put(nil, k, as.BinMap{"v": 1}); err != nil {
			t.Fatalf("put to %s: %v", ns, err)
		}
		r, err := c.Get(nil, k)
		if err != nil || r.Bins["v"] != 1 {
			t.Fatalf("get from %s: %v %v", ns, r, err)
		}
	}
}

// In-process: the command prints its address, serves the namespaces, and
// returns cleanly when its context is cancelled (as on SIGTERM/SIGINT).
func TestDevAerospikeCommand(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout, stderr syncbuf.Buffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"aerospike", "--listen", "127.0.0.1:0", "--namespaces", "test, bar", "--stats"}, &stdout, &stderr)
	}()
	addr := waitAddr(t, &stdout)
	useServer(t, addr)
	cancel()
	select {
	case code := <-done:
		if code != exitOK {
			t.Fatalf("exit code %d; stderr %q", code, stderr.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("command did not stop after cancel")
	}
	if !strings.Contains(stderr.String(), "aerofake stats: ") || !strings.Contains(stderr.String(), "writes=2") {
		t.Fatalf("stats on exit missing: %q", stderr.String())
	}
	if lines := strings.Count(stdout.String(), "\n"); lines != 1 {
		t.Fatalf("stdout has %d lines, want exactly the address line: %q", lines, stdout.String())
	}
	if _, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		t.Fatal("server still accepting after the command returned")
	}
}

func TestDevAerospikeUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"aerospike", "extra"},
		{"aerospike", "--namespaces", " , "},
		{"aerospike", "--bogus"},
	} {
		var out, errOut bytes.Buffer
		if code := run(context.Background(), args, &out, &errOut); code != exitUsage {
			t.Fatalf("%v: exit %d, want %d (stderr %q)", args, code, exitUsage, errOut.String())
		}
	}
	var out, errOut bytes.Buffer
	if code := run(context.Background(), []string{"aerospike", "--listen", "256.0.0.1:1"}, &out, &errOut); code != exitFailure {
		t.Fatalf("bad listen address: exit %d, want %d", code, exitFailure)
	}
}

// As a process: SIGTERM stops the server and the process exits 0. The test
// binary re-executes itself as connectd-dev (no separate build needed).
func TestDevAerospikeProcessSIGTERM(t *testing.T) {
	if os.Getenv("CONNECTD_TEST_RUN_MAIN") == "1" {
		os.Args = append([]string{"connectd-dev"}, strings.Fields(os.Getenv("CONNECTD_TEST_ARGS"))...)
		main()
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestDevAerospikeProcessSIGTERM$")
	cmd.Env = append(os.Environ(), "CONNECTD_TEST_RUN_MAIN=1",
		"CONNECTD_TEST_ARGS=aerospike --listen 127.0.0.1:0 --namespaces test,bar")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr syncbuf.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
		_, _ = io.Copy(io.Discard, stdout)
	}()
	var addr string
	select {
	case line := <-lines:
		var ok bool
		if addr, ok = strings.CutPrefix(line, "AEROSPIKE_ADDR="); !ok {
			t.Fatalf("first line %q", line)
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("no address line; stderr %q", stderr.String())
	}
	useServer(t, addr)
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	waitErr := make(chan error, 1)
	go func() { waitErr <- cmd.Wait() }()
	select {
	case err := <-waitErr:
		if err != nil {
			t.Fatalf("process exit: %v; stderr %q", err, stderr.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("process did not exit after SIGTERM")
	}
}

// --control serves the fault-injection API: a fault posted there reaches
// the real client, and clearing it restores service.
func TestDevAerospikeControl(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout, stderr syncbuf.Buffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"aerospike", "--listen", "127.0.0.1:0", "--control", "127.0.0.1:0"}, &stdout, &stderr)
	}()
	addr := waitAddr(t, &stdout)
	var control string
	deadline := time.Now().Add(10 * time.Second)
	for control == "" && time.Now().Before(deadline) {
		for _, line := range strings.Split(stdout.String(), "\n") {
			if v, ok := strings.CutPrefix(line, "AEROSPIKE_CONTROL="); ok {
				control = v
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	if control == "" {
		t.Fatalf("no AEROSPIKE_CONTROL line; stdout %q", stdout.String())
	}
	resp, err := http.Post(control+"/faults", "application/json", strings.NewReader(`{"ops":["write"],"times":1,"result_code":14}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		t.Fatalf("POST /faults: %s", resp.Status)
	}
	host, portStr, _ := net.SplitHostPort(addr)
	port, _ := strconv.Atoi(portStr)
	c, err := as.NewClientWithPolicyAndHost(nil, as.NewHost(host, port))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	k, _ := as.NewKey("test", "demo", "ctl")
	wp := as.NewWritePolicy(0, 0)
	wp.MaxRetries = 0
	if err := c.Put(wp, k, as.BinMap{"v": 1}); err == nil || !strings.Contains(err.Error(), "KEY_BUSY") {
		t.Fatalf("put with an injected KEY_BUSY: %v", err)
	}
	if err := c.Put(wp, k, as.BinMap{"v": 1}); err != nil {
		t.Fatalf("put after the one-shot fault: %v", err)
	}
	cancel()
	select {
	case code := <-done:
		if code != exitOK {
			t.Fatalf("exit code %d; stderr %q", code, stderr.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("command did not stop after cancel")
	}
	if _, err := http.Get(control + "/stats"); err == nil {
		t.Fatal("control API still serving after the command returned")
	}
}
