package benchkit

import (
	"bufio"
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

// Stat is what /proc/<pid>/stat tells about one process.
type Stat struct {
	PPid    int
	CPU     time.Duration // user + system time so far
	RSS     int64         // bytes
	Threads int
}

// ProcStat reads a process's /proc/<pid>/stat.
func ProcStat(pid int) (Stat, bool) {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return Stat{}, false
	}
	// The command name may contain spaces; fields resume after the last ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return Stat{}, false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 22 {
		return Stat{}, false
	}
	// f[0] is field 3 (state): ppid is field 4, utime 14, stime 15,
	// num_threads 20, rss 24 (pages).
	ppid, _ := strconv.Atoi(f[1])
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	threads, _ := strconv.Atoi(f[17])
	pages, _ := strconv.ParseInt(f[21], 10, 64)
	return Stat{
		PPid:    ppid,
		CPU:     time.Duration(ut+st) * time.Second / clockTicks,
		RSS:     pages * int64(os.Getpagesize()),
		Threads: threads,
	}, true
}

// PSS is a process's proportional set size in bytes, from
// /proc/<pid>/smaps_rollup: shared pages count divided by their sharers,
// so the PSS of a process tree adds up to what the tree really holds.
func PSS(pid int) (int64, bool) {
	f, err := os.Open(filepath.Join("/proc", strconv.Itoa(pid), "smaps_rollup"))
	if err != nil {
		return 0, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "Pss:")
		if !ok {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
		return kb << 10, err == nil
	}
	return 0, false
}

// Descendants returns roots and all their live descendants.
func Descendants(roots []int) []int {
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
		if st, ok := ProcStat(pid); ok {
			children[st.PPid] = append(children[st.PPid], pid)
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

// Usage is a process tree's resources at one moment.
type Usage struct {
	Procs   int
	Threads int
	RSS     int64 // bytes, summed (shared pages counted once per process)
	PSS     int64 // bytes, summed
	// CPU is every live process's CPU time so far, by pid.
	CPU map[int]time.Duration
}

// TreeUsage measures the trees under roots now.
func TreeUsage(roots ...int) Usage {
	u := Usage{CPU: map[int]time.Duration{}}
	for _, pid := range Descendants(roots) {
		st, ok := ProcStat(pid)
		if !ok {
			continue // exited meanwhile
		}
		u.Procs++
		u.Threads += st.Threads
		u.RSS += st.RSS
		u.CPU[pid] = st.CPU
		if pss, ok := PSS(pid); ok {
			u.PSS += pss
		}
	}
	return u
}

// Sampler follows a process tree every interval: the latest CPU time of
// every process seen, and the peak of the tree's summed RSS.
type Sampler struct {
	mu      sync.Mutex
	roots   []int
	cpu     map[int]time.Duration
	name    map[int]string
	peakRSS int64
	peakBy  map[int]int64
	stop    chan struct{}
	done    chan struct{}
}

// NewSampler starts sampling the trees under roots (more can be added).
func NewSampler(interval time.Duration, roots ...int) *Sampler {
	s := &Sampler{roots: roots, cpu: map[int]time.Duration{}, name: map[int]string{}, peakBy: map[int]int64{},
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

// AddRoot follows another process tree (a process started later).
func (s *Sampler) AddRoot(pid int) {
	s.mu.Lock()
	s.roots = append(s.roots, pid)
	s.mu.Unlock()
	s.sample()
}

func (s *Sampler) sample() {
	s.mu.Lock()
	roots := append([]int(nil), s.roots...)
	s.mu.Unlock()
	pids := Descendants(roots)
	var sum int64
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, pid := range pids {
		st, ok := ProcStat(pid)
		if !ok {
			continue
		}
		s.cpu[pid] = st.CPU
		sum += st.RSS
		s.peakBy[pid] = max(s.peakBy[pid], st.RSS)
		if _, ok := s.name[pid]; !ok {
			if b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "comm")); err == nil {
				s.name[pid] = strings.TrimSpace(string(b))
			}
		}
	}
	s.peakRSS = max(s.peakRSS, sum)
}

// Snapshot samples now and returns every process's CPU time so far.
func (s *Sampler) Snapshot() map[int]time.Duration {
	s.sample()
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[int]time.Duration, len(s.cpu))
	for k, v := range s.cpu {
		out[k] = v
	}
	return out
}

// PeakRSS is the highest summed RSS of the trees seen so far, in bytes.
func (s *Sampler) PeakRSS() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.peakRSS
}

// Peaks is every process's highest RSS seen, with its command name.
func (s *Sampler) Peaks() map[int]NamedRSS {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[int]NamedRSS, len(s.peakBy))
	for pid, rss := range s.peakBy {
		out[pid] = NamedRSS{Name: s.name[pid], RSS: rss}
	}
	return out
}

// NamedRSS is one process's peak RSS (bytes) and command name.
type NamedRSS struct {
	Name string
	RSS  int64
}

// Close stops sampling.
func (s *Sampler) Close() {
	close(s.stop)
	<-s.done
}

// CPUBetween sums, over all processes, CPU time used between two snapshots
// (a process absent from the first started after it).
func CPUBetween(a, b map[int]time.Duration) time.Duration {
	var d time.Duration
	for pid, cb := range b {
		d += cb - a[pid]
	}
	return d
}
