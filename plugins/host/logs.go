package host

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"slices"
	"strings"
	"sync"
)

// stderrSink receives the plugin's stderr (line by line, as go-plugin hands
// it over), keeps a bounded tail for crash reports and merges hclog JSON
// lines into the worker's slog logger with their attributes.
type stderrSink struct {
	log *slog.Logger
	// have are attributes log already carries (the connector): a plugin
	// line's own copy with the same value is dropped, not logged twice.
	have map[string]string

	mu      sync.Mutex
	partial []byte
	tail    [][]byte
	tailLen int
	inPanic bool
}

const (
	tailMaxLines = 40
	tailMaxBytes = 8 << 10
)

func newStderrSink(log *slog.Logger, have map[string]string) *stderrSink {
	return &stderrSink{log: log, have: have}
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
	s.logLine(line)
}

func (s *stderrSink) logLine(line []byte) {
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
			keys := make([]string, 0, len(m))
			for k, v := range m {
				if hv, ok := s.have[k]; ok && v == hv {
					continue
				}
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
	if strings.HasPrefix(text, "panic: ") || strings.HasPrefix(text, "fatal error: ") {
		s.inPanic = true
	}
	lvl := slog.LevelInfo
	if s.inPanic {
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
type stdoutSink struct {
	log *slog.Logger
}

func (s stdoutSink) Write(p []byte) (int, error) {
	for _, l := range bytes.Split(bytes.TrimRight(p, "\n"), []byte{'\n'}) {
		if len(l) > 0 {
			s.log.Warn("plugin wrote to stdout", "line", string(l))
		}
	}
	return len(p), nil
}
