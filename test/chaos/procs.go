package chaos

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// proc is one process as /proc shows it.
type proc struct {
	PID, PPID int
	Exe       string // argv[0]
	State     byte   // R S D T Z ...
	RSSKiB    int64
	Threads   int
	FDs       int
	Start     uint64 // start time in clock ticks since boot (tells reused pids apart)
}

// readProc reads one process; ok is false when it is gone or unreadable.
func readProc(pid int) (proc, bool) {
	dir := "/proc/" + strconv.Itoa(pid)
	p := proc{PID: pid}
	cmd, err := os.ReadFile(dir + "/cmdline")
	if err != nil {
		return p, false
	}
	if i := bytes.IndexByte(cmd, 0); i >= 0 {
		cmd = cmd[:i]
	}
	p.Exe = string(cmd)
	stat, err := os.ReadFile(dir + "/stat")
	if err != nil {
		return p, false
	}
	// The command name in parentheses may contain spaces: parse after the
	// last ')'.
	s := string(stat)
	if i := strings.LastIndexByte(s, ')'); i >= 0 {
		f := strings.Fields(s[i+1:])
		if len(f) > 19 {
			p.State = f[0][0]
			p.PPID, _ = strconv.Atoi(f[1])
			p.Threads, _ = strconv.Atoi(f[17])
			p.Start, _ = strconv.ParseUint(f[19], 10, 64)
		}
	}
	if st, err := os.ReadFile(dir + "/status"); err == nil {
		for _, line := range strings.Split(string(st), "\n") {
			if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
				f := strings.Fields(v)
				if len(f) > 0 {
					p.RSSKiB, _ = strconv.ParseInt(f[0], 10, 64)
				}
			}
		}
	}
	if ents, err := os.ReadDir(dir + "/fd"); err == nil {
		p.FDs = len(ents)
	}
	return p, true
}

// processesUnder lists the live processes whose argv[0] is inside dir
// (plugin binaries in the plugin directory). Zombies (exited, not yet
// reaped) are skipped: they hold no resources but their entry.
func processesUnder(dir string) []proc {
	dir = filepath.Clean(dir) + string(filepath.Separator)
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []proc
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmd, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil || !bytes.HasPrefix(cmd, []byte(dir)) {
			continue
		}
		p, ok := readProc(pid)
		if !ok || p.State == 'Z' || p.State == 'X' {
			continue
		}
		out = append(out, p)
	}
	return out
}
