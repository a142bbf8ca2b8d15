package host

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"
)

// stderrSink receives the plugin's stderr (line by line, as go-plugin hands
// it over), keeps a bounded tail for crash reports and merges hclog JSON
// lines into the worker's slog logger with their attributes.
//
// Merging never holds up the plugin: Write only records the tail, applies
// the rate limit and queues the line; a drain goroutine (running only
// while there is something to log) writes the queue to the logger. A
// plugin that floods its log, or a log output that stalls, costs dropped
// lines (counted, and summarised in a warning), never a blocked stderr
// pipe, which would block the plugin's next log call and with it its task.
type stderrSink struct {
	log *slog.Logger
	// connector is already an attribute of log; a plugin line's own
	// connector attribute with the same value is not repeated.
	connector string
	limit     *logLimiter
	dropped   func(n int)

	mu       sync.Mutex
	partial  []byte
	tail     [][]byte
	tailLen  int
	inPanic  bool
	queue    []queuedLine
	queued   int // bytes in queue
	draining bool

	// panicHead is the first line of a panic or runtime fatal error
	// report: it says why the process died, and Tail keeps it once the
	// stack dump (every goroutine of a shared process, for a fatal error)
	// has pushed it out of the tail.
	panicHead []byte

	// Dropped lines not yet reported in a summary line.
	unreported  int
	lastSummary time.Time
	summaryDue  bool
}

type queuedLine struct {
	text  []byte
	panic bool // part of a panic or fatal error report
}

const (
	tailMaxLines = 40
	tailMaxBytes = 8 << 10

	// queueMaxBytes bounds the lines waiting for the log output.
	queueMaxBytes = 4 << 20
	// summaryEvery spaces the "lines dropped" warnings.
	summaryEvery = 10 * time.Second
)

func newStderrSink(log *slog.Logger, connector string, limit *logLimiter, dropped func(int)) *stderrSink {
	if dropped == nil {
		dropped = func(int) {}
	}
	return &stderrSink{log: log, connector: connector, limit: limit, dropped: dropped}
}

func (s *stderrSink) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	data := p
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			if len(s.partial) < 1<<20 {
				s.partial = append(s.partial, data...)
			}
			break
		}
		line := data[:i]
		if len(s.partial) > 0 {
			line = append(s.partial, line...)
			s.partial = nil
		}
		s.line(line)
		data = data[i+1:]
	}
	return len(p), nil
}

// Tail returns the last stderr lines.
func (s *stderrSink) Tail() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var b strings.Builder
	if s.panicHead != nil && !slices.ContainsFunc(s.tail, func(l []byte) bool { return bytes.Equal(l, s.panicHead) }) {
		b.Write(s.panicHead)
		b.WriteString("\n…\n")
	}
	for _, l := range s.tail {
		b.Write(l)
		b.WriteByte('\n')
	}
	if len(s.partial) > 0 {
		b.Write(s.partial)
		b.WriteByte('\n')
	}
	return b.String()
}

// line handles one complete line; s.mu is held.
func (s *stderrSink) line(line []byte) {
	line = bytes.TrimRight(line, "\r")
	if len(line) == 0 {
		return
	}
	keep := line
	if len(keep) > 2048 {
		keep = append(keep[:2048:2048], "…"...)
	}
	s.tail = append(s.tail, bytes.Clone(keep))
	s.tailLen += len(keep)
	for len(s.tail) > tailMaxLines || s.tailLen > tailMaxBytes {
		s.tailLen -= len(s.tail[0])
		s.tail = s.tail[1:]
	}
	// A panic or a runtime fatal error, and the stack after it, bypass the
	// rate limit: they explain the crash that follows.
	if line[0] != '{' && (bytes.HasPrefix(line, []byte("panic: ")) || bytes.HasPrefix(line, []byte("fatal error: "))) {
		if !s.inPanic {
			s.panicHead = bytes.Clone(keep)
		}
		s.inPanic = true
	}
	if !(s.inPanic && line[0] != '{') && !s.limit.allow() {
		s.drop()
		return
	}
	if s.queued+len(line) > queueMaxBytes {
		s.drop()
		return
	}
	// line aliases go-plugin's read buffer (or the partial line): copy it.
	s.queue = append(s.queue, queuedLine{text: bytes.Clone(line), panic: s.inPanic})
	s.queued += len(line)
	s.startDrain()
}

