package plugintest

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// GroupMembers lists the live (not zombie) processes of process group
// pgid, read from /proc (Linux). Plugins lead a process group of their
// own, whose id is the plugin's pid.
func GroupMembers(pgid int) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue // gone meanwhile
		}
		// After "(comm)": state ppid pgrp ...
		s := string(data)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) < 3 || f[0] == "Z" {
			continue
		}
		if g, err := strconv.Atoi(f[2]); err == nil && g == pgid {
			out = append(out, pid)
		}
	}
	return out
}

// AwaitGroupGone fails the test unless process group pgid has no live
// process within 10 seconds (SIGKILL is delivered asynchronously).
func AwaitGroupGone(t testing.TB, pgid int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		left := GroupMembers(pgid)
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("process group %d still has processes %v", pgid, left)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// AwaitPidFile waits for a test plugin script to write its pid into path
// and returns it.
func AwaitPidFile(t testing.TB, path string) int {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		data, err := os.ReadFile(path)
		if pid, perr := strconv.Atoi(strings.TrimSpace(string(data))); err == nil && perr == nil {
			return pid
		}
		if time.Now().After(deadline) {
			t.Fatalf("the plugin never wrote its pid to %s", path)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
