package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/connectd/connectd/internal/syncbuf"
)

// connectdBinary builds this command once per test binary, for tests that
// need a real worker process (librdkafka writes to the process's own
// stderr, which an in-process run cannot capture).
var connectdBinary = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "connectd-cmd-test-")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "connectd")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build: %v\n%s", err, out)
	}
	return bin, nil
})

// A worker with log.format=json whose Kafka refuses connections writes
// only JSON lines to stderr: librdkafka's own FAIL lines arrive as slog
// records naming the client, not as raw "%3|...|FAIL|..." lines.
func TestWorkerJSONLogIncludesLibrdkafkaLines(t *testing.T) {
	bin, err := connectdBinary()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(filepath.Dir(bin)) })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := ln.Addr().String()
	ln.Close()
	dir := t.TempDir()
	plugins := filepath.Join(dir, "plugins")
	if err := os.Mkdir(plugins, 0o755); err != nil {
		t.Fatal(err)
	}
	props := strings.Join([]string{
		"bootstrap.servers=" + refused,
		"group.id=json-logs",
		"config.storage.topic=json-logs-configs",
		"offset.storage.topic=json-logs-offsets",
		"status.storage.topic=json-logs-status",
		"key.converter=org.apache.kafka.connect.storage.StringConverter",
		"value.converter=org.apache.kafka.connect.json.JsonConverter",
		"plugin.path=" + plugins,
		"listeners=http://127.0.0.1:0",
		"log.format=json",
	}, "\n") + "\n"
	path := filepath.Join(dir, "worker.properties")
	if err := os.WriteFile(path, []byte(props), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "worker", path)
	var stderr syncbuf.Buffer
	cmd.Stderr = &stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// exited is closed when the worker has exited, with its error in waitErr.
	exited := make(chan struct{})
	var waitErr error
	go func() {
		waitErr = cmd.Wait()
		close(exited)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
	})

	records := func() ([]map[string]any, []string) {
		var recs []map[string]any
		var bad []string
		sc := bufio.NewScanner(strings.NewReader(stderr.String()))
		for sc.Scan() {
			var m map[string]any
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				bad = append(bad, sc.Text())
				continue
			}
			recs = append(recs, m)
		}
		return recs, bad
	}
	var fail map[string]any
	deadline := time.Now().Add(45 * time.Second)
	for fail == nil {
		recs, _ := records()
		for _, m := range recs {
			if m["rdkafka_tag"] == "FAIL" {
				fail = m
				break
			}
		}
		if fail != nil {
			break
		}
		select {
		case <-exited:
			t.Fatalf("worker exited (%v) before librdkafka logged a FAIL line; stderr:\n%s", waitErr, stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("no FAIL record from librdkafka within 45s; stderr:\n%s", stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if c, _ := fail["client"].(string); !strings.HasPrefix(c, "json-logs-topics#") {
		t.Errorf("FAIL record's client attribute %q does not name the worker's client", c)
	}
	if fail["level"] != "ERROR" || !strings.Contains(fmt.Sprint(fail["msg"]), refused) {
		t.Errorf("FAIL record %v", fail)
	}
	// A signal during start-up stops the worker cleanly, still in JSON.
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-exited:
		if waitErr != nil {
			t.Errorf("worker stopped during start-up: %v", waitErr)
		}
	case <-time.After(90 * time.Second):
		t.Fatal("worker did not stop within 90s of SIGTERM")
	}
	recs, bad := records()
	if len(bad) > 0 {
		t.Errorf("log.format=json wrote %d lines that are not JSON records, first %q; stderr:\n%s", len(bad), bad[0], stderr.String())
	}
	if len(recs) < 3 {
		t.Errorf("only %d records; stderr:\n%s", len(recs), stderr.String())
	}
}
