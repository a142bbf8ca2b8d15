package verify

import (
	"fmt"
	"io"
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
	return WriteExamples(w, r.Examples)
}

// WriteExamples renders a report's examples under an "examples:" heading;
// it writes nothing when there are none.
func WriteExamples(w io.Writer, ex []string) error {
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
