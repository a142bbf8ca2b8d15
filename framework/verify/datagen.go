package verify

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"

	"github.com/connectd/connectd/connectors/datagen"
)

// DatagenSpec describes the DatagenSource counter connector that wrote a
// topic: its task count (tasks.max), random.seed and key.cardinality, and,
// when the tasks ran to the end, iterations.
type DatagenSpec struct {
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

// TaskCounts are per-task figures of a datagen check.
type TaskCounts struct {
	Task    int   `json:"task"`
	Records int64 `json:"records"` // distinct sequence numbers seen
	// Next is the number of records the task has written without a gap
	// from the start: its sequence numbers are task + i*tasks for i < Next.
	Next       int64 `json:"contiguous"`
	Missing    int64 `json:"missing"`
	Duplicates int64 `json:"duplicates"`
}

// DatagenReport is the outcome of CheckDatagen.
type DatagenReport struct {
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
func (r *DatagenReport) OK() bool {
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

// CheckDatagen reads topic and checks it against the counter sequence of
// spec.
func CheckDatagen(ctx context.Context, opts ReadOptions, topic string, spec DatagenSpec) (*DatagenReport, error) {
	if spec.Tasks < 1 {
		return nil, fmt.Errorf("verify: datagen tasks must be at least 1, got %d", spec.Tasks)
	}
	if spec.Cardinality < 1 {
		return nil, fmt.Errorf("verify: datagen key cardinality must be at least 1, got %d", spec.Cardinality)
	}
	if spec.MaxExamples <= 0 {
		spec.MaxExamples = 10
	}
	rep := &DatagenReport{Topic: topic, Tasks: spec.Tasks, Sums: map[string]int64{}}
	ex := examples{max: spec.MaxExamples}
	seen := make([]bitset, spec.Tasks)
	top := make([]int64, spec.Tasks) // highest index seen + 1
	dups := make([]int64, spec.Tasks)
	type pt struct {
		partition int32
		task      int
	}
	last := map[pt]int64{}
	tasks := int64(spec.Tasks)
	if _, err := ReadTopic(ctx, opts, topic, func(r *Record) {
		if spec.IgnoreHeader != "" {
			if _, ok := r.Header(spec.IgnoreHeader); ok {
				rep.Ignored++
				return
			}
		}
		key, amount, seq, err := parseCounter(r.Value)
		if err != nil {
			rep.Invalid++
			ex.add("invalid", "%s-%d@%d: %v", topic, r.Partition, r.Offset, err)
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
			ex.add("invalid", "%s-%d@%d: negative seq %d", topic, r.Partition, r.Offset, seq)
			return
		case key != want.Key || amount != want.Amount || (r.Key != nil && recKey != want.Key):
			rep.Invalid++
			ex.add("invalid", "%s-%d@%d: seq %d has key %q (record key %q) amount %d; the generator gives key %q amount %d",
				topic, r.Partition, r.Offset, seq, key, recKey, amount, want.Key, want.Amount)
			return
		}
		task := int(seq % tasks)
		idx := seq / tasks
		if spec.Iterations > 0 && idx >= spec.Iterations {
			rep.Invalid++
			ex.add("invalid", "%s-%d@%d: seq %d is beyond the %d iterations of task %d", topic, r.Partition, r.Offset, seq, spec.Iterations, task)
			return
		}
		k := pt{r.Partition, task}
		if l, ok := last[k]; ok && seq < l {
			rep.Reordered++
			ex.add("reordered", "%s-%d@%d: seq %d after seq %d of task %d", topic, r.Partition, r.Offset, seq, l, task)
		} else {
			last[k] = seq
		}
		if seen[task].testAndSet(idx) {
			dups[task]++
			rep.Duplicates++
			ex.add("duplicate", "%s-%d@%d: seq %d (task %d) again", topic, r.Partition, r.Offset, seq, task)
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
			ex.add("missing", "task %d: seq %d is missing", t, int64(t)+i*tasks)
		}
		if tc.Next < 0 {
			tc.Next = end
		}
		rep.Missing += tc.Missing
		rep.PerTask = append(rep.PerTask, tc)
	}
	sort.Slice(rep.PerTask, func(i, j int) bool { return rep.PerTask[i].Task < rep.PerTask[j].Task })
	rep.Examples = ex.list()
	return rep, nil
}
