// Package logging holds connectd's named log levels: one slog.LevelVar per
// logger name ("root", "connectd.herder", "connectd.worker.task", ...), with
// the time each was last changed, so that operators can read and change
// levels at run time through the REST API's /admin/loggers endpoints, as
// Kafka Connect's do for log4j loggers.
//
// Names are dotted hierarchies: setting a level on "connectd.worker" also
// sets it on every registered "connectd.worker.*" logger, and setting
// "root" sets every logger. Level names are log4j's (OFF FATAL ERROR WARN
// INFO DEBUG TRACE) so Kafka Connect tooling keeps working.
//
// What this package must not do: format or write log lines (that is slog's
// handlers' job) or know about HTTP.
package logging

import (
	"context"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"time"
)

// RootLogger is the name of the logger every other logger descends from.
const RootLogger = "root"

// Levels beyond slog's four, so that log4j's names round-trip.
const (
	LevelTrace = slog.Level(-8)
	LevelFatal = slog.Level(12)
	// LevelOff is above every level a record is logged at.
	LevelOff = slog.Level(1 << 20)
)

// levelNames lists the allowed level names, most verbose last.
var levelNames = []struct {
	name  string
	level slog.Level
}{
	{"OFF", LevelOff},
	{"FATAL", LevelFatal},
	{"ERROR", slog.LevelError},
	{"WARN", slog.LevelWarn},
	{"INFO", slog.LevelInfo},
	{"DEBUG", slog.LevelDebug},
	{"TRACE", LevelTrace},
}

// AllowedLevels returns the level names ParseLevel accepts.
func AllowedLevels() []string {
	out := make([]string, len(levelNames))
	for i, l := range levelNames {
		out[i] = l.name
	}
	return out
}

// ParseLevel parses a log4j level name, case-insensitively.
func ParseLevel(s string) (slog.Level, error) {
	for _, l := range levelNames {
		if strings.EqualFold(strings.TrimSpace(s), l.name) {
			return l.level, nil
		}
	}
	return 0, &InvalidLevelError{Level: s}
}

// LevelName renders a level as the nearest log4j name at or below it.
func LevelName(l slog.Level) string {
	for _, n := range levelNames {
		if l >= n.level {
			return n.name
		}
	}
	return "TRACE"
}

// InvalidLevelError reports a level name that is not one of AllowedLevels.
type InvalidLevelError struct{ Level string }

func (e *InvalidLevelError) Error() string {
	return fmt.Sprintf("invalid log level '%s'. Allowed levels: %s", e.Level, strings.Join(AllowedLevels(), ", "))
}

// maxNameLen bounds a logger name: names set through the REST API are
// kept for the process's life.
const maxNameLen = 255

// ValidName reports whether name can name a logger: dot-separated words of
// letters, digits, '_', '-' and '$' (Java class names and connectd's
// dotted names), at most 255 characters.
func ValidName(name string) error {
	if name == "" || len(name) > maxNameLen {
		return &InvalidNameError{Name: name}
	}
	for _, word := range strings.Split(name, ".") {
		if word == "" {
			return &InvalidNameError{Name: name}
		}
		for _, r := range word {
			if !(r == '_' || r == '-' || r == '$' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
				return &InvalidNameError{Name: name}
			}
		}
	}
	return nil
}

// InvalidNameError reports a logger name ValidName refuses.
type InvalidNameError struct{ Name string }

func (e *InvalidNameError) Error() string {
	return fmt.Sprintf("invalid logger name '%s': a logger name is dot-separated words of letters, digits, '_', '-' or '$', at most %d characters (e.g. connectd.worker.task or org.apache.kafka.connect)", e.Name, maxNameLen)
}

// LoggerLevel is one logger's level as the REST API shows it;
// LastModified is nil until the level was changed at run time.
type LoggerLevel struct {
	Level        string `json:"level"`
	LastModified *int64 `json:"last_modified"`
}

type entry struct {
	v            *slog.LevelVar
	lastModified *int64 // ms since the epoch
}

