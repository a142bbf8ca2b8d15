package quickstart

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// renderer draws snapshots: in place on a terminal, or as occasional
// summary lines in a log.
type renderer struct {
	out       io.Writer
	live      bool
	p         *Pipeline
	lineEvery time.Duration
	width     int

	drawn    int // lines of the last live block
	lastLine string
	lastAt   time.Time
}

func (r *renderer) render(s Snapshot, v Verdict, final bool) {
	if r.live {
		block := cut(r.block(s, v), r.width)
		if r.drawn > 0 {
			// Back to the top of the previous block, and clear it.
			fmt.Fprintf(r.out, "\x1b[%dA\x1b[J", r.drawn)
		}
		fmt.Fprint(r.out, block)
		r.drawn = strings.Count(block, "\n")
		return
	}
	if final {
		fmt.Fprint(r.out, r.block(s, v))
		return
	}
	line := r.line(s, v)
	if line != r.lastLine && time.Since(r.lastAt) >= r.lineEvery {
		fmt.Fprintf(r.out, "%s %s\n", s.At.Format("15:04:05"), line)
		r.lastLine, r.lastAt = line, time.Now()
	}
}

// line is the one-line summary for logs.
func (r *renderer) line(s Snapshot, v Verdict) string {
	p := r.p
	parts := []string{fmt.Sprintf("produced %s/%s", num(s.Produced), num(p.ExpectedRecords))}
	if p.Replication != nil {
		parts = append(parts, "replicated "+num(s.Replicated))
	}
	if p.Sink != nil {
		parts = append(parts, "applied "+num(s.Applied))
		if s.DuplicatesKnown {
			parts = append(parts, "duplicates skipped "+num(s.Duplicates))
		}
		parts = append(parts, fmt.Sprintf("amount %s/%s", num(s.AmountTotal), num(p.ExpectedAmountTotal)))
	}
	if w := workerText(s); w != "" {
		parts = append(parts, w)
	}
	for _, c := range s.Connectors {
		if s.Worker.Up && (c.State != "RUNNING" || c.RunningTasks < c.Tasks) {
			parts = append(parts, fmt.Sprintf("%s %s %d/%d", c.Name, c.State, c.RunningTasks, c.Tasks))
		}
	}
	if v.Complete {
		parts = append(parts, "complete")
	}
	return strings.Join(parts, " · ")
}

