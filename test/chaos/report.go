package chaos

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/connectd/connectd/connectors/datagen/datagencheck"
	"github.com/connectd/connectd/framework/verify"
)

// Report is what a chaos run found.
type Report struct {
	Seed           int64         `json:"seed"`
	Duration       time.Duration `json:"duration_ns"`
	Elapsed        time.Duration `json:"elapsed_ns"`
	Pipeline       string        `json:"pipeline"`
	Dir            string        `json:"dir"`
	SessionTimeout time.Duration `json:"session_timeout_ns"`
	// Excluded are the fault kinds left out of the schedule.
	Excluded []string `json:"excluded_kinds,omitempty"`

	// Iterations is the per-task record count datagen was brought to;
	// Iterations2 datagen2's.
	Iterations  int64                 `json:"iterations"`
	Datagen     *datagencheck.Report  `json:"datagen"`
	Iterations2 int64                 `json:"iterations2"`
	Datagen2    *datagencheck.Report  `json:"datagen2"`
	Compare     *verify.CompareReport `json:"compare"`

	ExpectedSums      map[string]int64 `json:"-"`
	Counters          map[string]int64 `json:"-"`
	CounterMismatches []string         `json:"counter_mismatches"`
	OddRecords        []string         `json:"odd_records,omitempty"`

	BadSent        int            `json:"bad_records_sent"`
	BadByKind      map[string]int `json:"bad_records_by_kind"`
	DLQRecords     int            `json:"dlq_records"`
	DLQDistinct    int            `json:"dlq_distinct"`
	DLQMissing     []string       `json:"dlq_missing,omitempty"`
	DLQUnexpected  []string       `json:"dlq_unexpected,omitempty"`
	ReplDLQRecords int            `json:"replication_dlq_records"`
	REST           struct {
		Total   int         `json:"total"`
		Refused int         `json:"refused_4xx"`
		ByCode  map[int]int `json:"by_code"`
	} `json:"bad_rest"`

	FaultsInjected int                  `json:"faults_injected"`
	Events         []*event             `json:"events"`
	ByKind         map[string]kindStats `json:"by_kind"`
	TargetMisses   []string             `json:"target_misses,omitempty"`
	Failures       map[string]string    `json:"failures_seen,omitempty"`
	Status         []string             `json:"final_status"`

	First   sample   `json:"first_sample"`
	Last    sample   `json:"last_sample"`
	Samples []sample `json:"-"`
	Trends  []trend  `json:"trends"`
	Rates   rateInfo `json:"rates"`

	Violations []string `json:"violations"`
}

// OK reports whether the run kept every promise.
func (r *Report) OK() bool { return len(r.Violations) == 0 }

type kindStats struct {
	Count  int           `json:"count"`
	Worst  time.Duration `json:"worst_ns"`
	Median time.Duration `json:"median_ns"`
}

func byKind(evs []*event) map[string]kindStats {
	rec := map[string][]time.Duration{}
	for _, e := range evs {
		rec[e.Kind] = append(rec[e.Kind], e.Recovery)
	}
	out := map[string]kindStats{}
	for k, ds := range rec {
		sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
		out[k] = kindStats{Count: len(ds), Worst: ds[len(ds)-1], Median: medianDur(ds)}
	}
	return out
}

