package logging

import (
	"bytes"
	"errors"
	"log/slog"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestSetAffectsDescendantsAndRecordsTime(t *testing.T) {
	l := New(slog.LevelInfo)
	l.now = func() time.Time { return time.UnixMilli(1717000000000) }
	l.Var("connectd.worker")
	l.Var("connectd.worker.task")
	l.Var("connectd.herder")

	if got, _ := l.Get("connectd.worker.task"); got.Level != "INFO" || got.LastModified != nil {
		t.Fatalf("initial level = %+v, want INFO with no last_modified", got)
	}
	affected, err := l.Set("connectd.worker", "debug")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"connectd.worker", "connectd.worker.task"}; !reflect.DeepEqual(affected, want) {
		t.Fatalf("affected = %v, want %v", affected, want)
	}
	got, _ := l.Get("connectd.worker.task")
	if got.Level != "DEBUG" || got.LastModified == nil || *got.LastModified != 1717000000000 {
		t.Fatalf("after set = %+v", got)
	}
	if h, _ := l.Get("connectd.herder"); h.Level != "INFO" {
		t.Fatalf("sibling changed: %+v", h)
	}
	// A new child inherits its nearest ancestor's level.
	if v := l.Var("connectd.worker.task.sink"); v.Level() != slog.LevelDebug {
		t.Fatalf("new child level = %v, want DEBUG", v.Level())
	}
	all, err := l.Set(RootLogger, "WARN")
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != len(l.All()) {
		t.Fatalf("root set affected %v of %d loggers", all, len(l.All()))
	}
}

// As Kafka Connect's Loggers.setLevel: only loggers whose level changes
// are listed and stamped.
func TestSetListsOnlyChangedLoggers(t *testing.T) {
	now := int64(1717000000000)
	l := New(slog.LevelInfo)
	l.now = func() time.Time { return time.UnixMilli(now) }
	l.Var("a.b")
	l.Var("a.b.c")
	for _, tc := range []struct {
		name, level string
		want        []string
	}{
		{"a.b", "DEBUG", []string{"a.b", "a.b.c"}},
		{"a.b", "DEBUG", []string{}},
		{"a.b", "debug", []string{}},
		{"a.b.c", "WARN", []string{"a.b.c"}},
		{"a.b", "DEBUG", []string{"a.b.c"}}, // a.b is at DEBUG already
		{"a.b", "INFO", []string{"a.b", "a.b.c"}},
		{"x.new", "INFO", []string{}}, // registered at root's level: unchanged
		{"y.new", "ERROR", []string{"y.new"}},
	} {
		now += 1000
		got, err := l.Set(tc.name, tc.level)
		if err != nil {
			t.Fatal(err)
		}
		if got == nil {
			got = []string{}
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Fatalf("Set(%s, %s) = %v, want %v", tc.name, tc.level, got, tc.want)
		}
	}
	if x, _ := l.Get("x.new"); x.LastModified != nil {
		t.Fatalf("a logger registered at its level was stamped: %+v", x)
	}
	// a.b.c changed last at the 6th call.
	if c, _ := l.Get("a.b.c"); c.LastModified == nil || *c.LastModified != 1717000006000 {
		t.Fatalf("a.b.c = %+v", c)
	}
}

func TestInvalidLevelListsAllowed(t *testing.T) {
	l := New(slog.LevelInfo)
	_, err := l.Set("x", "verbose")
	var ile *InvalidLevelError
	if !errors.As(err, &ile) {
		t.Fatalf("err = %v, want *InvalidLevelError", err)
	}
	for _, n := range AllowedLevels() {
		if !strings.Contains(err.Error(), n) {
			t.Errorf("message %q lacks allowed level %s", err, n)
		}
	}
	if _, ok := l.Get("x"); ok {
		t.Fatal("a rejected Set registered the logger")
	}
}

func TestLoggerFiltersByNamedLevel(t *testing.T) {
	var buf bytes.Buffer
	base := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo}))
	l := New(slog.LevelInfo)
	lg := l.Logger(base, "connectd.rest")
	lg.Debug("hidden")
	if buf.Len() != 0 {
		t.Fatalf("debug logged at INFO: %q", buf.String())
	}
	if _, err := l.Set("connectd", "DEBUG"); err != nil {
		t.Fatal(err)
	}
	lg.Debug("shown")
	if !strings.Contains(buf.String(), "shown") || !strings.Contains(buf.String(), "logger=connectd.rest") {
		t.Fatalf("debug not logged after raising level: %q", buf.String())
	}
	if _, err := l.Set("connectd.rest", "OFF"); err != nil {
		t.Fatal(err)
	}
	buf.Reset()
	lg.Error("silenced")
	if buf.Len() != 0 {
		t.Fatalf("OFF logger wrote %q", buf.String())
	}
}

func TestLevelNamesRoundTrip(t *testing.T) {
	for _, n := range AllowedLevels() {
		lv, err := ParseLevel(n)
		if err != nil {
			t.Fatal(err)
		}
		if got := LevelName(lv); got != n {
			t.Errorf("LevelName(ParseLevel(%s)) = %s", n, got)
		}
	}
}

func TestValidName(t *testing.T) {
	for _, name := range []string{"root", "connectd.worker.task", "org.apache.kafka.connect.runtime.WorkerSinkTask", "Outer$Inner", "my-plugin_2"} {
		if err := ValidName(name); err != nil {
			t.Errorf("ValidName(%q) = %v", name, err)
		}
	}
	l := New(slog.LevelInfo)
	for _, name := range []string{"", ".", "a..b", "a.", ".a", "has space", "semi;colon", "new\nline", strings.Repeat("x", 256)} {
		if err := ValidName(name); err == nil {
			t.Errorf("ValidName(%q) accepted", name)
		}
		if _, err := l.Set(name, "DEBUG"); err == nil {
			t.Errorf("Set(%q) accepted", name)
		}
	}
	if n := l.Names(); len(n) != 1 || n[0] != RootLogger {
		t.Fatalf("refused names were registered: %v", n)
	}
}
