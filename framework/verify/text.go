package verify

import (
	"fmt"
	"io"
	"sort"
	"text/tabwriter"
)

// WriteText renders the report for people: a verdict line, the counts,
// per-partition figures and the examples.
func (r *CompareReport) WriteText(w io.Writer, allowPending bool) error {
	verdict := "OK: the target holds every source record exactly once, in order"
	if !r.OK(allowPending) {
		verdict = "FAILED: the target does not hold the source exactly once"
	} else if r.Pending > 0 {
		verdict = fmt.Sprintf("OK so far: exactly once and in order, %d records not copied yet", r.Pending)
	}
	fmt.Fprintf(w, "%s\n\nsource %s → target %s (partition mapping %s)\n", verdict, r.Source, r.Target, r.Mapping)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, row := range []struct {
		name string
		n    int64
	}{
		{"source records", r.SourceRecords}, {"target records", r.TargetRecords}, {"copied", r.Copied},
		{"duplicates", r.Duplicates}, {"lost", r.Lost}, {"pending (missing tail)", r.Pending},
		{"unexpected", r.Unexpected}, {"reordered", r.Reordered}, {"moved partition", r.Moved},
	} {
		fmt.Fprintf(tw, "  %s\t%d\n", row.name, row.n)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  partition\tsource\ttarget")
	for _, p := range r.Partitions {
		fmt.Fprintf(tw, "  %d\t%d\t%d\n", p.Partition, p.SourceRecords, p.TargetRecords)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	return writeExamples(w, r.Examples)
}

// WriteText renders the report for people.
func (r *DatagenReport) WriteText(w io.Writer) error {
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
	return writeExamples(w, r.Examples)
}

// WriteSums renders the per-key sums, sorted by key.
func (r *DatagenReport) WriteSums(w io.Writer) error {
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

func writeExamples(w io.Writer, ex []string) error {
	if len(ex) == 0 {
		return nil
	}
	fmt.Fprintln(w, "\nexamples:")
	for _, e := range ex {
		if _, err := fmt.Fprintf(w, "  %s\n", e); err != nil {
			return err
		}
	}
	return nil
}