func medianDur(sorted []time.Duration) time.Duration {
	n := len(sorted)
	if n == 0 {
		return 0
	}
	if n%2 == 1 {
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}

// rateInfo summarises the pipeline's throughput over the run.
type rateInfo struct {
	SourcePerSec  float64 `json:"source_records_per_s"`
	ReplicaPerSec float64 `json:"replica_records_per_s"`
	AeroPerSec    float64 `json:"aerospike_writes_per_s"`
}

func rates(ss []sample) rateInfo {
	var first, last *sample
	for i := range ss {
		if ss[i].SourceEnd >= 0 && ss[i].ReplicaEnd >= 0 {
			if first == nil {
				first = &ss[i]
			}
			last = &ss[i]
		}
	}
	if first == nil || last == first {
		return rateInfo{}
	}
	dt := (last.T - first.T).Seconds()
	return rateInfo{
		SourcePerSec:  float64(last.SourceEnd-first.SourceEnd) / dt,
		ReplicaPerSec: float64(last.ReplicaEnd-first.ReplicaEnd) / dt,
		AeroPerSec:    float64(last.AeroWrites-first.AeroWrites) / dt,
	}
}

func syscallKill(pid int) error { return syscall.Kill(pid, syscall.SIGKILL) }

func dur(d time.Duration) string {
	if d == 0 {
		return "0"
	}
	return d.Round(100 * time.Millisecond).String()
}

// WriteText prints the report for people.
func (r *Report) WriteText(w io.Writer) {
	verdict := "PASSED"
	if !r.OK() {
		verdict = fmt.Sprintf("FAILED with %d violations", len(r.Violations))
	}
	fmt.Fprintf(w, "\n==== chaos report: %s (seed %d) ====\n", verdict, r.Seed)
	if len(r.Excluded) > 0 {
		fmt.Fprintf(w, "reproduce: make chaos DURATION=%v SEED=%d EXCLUDE=%s\n", r.Duration, r.Seed, strings.Join(r.Excluded, ","))
	} else {
		fmt.Fprintf(w, "reproduce: make chaos DURATION=%v SEED=%d\n", r.Duration, r.Seed)
	}
	fmt.Fprintf(w, "pipeline: %s\n", r.Pipeline)
	fmt.Fprintf(w, "faults for %v, run took %v; logs in %s\n\n", r.Duration, r.Elapsed.Round(time.Second), r.Dir)

	fmt.Fprintf(w, "faults injected: %d (session.timeout.ms %v)\n", r.FaultsInjected, r.SessionTimeout)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  kind\tcount\tworst recovery\tmedian recovery")
	kinds := make([]string, 0, len(r.ByKind))
	for k := range r.ByKind {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	var all []time.Duration
	for _, e := range r.Events {
		if !e.Consequence {
			all = append(all, e.Recovery)
		}
	}
	for _, k := range kinds {
		s := r.ByKind[k]
		name := k
		if k == kindRejoin {
			name += " (consequence)"
		}
		fmt.Fprintf(tw, "  %s\t%d\t%s\t%s\n", name, s.Count, dur(s.Worst), dur(s.Median))
	}
	sort.Slice(all, func(i, j int) bool { return all[i] < all[j] })
	if len(all) > 0 {
		fmt.Fprintf(tw, "  all faults\t%d\t%s\t%s\n", len(all), dur(all[len(all)-1]), dur(medianDur(all)))
	}
	tw.Flush()
	for _, m := range r.TargetMisses {
		fmt.Fprintf(w, "  recovery target missed: %s\n", m)
	}
	for _, e := range r.Events {
		if e.Kind == KindPluginKill {
			fmt.Fprintf(w, "  #%d %s: recovery %s; hosted %v; down %v\n", e.N, e.Detail, dur(e.Recovery), e.Hosted, e.Down)
		}
	}

	fmt.Fprintln(w, "\nrecords:")
	if d := r.Datagen; d != nil {
		fmt.Fprintf(w, "  source: %d datagen records (%d tasks × %d), duplicates %d, missing %d, reordered %d, invalid %d; %d bad records\n",
			d.Distinct, d.Tasks, r.Iterations, d.Duplicates, d.Missing, d.Reordered, d.Invalid, d.Ignored)
	}
	if d := r.Datagen2; d != nil {
		fmt.Fprintf(w, "  %s: %d datagen records (%d tasks × %d), duplicates %d, missing %d, reordered %d, invalid %d\n",
			connDatagen2, d.Distinct, d.Tasks, r.Iterations2, d.Duplicates, d.Missing, d.Reordered, d.Invalid)
	}
	if c := r.Compare; c != nil {
		fmt.Fprintf(w, "  replica (read_committed) vs source: %d of %d copied, duplicates %d, lost %d, pending %d, unexpected %d, reordered %d, moved %d\n",
			c.Copied, c.SourceRecords, c.Duplicates, c.Lost, c.Pending, c.Unexpected, c.Reordered, c.Moved)
	}
	fmt.Fprintf(w, "  aerospike: %d counters, %d exact of %d expected, applied sum %d (expected %d)\n",
		len(r.Counters), len(r.ExpectedSums)-len(r.CounterMismatches), len(r.ExpectedSums), total(r.Counters), total(r.ExpectedSums))
	fmt.Fprintf(w, "  dead letters: %d bad records written %v; sink DLQ holds %d records, %d distinct bad records (repeats are replays: a sink DLQ is at-least-once), %d missing, %d unexpected; replication DLQ %d\n",
		r.BadSent, r.BadByKind, r.DLQRecords, r.DLQDistinct, len(r.DLQMissing), len(r.DLQUnexpected), r.ReplDLQRecords)
	fmt.Fprintf(w, "  bad REST requests: %d, refused with 4xx %d %v\n", r.REST.Total, r.REST.Refused, r.REST.ByCode)
	fmt.Fprintf(w, "  throughput: source %.0f/s, replica %.0f/s, aerospike writes %.0f/s\n", r.Rates.SourcePerSec, r.Rates.ReplicaPerSec, r.Rates.AeroPerSec)
	fmt.Fprintf(w, "  final status: %s\n", strings.Join(r.Status, "; "))
	if len(r.Failures) > 0 {
		fmt.Fprintln(w, "  FAILED states seen (then restarted automatically):")
		keys := make([]string, 0, len(r.Failures))
		for k := range r.Failures {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			fmt.Fprintf(w, "    %s: %.200s\n", k, r.Failures[k])
		}
	}

	fmt.Fprintln(w, "\nresources (RSS KiB):")
	fmt.Fprintf(w, "  start: workers %d (%d alive), plugins %d (%d), aerospike %d, broker %d\n",
		r.First.WorkerRSS, r.First.Workers, r.First.PluginRSS, r.First.Plugins, r.First.AeroRSS, r.First.BrokerRSS)
	fmt.Fprintf(w, "  end:   workers %d (%d alive), plugins %d (%d), aerospike %d, broker %d\n",
		r.Last.WorkerRSS, r.Last.Workers, r.Last.PluginRSS, r.Last.Plugins, r.Last.AeroRSS, r.Last.BrokerRSS)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  series\tearly median\tlate median\tTheil–Sen slope/h\tverdict")
	for _, t := range r.Trends {
		v := "flat"
		switch {
		case !t.Judged:
			v = "reported only"
		case t.Growing:
			v = "GROWING"
		}
		fmt.Fprintf(tw, "  %s (%s)\t%.1f\t%.1f\t%+.1f\t%s\n", t.Name, t.Unit, t.Early, t.Late, t.SlopePerHour, v)
	}
	tw.Flush()
	if len(r.Trends) > 0 && !hasGoroutines(r.Trends) {
		fmt.Fprintln(w, "  goroutines: the workers do not serve GET /metrics in this build; threads and fds stand in")
	}

	if len(r.Violations) > 0 {
		fmt.Fprintf(w, "\nVIOLATIONS (%d):\n", len(r.Violations))
		for _, v := range r.Violations {
			fmt.Fprintf(w, "  - %s\n", v)
		}
		fmt.Fprintf(w, "\nreproduce with seed %d\n", r.Seed)
	} else {
		fmt.Fprintln(w, "\nno violations")
	}
}

func hasGoroutines(ts []trend) bool {
	for _, t := range ts {
		if strings.HasPrefix(t.Name, "goroutines") {
			return true
		}
	}
	return false
}

// WriteFiles saves the report as JSON and the samples as JSON lines.
func (r *Report) WriteFiles(reportPath, samplesPath string) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(reportPath, b, 0o644); err != nil {
		return err
	}
	f, err := os.Create(samplesPath)
	if err != nil {
		return err
	}
	defer f.Close()
	enc := json.NewEncoder(f)
	for _, s := range r.Samples {
		if err := enc.Encode(s); err != nil {
			return err
		}
	}
	return nil
}
