// Package datagencheck checks a topic written by DatagenSource's counter
// quickstart: each task's sequence exactly once, contiguous from the
// start, increasing within each partition, with contents that match the
// deterministic generator (package datagen). It also returns the per-key
// sums of the amounts, which is what a counting sink (AerospikeSink in
// increment mode) must end up holding. `connectd verify datagen` and the
// chaos suite run it.
//
// It reads topics through framework/verify, which owns reading a topic as
// a read_committed consumer sees it and knows no connector; the knowledge
// of what the generator writes lives here, beside the generator.
//
// What it must not do: write to Kafka, commit consumer offsets, or be
// imported by the plugin (it links librdkafka through verify).
package datagencheck

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"text/tabwriter"

	"github.com/connectd/connectd/connectors/datagen"
	"github.com/connectd/connectd/framework/verify"
)

// Spec describes the DatagenSource counter connector that wrote a
// topic: its task count (tasks.max), random.seed and key.cardinality, and,
// when the tasks ran to the end, iterations.
type Spec struct {
	Tasks       int
	Seed        int64
	Cardinality int
	// Iterations, when > 0, is the exact number of records each task must
	// have written; 0 checks only what is there (no gaps below each task's
	// highest sequence number).
	Iterations int64
	// IgnoreHeader, when set, skips records that carry a header of that
	// name (records a test wrote into the topic on purpose). They are
	// counted as Ignored.
	IgnoreHeader string
	// MaxExamples bounds the examples listed per kind of violation
	// (default 10).
	MaxExamples int
}

// TaskCounts are per-task figures of a check.
type TaskCounts struct {
	Task    int   `json:"task"`
	Records int64 `json:"records"` // distinct sequence numbers seen
	// Next is the number of records the task has written without a gap
	// from the start: its sequence numbers are task + i*tasks for i < Next.
	Next       int64 `json:"contiguous"`
	Missing    int64 `json:"missing"`
	Duplicates int64 `json:"duplicates"`
}

// Report is the outcome of Check.
type Report struct {
	Topic string `json:"topic"`
	Tasks int    `json:"tasks"`
	// Records counts counter records read, duplicates included.
	Records int64 `json:"records"`
	// Distinct counts distinct sequence numbers.
	Distinct int64 `json:"distinct"`
	// Ignored counts records skipped for IgnoreHeader.
	Ignored int64 `json:"ignored"`
	// Invalid counts records that are not counter records of this
	// generator: unparseable values, or key/amount not what the seed gives
	// for their sequence number, or a sequence number beyond Iterations.
	Invalid    int64 `json:"invalid"`
	Duplicates int64 `json:"duplicates"`
	// Missing counts sequence numbers absent below each task's highest
	// (or below Iterations when set).
	Missing int64 `json:"missing"`
	// Reordered counts records that come after a higher sequence number of
	// the same task in the same partition.
	Reordered int64        `json:"reordered"`
	PerTask   []TaskCounts `json:"per_task"`
	// Sums is the sum of amounts per key over the distinct records: what
	// a sink that adds the amounts up must hold.
	Sums     map[string]int64 `json:"sums,omitempty"`
	Examples []string         `json:"examples,omitempty"`
}

// OK reports whether the topic holds each task's sequence exactly once.
func (r *Report) OK() bool {
	return r.Invalid == 0 && r.Duplicates == 0 && r.Missing == 0 && r.Reordered == 0
}

// counterValue is a counter record's value, bare or in the JSON
// converter's schema/payload envelope.
type counterValue struct {
	Key     *string         `json:"key"`
	Amount  *int64          `json:"amount"`
	Seq     *int64          `json:"seq"`
	Payload json.RawMessage `json:"payload"`
}

func parseCounter(v []byte) (key string, amount, seq int64, err error) {
	var cv counterValue
	if err := json.Unmarshal(v, &cv); err != nil {
		return "", 0, 0, err
	}
	if cv.Seq == nil && len(cv.Payload) > 0 {
		cv = counterValue{}
		if err := json.Unmarshal(v, &struct {
			Payload *counterValue `json:"payload"`
		}{&cv}); err != nil {
			return "", 0, 0, err
		}
	}
	if cv.Key == nil || cv.Amount == nil || cv.Seq == nil {
		return "", 0, 0, errors.New("not a counter record (needs key, amount and seq)")
	}
	return *cv.Key, *cv.Amount, *cv.Seq, nil
}

// bitset is a growable set of small non-negative integers.
type bitset []uint64

func (b *bitset) testAndSet(i int64) bool {
	w := int(i / 64)
	for w >= len(*b) {
		*b = append(*b, 0)
	}
	m := uint64(1) << (i % 64)
	was := (*b)[w]&m != 0
	(*b)[w] |= m
	return was
}

func (b bitset) has(i int64) bool {
	w := int(i / 64)
	return w < len(b) && b[w]&(uint64(1)<<(i%64)) != 0
}

