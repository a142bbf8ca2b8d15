package main

import (
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

type report struct {
	dir        string
	partitions int
	linger     int
	batch      int
	interval   time.Duration
	cross      bool // cross-cluster mode: checkpoint lag columns
	results    []result
}

func newReport(dir string, partitions, linger, batch int, interval time.Duration) *report {
	return &report{dir: dir, partitions: partitions, linger: linger, batch: batch, interval: interval}
}

func (r *report) add(res result) {
	r.results = append(r.results, res)
	_ = r.write() // keep partial results if a later run hangs
}

func (r *report) write() error {
	f, err := os.Create(filepath.Join(r.dir, "runs.csv"))
	if err != nil {
		return err
	}
	w := csv.NewWriter(f)
	_ = w.Write([]string{"system", "msg_size", "count", "partitions", "rep", "seconds", "throughput_msgs", "throughput_MBps",
		"cpu_s_sut", "cpu_s_per_M_sut", "cpu_s_per_M_broker", "rss_MB_peak", "records_read", "dupes", "gaps", "misplaced", "ok", "error", "processes (peak RSS/CPU s during the copy)",
		"checkpoint_lag_s_median", "checkpoint_lag_s_max", "checkpoint_samples", "checkpoint_note"})
	for _, x := range r.results {
		tp, mbps, cpm, bpm := "", "", "", ""
		if x.ok() {
			tp = fmt.Sprintf("%.0f", float64(x.records)/x.seconds)
			mbps = fmt.Sprintf("%.1f", float64(x.records)*float64(x.size)/x.seconds/1e6)
			cpm = fmt.Sprintf("%.2f", x.cpuSUT/float64(x.records)*1e6)
			bpm = fmt.Sprintf("%.2f", x.cpuBroker/float64(x.records)*1e6)
		}
		_ = w.Write([]string{x.system, strconv.Itoa(x.size), strconv.FormatInt(x.records, 10), strconv.Itoa(r.partitions), strconv.Itoa(x.rep),
			fmt.Sprintf("%.2f", x.seconds), tp, mbps, fmt.Sprintf("%.1f", x.cpuSUT), cpm, bpm, strconv.FormatInt(x.peakRSS>>20, 10),
			strconv.FormatInt(x.verdict.Records, 10), strconv.FormatInt(x.verdict.Duplicates, 10), strconv.FormatInt(x.verdict.Gaps, 10),
			strconv.FormatInt(x.verdict.Misplaced, 10), strconv.FormatBool(x.ok()), x.err, x.procs,
			ckptMedian(x.ckpt), ckptMax(x.ckpt), ckptCount(x.ckpt), ckptNote(x.ckpt)})
	}
	w.Flush()
	if err := f.Close(); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(r.dir, "summary.md"), []byte(r.markdown()), 0o644)
}

// stats is the median and interquartile range of a sample.
type stats struct{ med, q1, q3 float64 }

