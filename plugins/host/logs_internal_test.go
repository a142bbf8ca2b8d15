package host

import (
	"bytes"
	"fmt"
	"log/slog"
	"strings"
	"testing"
)

// A plugin's stdout counts against the process's log rate limit: a flood
// is dropped and counted, not merged into the worker's log line by line.
func TestStdoutIsRateLimited(t *testing.T) {
	var out bytes.Buffer
	dropped := 0
	s := stdoutSink{log: slog.New(slog.NewTextHandler(&out, nil)), limit: newLogLimiter(10), dropped: func(n int) { dropped += n }}
	var flood strings.Builder
	for i := range 100 {
		fmt.Fprintf(&flood, "junk %d\n", i)
	}
	if _, err := s.Write([]byte(flood.String())); err != nil {
		t.Fatal(err)
	}
	logged := strings.Count(out.String(), "plugin wrote to stdout")
	if logged < 1 || logged > 11 || logged+dropped != 100 {
		t.Errorf("100 stdout lines at 10 a second: %d logged, %d dropped", logged, dropped)
	}
}

// The crash tail keeps the line that says why the process died, even when
// the stack dump after it is longer than the tail.
func TestTailKeepsPanicHead(t *testing.T) {
	for _, tc := range []struct {
		name, head string
		stack      int // lines after the head
		want       string
	}{
		{"short panic", "panic: boom", 5, "panic: boom\ngoroutine 0"},
		{"long fatal error", "fatal error: runtime: out of memory", 500, "fatal error: runtime: out of memory\n…\ngoroutine 460"},
		{"no panic", "plain line", 500, "goroutine 460"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newStderrSink(slog.New(slog.DiscardHandler), "", nil, nil)
			fmt.Fprintln(s, tc.head)
			for i := range tc.stack {
				fmt.Fprintf(s, "goroutine %d\n", i)
			}
			tail := s.Tail()
			if !strings.HasPrefix(tail, tc.want) || !strings.HasSuffix(tail, fmt.Sprintf("goroutine %d\n", tc.stack-1)) {
				t.Errorf("tail starts %q, want %q, and ends with the last line:\n%s", tail[:min(len(tail), 80)], tc.want, tail)
			}
		})
	}
}