// block is the multi-line status.
func (r *renderer) block(s Snapshot, v Verdict) string {
	p := r.p
	var b strings.Builder
	row := func(label, format string, args ...any) {
		fmt.Fprintf(&b, "  %-11s %s\n", label, fmt.Sprintf(format, args...))
	}
	fmt.Fprintf(&b, "connectd quickstart · %s\n", s.At.Format("15:04:05"))
	switch w := workerText(s); {
	case w == "":
		row("worker", "up")
	case s.Worker.Up:
		row("worker", "%s", w)
	default:
		row("worker", "%s; the counts below are read from Kafka and Aerospike and stay valid", w)
	}
	var cs []string
	for _, c := range s.Connectors {
		st := c.State
		if c.Tasks > 0 || c.State == "RUNNING" {
			st += fmt.Sprintf(" %d/%d tasks", c.RunningTasks, c.Tasks)
		}
		cs = append(cs, c.Name+" "+st)
	}
	row("connectors", "%s", strings.Join(cs, " · "))
	for _, c := range s.Connectors {
		if c.Trace != "" {
			row("", "%s: %s", c.Name, c.Trace)
		}
	}
	row("produced", "%s of %s records %s  (DatagenSource → %s, committed)",
		num(s.Produced), num(p.ExpectedRecords), bar(s.Produced, p.ExpectedRecords), p.OrdersTopic)
	if p.Replication != nil {
		if s.ReplicaExists {
			row("replicated", "%s records  (KafkaReplicationSource → %s; %s behind)", num(s.Replicated), p.ReplicaTopic, num(max(s.Produced-s.Replicated, 0)))
		} else {
			row("replicated", "–  (%s does not exist yet)", p.ReplicaTopic)
		}
	}
	if p.Sink != nil {
		lag := fmt.Sprintf("%s records behind", num(max(stageInput(s, p)-s.Applied, 0)))
		if s.SinkOffsetLagSet {
			lag += fmt.Sprintf("; group %s lag %s offsets, transaction markers included", p.SinkGroup(), num(s.SinkOffsetLag))
		}
		row("applied", "%s records to Aerospike %s.%s, %d keys  (%s)", num(s.Applied), p.Namespace, p.Set, len(s.Amounts), lag)
		switch {
		case s.DuplicatesKnown && s.DuplicatesDurable:
			row("duplicates", "%s redelivered records skipped by the sink (already applied; its %s.%s record, kept across restarts)", num(s.Duplicates), p.Namespace, p.StatsSet)
		case s.DuplicatesKnown:
			row("duplicates", "%s redelivered records skipped by the sink's current plugin process (0 again after a restart)", num(s.Duplicates))
		case p.StatsSet != "":
			row("duplicates", "–  (no %s.%s record yet: the sink writes it after its first batch)", p.Namespace, p.StatsSet)
		default:
			row("duplicates", "–  (no %s on the metrics endpoint)", DuplicatesMetric)
		}
		row("totals", "expected %s · actual %s  (sum of the %d counters)", num(p.ExpectedAmountTotal), num(s.AmountTotal), len(p.ExpectedAmounts))
	}
	for _, pr := range s.Problems {
		row("note", "%s", pr)
	}
	switch {
	case len(v.Wrong) > 0:
		row("RESULT", "WRONG: %s", strings.Join(v.Wrong, "; "))
	case v.Complete:
		row("result", "complete: %s", r.success())
	default:
		row("result", "running…")
	}
	return b.String()
}

// workerText says when the worker went down or came back; empty while it
// has been up all along.
func workerText(s Snapshot) string {
	w := s.Worker
	switch {
	case !w.Up:
		return fmt.Sprintf("worker DOWN since %s (%s)", w.Since.Format("15:04:05"), s.At.Sub(w.Since).Round(time.Second))
	case !w.Since.IsZero():
		return fmt.Sprintf("worker back since %s after %s down", w.Since.Format("15:04:05"), w.DownFor.Round(time.Second))
	}
	return ""
}

func (r *renderer) success() string {
	p := r.p
	msg := fmt.Sprintf("%s records produced", num(p.ExpectedRecords))
	if p.Replication != nil {
		msg += ", replicated once each"
	}
	if p.Sink != nil {
		msg += fmt.Sprintf(", applied once each; all %d counters equal their expected totals", len(p.ExpectedAmounts))
	}
	return msg
}

// stageInput is what the sink has been given so far.
func stageInput(s Snapshot, p *Pipeline) int64 {
	if p.Replication != nil {
		return s.Replicated
	}
	return s.Produced
}

// cut shortens every line of block to fewer than width runes.
func cut(block string, width int) string {
	if width <= 1 {
		return block
	}
	lines := strings.SplitAfter(block, "\n")
	for i, l := range lines {
		text := strings.TrimSuffix(l, "\n")
		if r := []rune(text); len(r) >= width {
			lines[i] = string(r[:width-2]) + "…" + l[len(text):]
		}
	}
	return strings.Join(lines, "")
}

// bar is a small progress bar.
func bar(n, of int64) string {
	const width = 20
	if of <= 0 {
		return ""
	}
	filled := int(min(n, of) * width / of)
	return "[" + strings.Repeat("#", filled) + strings.Repeat(".", width-filled) + "] " + strconv.FormatInt(min(n, of)*100/of, 10) + "%"
}

// num formats n with thousands separators.
func num(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}
