//go:build linux

package host_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/connectd/connectd/plugins/host"
	"github.com/connectd/connectd/plugins/plugintest"
)

// scriptManifest writes an executable shell script and its manifest.
func scriptManifest(t testing.TB, name, script string) host.Manifest {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(script))
	return host.Manifest{Name: name, Dir: dir, Binary: name, SHA256: hex.EncodeToString(sum[:])}
}

// A plugin that forks and never completes the handshake (a shell script
// running sleep without exec: the child keeps the stdout pipe open) must
// fail the launch with the reason, and nothing of it may be left.
func TestLaunchKillsForkingPluginGroupAfterHandshakeTimeout(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	m := scriptManifest(t, "ForkingPlugin", fmt.Sprintf("#!/bin/sh\necho $$ > %s\nsleep 1000\necho never\n", pidFile))

	type result struct {
		p   *host.Process
		err error
	}
	done := make(chan result, 1)
	go func() {
		p, err := host.Launch(context.Background(), m, host.LaunchOptions{
			Logger: slog.New(slog.DiscardHandler), HandshakeTimeout: time.Second})
		done <- result{p, err}
	}()
	pgid := plugintest.AwaitPidFile(t, pidFile)
	var r result
	select {
	case r = <-done:
	case <-time.After(2 * time.Minute):
		t.Fatalf("Launch of a forking plugin still hangs; process group %d: %v", pgid, plugintest.GroupMembers(pgid))
	}
	if r.err == nil {
		_ = r.p.Close(context.Background())
		t.Fatal("a plugin that never completes the handshake launched")
	}
	if !errors.Is(r.err, host.ErrTimeout) {
		t.Errorf("error %v does not wrap ErrTimeout", r.err)
	}
	for _, want := range []string{"ForkingPlugin", "did not complete the handshake within 1s", "killed its process group"} {
		if !strings.Contains(r.err.Error(), want) {
			t.Errorf("error %q does not say %q", r.err, want)
		}
	}
	plugintest.AwaitGroupGone(t, pgid)
}

// Launch abandoned through its context still kills the process group once
// the handshake timeout ends go-plugin's start.
func TestLaunchCancelledKillsForkingPluginGroup(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	m := scriptManifest(t, "ForkingPlugin", fmt.Sprintf("#!/bin/sh\necho $$ > %s\nsleep 1000\n", pidFile))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := host.Launch(ctx, m, host.LaunchOptions{Logger: slog.New(slog.DiscardHandler), HandshakeTimeout: time.Second})
		done <- err
	}()
	pgid := plugintest.AwaitPidFile(t, pidFile)
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled launch: %v", err)
	}
	plugintest.AwaitGroupGone(t, pgid)
}

// A working plugin that forked a child (which inherits its stdout and
// stderr) leaves nothing behind when it is closed.
func TestCloseKillsPluginChildren(t *testing.T) {
	bin := build(t, "source")
	pidFile := filepath.Join(t.TempDir(), "pid")
	// The child keeps the plugin's stdout and stderr open; exec keeps the
	// plugin in the script's process (and group).
	m := scriptManifest(t, "ForkingSource", fmt.Sprintf("#!/bin/sh\necho $$ > %s\nsleep 1000 &\nexec %s\n", pidFile, bin))
	p, err := host.Launch(ctxT(t), m, host.LaunchOptions{Logger: plugintest.TestLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	pgid := plugintest.AwaitPidFile(t, pidFile)
	if pgid != p.Pid() {
		t.Fatalf("the plugin's pid %d is not its process group id %d", p.Pid(), pgid)
	}
	if _, err := p.Spec(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	if n := len(plugintest.GroupMembers(pgid)); n < 2 {
		t.Fatalf("process group %d has %d live processes, want the plugin and its child", pgid, n)
	}
	if err := p.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.Done():
	default:
		t.Error("Close returned before the plugin was gone")
	}
	plugintest.AwaitGroupGone(t, pgid)
}

// A plugin that dies while a child it forked still holds its stdout and
// stderr is noticed as exited, and the child is killed.
func TestCrashedPluginWithChildIsNoticed(t *testing.T) {
	bin := build(t, "source")
	pidFile := filepath.Join(t.TempDir(), "pid")
	m := scriptManifest(t, "ForkingSource", fmt.Sprintf("#!/bin/sh\necho $$ > %s\nsleep 1000 &\nexec %s\n", pidFile, bin))
	p, err := host.Launch(ctxT(t), m, host.LaunchOptions{Logger: plugintest.TestLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close(context.Background()) })
	pgid := plugintest.AwaitPidFile(t, pidFile)
	if err := syscall.Kill(p.Pid(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.Done():
	case <-time.After(30 * time.Second):
		t.Fatalf("the plugin's exit is not noticed while its child holds its pipes; process group %d: %v", pgid, plugintest.GroupMembers(pgid))
	}
	var ee *host.ExitError
	if !errors.As(p.Err(), &ee) || ee.Pid != p.Pid() {
		t.Errorf("Err() = %v, want the plugin's ExitError", p.Err())
	}
	plugintest.AwaitGroupGone(t, pgid)
}
