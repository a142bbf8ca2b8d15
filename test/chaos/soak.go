package chaos

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"
)

// sample is one reading of every process and of the pipeline's progress.
type sample struct {
	T time.Duration `json:"t_ns"` // since the pipeline started
	// Workers is the number of worker processes alive (stopped included).
	Workers int `json:"workers"`
	// RSS in KiB, summed per role.
	WorkerRSS int64 `json:"worker_rss_kib"`
	PluginRSS int64 `json:"plugin_rss_kib"`
	AeroRSS   int64 `json:"aerospike_rss_kib"`
	BrokerRSS int64 `json:"broker_rss_kib"`
	Plugins   int   `json:"plugins"`
	// Threads and open file descriptors of the workers and plugins.
	WorkerThreads int `json:"worker_threads"`
	WorkerFDs     int `json:"worker_fds"`
	PluginFDs     int `json:"plugin_fds"`
	// Goroutines summed over the workers that export go_goroutines on
	// GET /metrics; -1 when none does.
	Goroutines int `json:"goroutines"`
	// Progress: records in the source and replica topics (sum of end
	// offsets, -1 when Kafka did not answer) and writes the Aerospike
	// server has applied.
	SourceEnd  int64 `json:"source_end"`
	ReplicaEnd int64 `json:"replica_end"`
	AeroWrites int64 `json:"aerospike_writes"`
}

// perWorker is the footprint of one worker with its plugin processes.
func (s sample) perWorker() float64 {
	if s.Workers == 0 {
		return 0
	}
	return float64(s.WorkerRSS+s.PluginRSS) / float64(s.Workers)
}

// procLine is one process reading, for the per-process CSV.
type procLine struct {
	t            time.Duration
	role, name   string
	pid          int
	rss          int64
	threads, fds int
}

type sampler struct {
	r       *run
	every   time.Duration
	start   time.Time
	cons    *kafka.Consumer
	hc      *http.Client
	mu      sync.Mutex
	samples []sample
	csv     *bufio.Writer
	csvFile *os.File
	stopped chan struct{} // closed when run returns
}

func newSampler(r *run, every time.Duration, csvPath string) (*sampler, error) {
	cons, err := kafka.NewConsumer(&kafka.ConfigMap{"bootstrap.servers": r.broker.Bootstrap, "group.id": "chaos-sampler"})
	if err != nil {
		return nil, err
	}
	f, err := os.Create(csvPath)
	if err != nil {
		cons.Close()
		return nil, err
	}
	s := &sampler{r: r, every: every, start: time.Now(), cons: cons, hc: &http.Client{Timeout: 2 * time.Second}, csvFile: f, csv: bufio.NewWriter(f), stopped: make(chan struct{})}
	fmt.Fprintln(s.csv, "t_s,role,name,pid,rss_kib,threads,fds")
	return s, nil
}

func (s *sampler) close() {
	select {
	case <-s.stopped:
	case <-time.After(30 * time.Second):
		return // still taking a sample: leave the consumer alone
	}
	s.cons.Close()
	_ = s.csv.Flush()
	_ = s.csvFile.Close()
}

func (s *sampler) run(ctx context.Context) {
	defer close(s.stopped)
	t := time.NewTicker(s.every)
	defer t.Stop()
	for {
		s.take(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (s *sampler) endOffsets(topic string) int64 {
	md, err := s.cons.GetMetadata(&topic, false, 2000)
	if err != nil {
		return -1
	}
	var sum int64
	for _, p := range md.Topics[topic].Partitions {
		_, hi, err := s.cons.QueryWatermarkOffsets(topic, p.ID, 2000)
		if err != nil {
			return -1
		}
		sum += hi
	}
	return sum
}

// goroutines reads go_goroutines from a worker's GET /metrics, -1 if the
// worker does not export it.
func (s *sampler) goroutines(ctx context.Context, url string) int {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url+"/metrics", nil)
	resp, err := s.hc.Do(req)
	if err != nil {
		return -1
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return -1
	}
	sc := bufio.NewScanner(io.LimitReader(resp.Body, 8<<20))
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "go_goroutines "); ok {
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err == nil {
				return int(f)
			}
		}
	}
	return -1
}