// Levels is a set of named log levels. The zero value is not usable; call
// New. All methods are safe for concurrent use.
type Levels struct {
	now func() time.Time

	mu      sync.Mutex
	loggers map[string]*entry
}

// New returns a Levels whose root logger starts at root.
func New(root slog.Level) *Levels {
	l := &Levels{now: time.Now, loggers: map[string]*entry{}}
	v := new(slog.LevelVar)
	v.Set(root)
	l.loggers[RootLogger] = &entry{v: v}
	return l
}

// Var returns the level variable of a named logger, registering it with
// the level of its nearest registered ancestor if it is new.
func (l *Levels) Var(name string) *slog.LevelVar {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.varLocked(name)
}

func (l *Levels) varLocked(name string) *slog.LevelVar {
	if e, ok := l.loggers[name]; ok {
		return e.v
	}
	v := new(slog.LevelVar)
	v.Set(l.ancestorLocked(name).v.Level())
	l.loggers[name] = &entry{v: v}
	return v
}

func (l *Levels) ancestorLocked(name string) *entry {
	for n := name; ; {
		i := strings.LastIndexByte(n, '.')
		if i < 0 {
			return l.loggers[RootLogger]
		}
		n = n[:i]
		if e, ok := l.loggers[n]; ok {
			return e
		}
	}
}

// Logger returns a logger that writes through base's handler but whose
// records are filtered by the named level, and that carries the attribute
// logger=name.
func (l *Levels) Logger(base *slog.Logger, name string) *slog.Logger {
	v := l.Var(name)
	return slog.New(&levelHandler{next: base.Handler(), level: v}).With("logger", name)
}

// All returns every registered logger's level, keyed by name.
func (l *Levels) All() map[string]LoggerLevel {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make(map[string]LoggerLevel, len(l.loggers))
	for n, e := range l.loggers {
		out[n] = LoggerLevel{Level: LevelName(e.v.Level()), LastModified: e.lastModified}
	}
	return out
}

// Get returns one logger's level; ok is false for an unregistered name.
func (l *Levels) Get(name string) (LoggerLevel, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	e, ok := l.loggers[name]
	if !ok {
		return LoggerLevel{}, false
	}
	return LoggerLevel{Level: LevelName(e.v.Level()), LastModified: e.lastModified}, true
}

// Names returns the registered logger names, sorted.
func (l *Levels) Names() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]string, 0, len(l.loggers))
	for n := range l.loggers {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Set sets the level of the named logger and of all its descendants
// ("root": every logger), registering name if it is new, and returns the
// sorted names whose level it changed: as in Kafka Connect, a logger
// already at the level is neither listed nor marked modified, so setting
// the current level returns an empty list. A new name starts at its
// nearest ancestor's level. An unknown level name is an
// *InvalidLevelError.
func (l *Levels) Set(name, level string) ([]string, error) {
	lv, err := ParseLevel(level)
	if err != nil {
		return nil, err
	}
	if err := ValidName(name); err != nil {
		return nil, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.varLocked(name)
	ms := l.now().UnixMilli()
	var affected []string
	for n, e := range l.loggers {
		if (name == RootLogger || n == name || strings.HasPrefix(n, name+".")) && e.v.Level() != lv {
			e.v.Set(lv)
			t := ms
			e.lastModified = &t
			affected = append(affected, n)
		}
	}
	sort.Strings(affected)
	return affected, nil
}

// levelHandler filters records by a LevelVar before the wrapped handler.
type levelHandler struct {
	next  slog.Handler
	level slog.Leveler
}

func (h *levelHandler) Enabled(_ context.Context, lv slog.Level) bool {
	return lv >= h.level.Level()
}

// Handle does not consult next.Enabled: the named level is the filter, so
// raising a logger to DEBUG works even if the base handler was built with a
// coarser level.
func (h *levelHandler) Handle(ctx context.Context, r slog.Record) error {
	return h.next.Handle(ctx, r)
}

func (h *levelHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &levelHandler{next: h.next.WithAttrs(attrs), level: h.level}
}

func (h *levelHandler) WithGroup(name string) slog.Handler {
	return &levelHandler{next: h.next.WithGroup(name), level: h.level}
}