// Check reads topic and checks it against the counter sequence of spec.
func Check(ctx context.Context, opts verify.ReadOptions, topic string, spec Spec) (*Report, error) {
	if spec.Tasks < 1 {
		return nil, fmt.Errorf("datagencheck: tasks must be at least 1, got %d", spec.Tasks)
	}
	if spec.Cardinality < 1 {
		return nil, fmt.Errorf("datagencheck: key cardinality must be at least 1, got %d", spec.Cardinality)
	}
	if spec.MaxExamples <= 0 {
		spec.MaxExamples = 10
	}
	rep := &Report{Topic: topic, Tasks: spec.Tasks, Sums: map[string]int64{}}
	ex := verify.Examples{Max: spec.MaxExamples}
	seen := make([]bitset, spec.Tasks)
	top := make([]int64, spec.Tasks) // highest index seen + 1
	dups := make([]int64, spec.Tasks)
	type pt struct {
		partition int32
		task      int
	}
	last := map[pt]int64{}
	tasks := int64(spec.Tasks)
	if _, err := verify.ReadTopic(ctx, opts, topic, func(r *verify.Record) {
		if spec.IgnoreHeader != "" {
			if _, ok := r.Header(spec.IgnoreHeader); ok {
				rep.Ignored++
				return
			}
		}
		key, amount, seq, err := parseCounter(r.Value)
		if err != nil {
			rep.Invalid++
			ex.Add("invalid", "%s-%d@%d: %v", topic, r.Partition, r.Offset, err)
			return
		}
		rep.Records++
		want := datagen.CounterAt(spec.Seed, spec.Cardinality, seq)
		recKey := string(r.Key)
		if uq, err := strconv.Unquote(recKey); err == nil && bytes.HasPrefix(r.Key, []byte(`"`)) {
			recKey = uq // a JSON-converted key
		}
		switch {
		case seq < 0:
			rep.Invalid++
			ex.Add("invalid", "%s-%d@%d: negative seq %d", topic, r.Partition, r.Offset, seq)
			return
		case key != want.Key || amount != want.Amount || (r.Key != nil && recKey != want.Key):
			rep.Invalid++
			ex.Add("invalid", "%s-%d@%d: seq %d has key %q (record key %q) amount %d; the generator gives key %q amount %d",
				topic, r.Partition, r.Offset, seq, key, recKey, amount, want.Key, want.Amount)
			return
		}
		task := int(seq % tasks)
		idx := seq / tasks
		if spec.Iterations > 0 && idx >= spec.Iterations {
			rep.Invalid++
			ex.Add("invalid", "%s-%d@%d: seq %d is beyond the %d iterations of task %d", topic, r.Partition, r.Offset, seq, spec.Iterations, task)
			return
		}
		k := pt{r.Partition, task}
		if l, ok := last[k]; ok && seq < l {
			rep.Reordered++
			ex.Add("reordered", "%s-%d@%d: seq %d after seq %d of task %d", topic, r.Partition, r.Offset, seq, l, task)
		} else {
			last[k] = seq
		}
		if seen[task].testAndSet(idx) {
			dups[task]++
			rep.Duplicates++
			ex.Add("duplicate", "%s-%d@%d: seq %d (task %d) again", topic, r.Partition, r.Offset, seq, task)
			return
		}
		rep.Distinct++
		top[task] = max(top[task], idx+1)
		rep.Sums[key] += amount
	}); err != nil {
		return nil, err
	}
	for t := range spec.Tasks {
		end := top[t]
		if spec.Iterations > 0 {
			end = spec.Iterations
		}
		tc := TaskCounts{Task: t, Duplicates: dups[t]}
		tc.Next = -1
		for i := int64(0); i < end; i++ {
			if seen[t].has(i) {
				tc.Records++
				continue
			}
			if tc.Next < 0 {
				tc.Next = i
			}
			tc.Missing++
			ex.Add("missing", "task %d: seq %d is missing", t, int64(t)+i*tasks)
		}
		if tc.Next < 0 {
			tc.Next = end
		}
		rep.Missing += tc.Missing
		rep.PerTask = append(rep.PerTask, tc)
	}
	sort.Slice(rep.PerTask, func(i, j int) bool { return rep.PerTask[i].Task < rep.PerTask[j].Task })
	rep.Examples = ex.List()
	return rep, nil
}

// WriteText renders the report for people.
func (r *Report) WriteText(w io.Writer) error {
	verdict := "OK: every task's sequence is there exactly once, in order"
	if !r.OK() {
		verdict = "FAILED: the topic does not hold the datagen sequence exactly once"
	}
	fmt.Fprintf(w, "%s\n\ntopic %s, %d datagen tasks\n", verdict, r.Topic, r.Tasks)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, row := range []struct {
		name string
		n    int64
	}{
		{"counter records", r.Records}, {"distinct", r.Distinct}, {"duplicates", r.Duplicates},
		{"missing", r.Missing}, {"reordered", r.Reordered}, {"invalid", r.Invalid}, {"ignored", r.Ignored},
	} {
		fmt.Fprintf(tw, "  %s\t%d\n", row.name, row.n)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  task\trecords\tcontiguous\tmissing\tduplicates")
	for _, t := range r.PerTask {
		fmt.Fprintf(tw, "  %d\t%d\t%d\t%d\t%d\n", t.Task, t.Records, t.Next, t.Missing, t.Duplicates)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	return verify.WriteExamples(w, r.Examples)
}

// WriteSums renders the per-key sums, sorted by key.
func (r *Report) WriteSums(w io.Writer) error {
	keys := make([]string, 0, len(r.Sums))
	for k := range r.Sums {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  key\tsum")
	for _, k := range keys {
		fmt.Fprintf(tw, "  %s\t%d\n", k, r.Sums[k])
	}
	return tw.Flush()
}