func (s *sampler) take(ctx context.Context) {
	now := time.Since(s.start)
	smp := sample{T: now, Goroutines: -1}
	var lines []procLine
	for _, w := range s.r.cl.list() {
		if w.pid() == 0 {
			continue // dead (a stopped one still counts: its memory is held)
		}
		p, ok := readProc(w.pid())
		if !ok {
			continue
		}
		smp.Workers++
		smp.WorkerRSS += p.RSSKiB
		smp.WorkerThreads += p.Threads
		smp.WorkerFDs += p.FDs
		lines = append(lines, procLine{now, "worker", w.Name, p.PID, p.RSSKiB, p.Threads, p.FDs})
		if g := s.goroutines(ctx, w.URL); g >= 0 {
			smp.Goroutines = max(smp.Goroutines, 0) + g
		}
	}
	for _, p := range processesUnder(s.r.pluginDir) {
		smp.Plugins++
		smp.PluginRSS += p.RSSKiB
		smp.PluginFDs += p.FDs
		lines = append(lines, procLine{now, "plugin", s.r.classOf[p.Exe], p.PID, p.RSSKiB, p.Threads, p.FDs})
	}
	// An external cluster runs elsewhere: nothing to sample.
	if !s.r.aero.external() {
		if p, ok := readProc(s.r.aero.proc.pid()); ok {
			smp.AeroRSS = p.RSSKiB
			lines = append(lines, procLine{now, "aerospike", "aerofake", p.PID, p.RSSKiB, p.Threads, p.FDs})
		}
	}
	if pid := s.r.broker.pid(); pid != 0 {
		if p, ok := readProc(pid); ok {
			smp.BrokerRSS = p.RSSKiB
			lines = append(lines, procLine{now, "broker", "kafka", p.PID, p.RSSKiB, p.Threads, p.FDs})
		}
	}
	smp.SourceEnd = s.endOffsets(s.r.pl.source)
	smp.ReplicaEnd = s.endOffsets(s.r.pl.replica)
	sctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	if st, err := s.r.aero.stats(sctx); err == nil {
		smp.AeroWrites = st.Writes + st.BatchRecords
	}
	cancel()
	s.mu.Lock()
	s.samples = append(s.samples, smp)
	for _, l := range lines {
		fmt.Fprintf(s.csv, "%.1f,%s,%s,%d,%d,%d,%d\n", l.t.Seconds(), l.role, l.name, l.pid, l.rss, l.threads, l.fds)
	}
	s.mu.Unlock()
}

func (s *sampler) all() []sample {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]sample(nil), s.samples...)
}

// trend is the growth test of one series.
type trend struct {
	Name string `json:"name"`
	Unit string `json:"unit"`
	// Early and Late are the medians of the second and the last quarter of
	// the samples (the first quarter is warm-up: caches, pools and the
	// broker's heap fill up).
	Early float64 `json:"early_median"`
	Late  float64 `json:"late_median"`
	// SlopePerHour is the Theil–Sen slope over the last three quarters.
	SlopePerHour float64 `json:"slope_per_hour"`
	Growing      bool    `json:"growing"`
	Judged       bool    `json:"judged"` // false: reported only
	Rule         string  `json:"rule"`
}

// trendOf applies the growth rule: the series grows when the median of
// its last quarter exceeds the median of its second quarter by more than
// both rel (a fraction) and abs. Medians of quarters are robust against
// the spikes and dips the faults cause (a killed worker restarts small; a
// rebalance starts plugins), and comparing after the warm-up quarter does
// not mistake filling caches for a leak. Both thresholds must be crossed,
// so tiny series do not fail on noise and big ones on a few MiB.
func trendOf(name, unit string, xs []float64, ts []time.Duration, rel, abs float64, judged bool) trend {
	tr := trend{Name: name, Unit: unit, Judged: judged,
		Rule: fmt.Sprintf("late-quarter median > early median × %.2f and + %.0f %s", 1+rel, abs, unit)}
	n := len(xs)
	if n < 8 {
		tr.Judged = false
		tr.Rule = "too few samples to judge"
		return tr
	}
	q := n / 4
	tr.Early = median(xs[q : 2*q])
	tr.Late = median(xs[n-q:])
	tr.SlopePerHour = theilSen(xs[q:], ts[q:]) * float64(time.Hour)
	tr.Growing = tr.Late > tr.Early*(1+rel) && tr.Late-tr.Early > abs
	return tr
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// theilSen is the median of pairwise slopes (per nanosecond), over at most
// 400 evenly spaced points.
func theilSen(xs []float64, ts []time.Duration) float64 {
	step := max(1, len(xs)/400)
	var slopes []float64
	for i := 0; i < len(xs); i += step {
		for j := i + step; j < len(xs); j += step {
			if dt := float64(ts[j] - ts[i]); dt > 0 {
				slopes = append(slopes, (xs[j]-xs[i])/dt)
			}
		}
	}
	return median(slopes)
}

// trends judges the soak's resource series.
func trends(ss []sample) []trend {
	var per, aero, broker, fds, threads, gor []float64
	var ts, gts []time.Duration
	for _, s := range ss {
		if s.Workers == 0 {
			continue
		}
		ts = append(ts, s.T)
		w := float64(s.Workers)
		per = append(per, s.perWorker()/1024)
		aero = append(aero, float64(s.AeroRSS)/1024)
		broker = append(broker, float64(s.BrokerRSS)/1024)
		fds = append(fds, float64(s.WorkerFDs+s.PluginFDs)/w)
		threads = append(threads, float64(s.WorkerThreads)/w)
		if s.Goroutines >= 0 {
			gor = append(gor, float64(s.Goroutines)/w)
			gts = append(gts, s.T)
		}
	}
	out := []trend{
		trendOf("RSS per worker (worker + its plugin processes)", "MiB", per, ts, 0.25, 32, true),
		trendOf("Aerospike test server RSS", "MiB", aero, ts, 0.25, 32, true),
		trendOf("open file descriptors per worker (worker + plugins)", "fds", fds, ts, 0.5, 20, true),
		trendOf("OS threads per worker process", "threads", threads, ts, 0.5, 8, true),
		// The JVM grows its heap up to -Xmx before it collects in earnest:
		// reported, not judged.
		trendOf("Kafka broker RSS (JVM, -Xmx512m)", "MiB", broker, ts, 0.25, 64, false),
	}
	if len(gor) > 0 {
		out = append(out, trendOf("goroutines per worker", "goroutines", gor, gts, 0.5, 50, true))
	}
	return out
}