// drop counts a line that will not be logged; s.mu is held.
func (s *stderrSink) drop() {
	s.dropped(1)
	s.unreported++
	if !s.summaryDue {
		s.summaryDue = true
		wait := time.Until(s.lastSummary.Add(summaryEvery))
		time.AfterFunc(max(wait, 0), func() {
			s.mu.Lock()
			defer s.mu.Unlock()
			s.startDrain()
		})
	}
}

// startDrain starts the drain goroutine unless it runs; s.mu is held.
func (s *stderrSink) startDrain() {
	if !s.draining {
		s.draining = true
		go s.drain()
	}
}

// drain writes queued lines to the logger until the queue is empty, and
// the summary of dropped lines when one is due.
func (s *stderrSink) drain() {
	for {
		s.mu.Lock()
		batch := s.queue
		s.queue, s.queued = nil, 0
		var summary int
		if s.summaryDue && time.Since(s.lastSummary) >= summaryEvery {
			summary, s.unreported, s.summaryDue = s.unreported, 0, false
			s.lastSummary = time.Now()
		}
		if len(batch) == 0 && summary == 0 {
			s.draining = false
			s.mu.Unlock()
			return
		}
		s.mu.Unlock()
		for _, l := range batch {
			s.logLine(l.text, l.panic)
		}
		if summary > 0 {
			s.log.Warn("plugin log lines dropped: the plugin logs faster than plugin.log.lines.per.second allows, or the log output cannot keep up",
				"dropped", summary, "limit_per_second", s.limit.rate())
		}
	}
}

// logLimiter is a token bucket shared by a process's stderr sinks: rate
// lines per second, bursts of one second's worth. A nil or unlimited
// limiter allows everything.
type logLimiter struct {
	mu     sync.Mutex
	perSec float64
	tokens float64
	last   time.Time
}

func newLogLimiter(perSecond int) *logLimiter {
	if perSecond < 0 {
		return nil
	}
	return &logLimiter{perSec: float64(perSecond), tokens: float64(perSecond), last: time.Now()}
}

func (l *logLimiter) allow() bool {
	if l == nil {
		return true
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	now := time.Now()
	l.tokens = min(l.perSec, l.tokens+now.Sub(l.last).Seconds()*l.perSec)
	l.last = now
	if l.tokens < 1 {
		return false
	}
	l.tokens--
	return true
}

func (l *logLimiter) rate() int {
	if l == nil {
		return -1
	}
	return int(l.perSec)
}

func (s *stderrSink) logLine(line []byte, inPanic bool) {
	ctx := context.Background()
	if line[0] == '{' {
		var m map[string]any
		if json.Unmarshal(line, &m) == nil {
			msg, _ := m["@message"].(string)
			lvl, _ := m["@level"].(string)
			delete(m, "@message")
			delete(m, "@level")
			delete(m, "@timestamp")
			delete(m, "@module")
			if c, ok := m["connector"].(string); ok && c == s.connector {
				delete(m, "connector")
			}
			keys := make([]string, 0, len(m))
			for k := range m {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			attrs := make([]slog.Attr, 0, len(keys))
			for _, k := range keys {
				attrs = append(attrs, slog.Any(k, m[k]))
			}
			s.log.LogAttrs(ctx, slogLevel(lvl), msg, attrs...)
			return
		}
	}
	// Plain text: a panic or a runtime fatal error and the stack after it
	// are errors; anything else is the plugin's business at info.
	text := string(line)
	lvl := slog.LevelInfo
	if inPanic {
		lvl = slog.LevelError
	}
	s.log.LogAttrs(ctx, lvl, text, slog.String("stream", "stderr"))
}

func slogLevel(hclog string) slog.Level {
	switch strings.ToLower(hclog) {
	case "trace", "debug":
		return slog.LevelDebug
	case "warn":
		return slog.LevelWarn
	case "error":
		return slog.LevelError
	default:
		return slog.LevelInfo
	}
}

// stdoutSink logs what a plugin writes to stdout after the handshake (it
// arrives over go-plugin's stdio stream): a connector should not do that.
// Its lines count against the process's log rate limit like stderr's, so
// that a plugin flooding stdout cannot flood the worker's log.
type stdoutSink struct {
	log     *slog.Logger
	limit   *logLimiter
	dropped func(n int)
}

func (s stdoutSink) Write(p []byte) (int, error) {
	for _, l := range bytes.Split(bytes.TrimRight(p, "\n"), []byte{'\n'}) {
		if len(l) == 0 {
			continue
		}
		if !s.limit.allow() {
			if s.dropped != nil {
				s.dropped(1)
			}
			continue
		}
		s.log.Warn("plugin wrote to stdout", "line", string(l))
	}
	return len(p), nil
}
