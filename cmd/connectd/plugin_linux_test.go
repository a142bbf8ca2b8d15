//go:build linux

package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/connectd/connectd/plugins/plugintest"
)

// Installing a shell script that forks and never serves (sleep without
// exec keeps the stdout pipe open) fails within the handshake timeout,
// says why, and leaves no process behind.
func TestPluginInstallOfForkingScriptIsBounded(t *testing.T) {
	src := t.TempDir()
	pidFile := filepath.Join(t.TempDir(), "pid")
	script := filepath.Join(src, "forking-plugin")
	if err := os.WriteFile(script, []byte(fmt.Sprintf("#!/bin/sh\necho $$ > %s\nsleep 1000\n", pidFile)), 0o755); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "plugins")
	type result struct {
		code      int
		out, errs string
	}
	done := make(chan result, 1)
	go func() {
		var out, errb bytes.Buffer
		code := run(context.Background(), []string{"plugin", "install", "--plugin-path", dir, "--handshake-timeout", "1s", script}, &out, &errb)
		done <- result{code, out.String(), errb.String()}
	}()
	pgid := plugintest.AwaitPidFile(t, pidFile)
	var r result
	select {
	case r = <-done:
	case <-time.After(2 * time.Minute):
		t.Fatalf("plugin install of a forking script still hangs; process group %d: %v", pgid, plugintest.GroupMembers(pgid))
	}
	if r.code != exitFailure {
		t.Fatalf("install: exit %d, want %d; stdout %q stderr %q", r.code, exitFailure, r.out, r.errs)
	}
	for _, want := range []string{script, "did not complete the handshake within 1s", "killed its process group"} {
		if !strings.Contains(r.errs, want) {
			t.Errorf("stderr %q does not say %q", r.errs, want)
		}
	}
	plugintest.AwaitGroupGone(t, pgid)
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("a failed install left %d files in the plugin directory", len(entries))
	}
}
