package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// clockTicks is USER_HZ, the unit of utime/stime in /proc/<pid>/stat. It is
// 100 on every Linux architecture Go supports.
const clockTicks = 100

// procStat reads a process's parent, CPU time and resident set size.
func procStat(pid int) (ppid int, cpu time.Duration, rss int64, ok bool) {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0, 0, 0, false
	}
	// The command name may contain spaces; fields resume after the last ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, 0, 0, false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 22 {
		return 0, 0, 0, false
	}
	// f[0] is field 3 (state): ppid is field 4, utime 14, stime 15, rss 24 (pages).
	ppid, _ = strconv.Atoi(f[1])
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	pages, _ := strconv.ParseInt(f[21], 10, 64)
	cpu = time.Duration(ut+st) * time.Second / clockTicks
	return ppid, cpu, pages * int64(os.Getpagesize()), true
}

// descendants returns roots and all their live descendants.
func descendants(roots []int) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return roots
	}
	children := map[int][]int{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if ppid, _, _, ok := procStat(pid); ok {
			children[ppid] = append(children[ppid], pid)
		}
	}
	var out []int
	seen := map[int]bool{}
	var walk func(int)
	walk = func(p int) {
		if seen[p] {
			return
		}
		seen[p] = true
		out = append(out, p)
		for _, c := range children[p] {
			walk(c)
		}
	}
	for _, r := range roots {
		walk(r)
	}
	return out
}

// sampler follows a process tree every interval: the latest CPU time of
// every process seen, and the peak of the tree's summed RSS.
type sampler struct {
	mu      sync.Mutex
	roots   []int
	cpu     map[int]time.Duration
	name    map[int]string
	peakRSS int64
	peakBy  map[int]int64
	stop    chan struct{}
	done    chan struct{}
}

func newSampler(interval time.Duration, roots ...int) *sampler {
	s := &sampler{roots: roots, cpu: map[int]time.Duration{}, name: map[int]string{}, peakBy: map[int]int64{},
		stop: make(chan struct{}), done: make(chan struct{})}
	s.sample()
	go func() {
		defer close(s.done)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-s.stop:
				return
			case <-t.C:
				s.sample()
			}
		}
	}()
	return s
}

// addRoot follows another process tree (a process started later).
func (s *sampler) addRoot(pid int) {
	s.mu.Lock()
	s.roots = append(s.roots, pid)
	s.mu.Unlock()
	s.sample()
}

func (s *sampler) sample() {
	s.mu.Lock()
	roots := append([]int(nil), s.roots...)
	s.mu.Unlock()
	pids := descendants(roots)
	var sum int64
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, pid := range pids {
		_, cpu, rss, ok := procStat(pid)
		if !ok {
			continue
		}
		s.cpu[pid] = cpu
		sum += rss
		s.peakBy[pid] = max(s.peakBy[pid], rss)
		if _, ok := s.name[pid]; !ok {
			if b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "comm")); err == nil {
				s.name[pid] = strings.TrimSpace(string(b))
			}
		}
	}
	s.peakRSS = max(s.peakRSS, sum)
}

// snapshot samples now and returns every process's CPU time so far.
func (s *sampler) snapshot() map[int]time.Duration {
	s.sample()
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[int]time.Duration, len(s.cpu))
	for k, v := range s.cpu {
		out[k] = v
	}
	return out
}

func (s *sampler) close() {
	close(s.stop)
	<-s.done
}

// cpuBetween sums, over all processes, CPU time used between two snapshots
// (a process absent from the first started after it).
func cpuBetween(a, b map[int]time.Duration) time.Duration {
	var d time.Duration
	for pid, cb := range b {
		d += cb - a[pid]
	}
	return d
}