func summarize(xs []float64) stats {
	if len(xs) == 0 {
		return stats{}
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	q := func(p float64) float64 {
		pos := p * float64(len(s)-1)
		lo := int(pos)
		hi := min(lo+1, len(s)-1)
		return s[lo] + (s[hi]-s[lo])*(pos-float64(lo))
	}
	return stats{q(0.5), q(0.25), q(0.75)}
}

func (r *report) markdown() string {
	var b strings.Builder
	if r.cross {
		b.WriteString("Cross-cluster: source on cluster A, every worker and the target on cluster B; broker CPU is both brokers'. " +
			"Checkpoint lag: from a group's offset commit on A to its checkpoint in the checkpoints topic on B, " +
			"the committed records already replicated (median [max] over every sample of every run, n samples).\n\n")
	}
	fmt.Fprintf(&b, "Partitions %d; every producer linger.ms=%d batch.size=%d; raw loop and interval boundaries commit every %v.\n"+
		"Median over the runs that passed the exactly-once check, [IQR] in brackets; CPU = CPU-seconds per million records "+
		"(system under test; broker separately); RSS = peak summed RSS of all the system's processes.\n\n",
		r.partitions, r.linger, r.batch, r.interval)
	var sizes []int
	for _, x := range r.results {
		if !slices.Contains(sizes, x.size) {
			sizes = append(sizes, x.size)
		}
	}
	for _, size := range sizes {
		var systems []string
		var records int64
		for _, x := range r.results {
			if x.size == size && !slices.Contains(systems, x.system) {
				systems = append(systems, x.system)
			}
			if x.size == size {
				records = x.records
			}
		}
		fmt.Fprintf(&b, "**%d B × %d records**\n\n", size, records)
		b.WriteString("| system | runs ok | records/s | MB/s | CPU s/M (system) | CPU s/M (broker) | peak RSS MB |")
		if r.cross {
			b.WriteString(" checkpoint lag s |\n|---|---|---|---|---|---|---|---|\n")
		} else {
			b.WriteString("\n|---|---|---|---|---|---|---|\n")
		}
		med := map[string]map[string]float64{}
		for _, sys := range systems {
			med[sys] = r.systemRow(&b, size, sys)
		}
		b.WriteString("\n")
		writeRatios(&b, systems, med)
	}
	return b.String()
}

// systemRow writes one system's table row for a data-set size and returns
// its medians (throughput, CPU per record, RSS) for the ratios.
func (r *report) systemRow(b *strings.Builder, size int, sys string) map[string]float64 {
	var tp, mb, cpu, bcpu, rss []float64
	var lags []time.Duration
	var notes []string
	ok, total := 0, 0
	for _, x := range r.results {
		if x.size != size || x.system != sys {
			continue
		}
		total++
		if x.ckpt != nil {
			lags = append(lags, x.ckpt.lags...)
			for _, n := range []string{x.ckpt.note, x.ckpt.err} {
				if n != "" && !slices.Contains(notes, n) {
					notes = append(notes, n)
				}
			}
		}
		if !x.ok() {
			continue
		}
		ok++
		tp = append(tp, float64(x.records)/x.seconds)
		mb = append(mb, float64(x.records)*float64(x.size)/x.seconds/1e6)
		cpu = append(cpu, x.cpuSUT/float64(x.records)*1e6)
		bcpu = append(bcpu, x.cpuBroker/float64(x.records)*1e6)
		rss = append(rss, float64(x.peakRSS>>20))
	}
	t, m, c, bc, rs := summarize(tp), summarize(mb), summarize(cpu), summarize(bcpu), summarize(rss)
	fmt.Fprintf(b, "| %s | %d/%d | %.0f [%.0f–%.0f] | %.1f | %.2f [%.2f–%.2f] | %.2f | %.0f [%.0f–%.0f] |",
		sys, ok, total, t.med, t.q1, t.q3, m.med, c.med, c.q1, c.q3, bc.med, rs.med, rs.q1, rs.q3)
	if r.cross {
		cell := strings.Join(notes, "; ")
		if len(lags) > 0 {
			l := lagStats(lags)
			cell = strings.TrimSuffix(fmt.Sprintf("%.2f [%.2f] (n=%d); %s", l.med, l.max, len(lags), cell), "; ")
		}
		fmt.Fprintf(b, " %s |", cell)
	}
	b.WriteString("\n")
	return map[string]float64{"tp": t.med, "cpu": c.med, "rss": rs.med}
}

// writeRatios writes each variant against the default build it ran beside
// (A/B), then each connectd system against each other system.
func writeRatios(b *strings.Builder, systems []string, med map[string]map[string]float64) {
	b.WriteString("\n")
	for _, vs := range systems {
		base, _, isVariant := strings.Cut(vs, "@")
		v, d := med[vs], med[base]
		if !isVariant || v["tp"] == 0 || d["tp"] == 0 {
			continue
		}
		fmt.Fprintf(b, "- %s / %s: throughput %.3f×, CPU per record %.3f×, peak RSS %.3f×\n",
			vs, base, v["tp"]/d["tp"], v["cpu"]/d["cpu"], v["rss"]/d["rss"])
	}
	b.WriteString("\n")
	for _, cs := range systems {
		c := med[cs]
		if !strings.HasPrefix(cs, "connectd") || strings.Contains(cs, "@") || c["tp"] == 0 {
			continue
		}
		for _, other := range systems {
			o := med[other]
			if strings.HasPrefix(other, "connectd") || o["tp"] == 0 {
				continue
			}
			fmt.Fprintf(b, "- %s / %s: throughput %.2f×, CPU per record %.2f×, peak RSS %.2f×\n",
				cs, other, c["tp"]/o["tp"], c["cpu"]/o["cpu"], c["rss"]/o["rss"])
		}
		b.WriteString("\n")
	}
}

// lag is the median and maximum of checkpoint lags, in seconds.
type lag struct{ med, max float64 }

func lagStats(ds []time.Duration) lag {
	var xs []float64
	for _, d := range ds {
		xs = append(xs, d.Seconds())
	}
	return lag{summarize(xs).med, slices.Max(xs)}
}

func ckptMedian(c *ckptResult) string {
	if c == nil || len(c.lags) == 0 {
		return ""
	}
	return fmt.Sprintf("%.3f", lagStats(c.lags).med)
}

func ckptMax(c *ckptResult) string {
	if c == nil || len(c.lags) == 0 {
		return ""
	}
	return fmt.Sprintf("%.3f", lagStats(c.lags).max)
}

func ckptCount(c *ckptResult) string {
	if c == nil {
		return ""
	}
	return strconv.Itoa(len(c.lags))
}

func ckptNote(c *ckptResult) string {
	if c == nil {
		return ""
	}
	return strings.Trim(strings.Join([]string{c.note, c.err}, "; "), "; ")
}
