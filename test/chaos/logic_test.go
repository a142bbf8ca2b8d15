package chaos

import (
	"context"
	"log/slog"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
)

// The growth rule: noise and a warm-up step are not growth; a steady climb
// is, and so is a late jump.
func TestTrendRule(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	const n = 360 // 30 min at 5 s
	ts := make([]time.Duration, n)
	for i := range ts {
		ts[i] = time.Duration(i) * 5 * time.Second
	}
	series := func(f func(i int) float64) []float64 {
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = f(i)
		}
		return xs
	}
	for _, tc := range []struct {
		name string
		xs   []float64
		grow bool
	}{
		{"flat with noise and dips", series(func(i int) float64 {
			v := 150 + r.NormFloat64()*10
			if i%40 == 0 {
				v = 60 // a killed worker restarts small
			}
			return v
		}), false},
		{"warm-up then flat", series(func(i int) float64 { return 150 - 100*math.Exp(-float64(i)/15) + r.NormFloat64()*5 }), false},
		{"steady leak", series(func(i int) float64 { return 150 + float64(i)*0.5 + r.NormFloat64()*5 }), true},
		{"late jump", series(func(i int) float64 {
			if i > 3*n/4 {
				return 260
			}
			return 150
		}), true},
		{"small relative growth below the absolute floor", series(func(i int) float64 { return 20 + float64(i)*0.03 }), false},
	} {
		tr := trendOf(tc.name, "MiB", tc.xs, ts, 0.25, 32, true)
		if tr.Growing != tc.grow {
			t.Errorf("%s: growing=%v (early %.1f late %.1f slope %.1f/h), want %v", tc.name, tr.Growing, tr.Early, tr.Late, tr.SlopePerHour, tc.grow)
		}
	}
	if tr := trendOf("short", "MiB", []float64{1, 2, 3}, ts[:3], 0.25, 32, true); tr.Judged {
		t.Error("three samples were judged")
	}
	// The slope of a clean line is its slope.
	line := series(func(i int) float64 { return float64(i) })
	if s := theilSen(line, ts) * float64(time.Hour); math.Abs(s-720) > 1e-6 {
		t.Errorf("Theil–Sen slope of 1 per 5 s = %.3f/h, want 720", s)
	}
}

// Recovery attribution: a plugin crash owns only its connector's units on
// its worker; a FAILED episode in the sink's scope belongs to the latest
// Aerospike fault before it; a disruptive fault owns the rest of its
// window. Recovery counts from the fault for faults that stop units at
// once, from the failure for Aerospike trouble.
func TestAttribute(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	kill := &event{Kind: KindWorkerKill, Disruptive: true, At: at(0), WindowEnd: at(30)}
	rejoin := &event{Kind: kindRejoin, Consequence: true, At: at(30), WindowEnd: at(60)}
	plugin := &event{Kind: KindPluginKill, At: at(5), WindowEnd: at(65), scope: map[string]bool{connRepl: true}, worker: "w3"}
	aero1 := &event{Kind: KindAeroErrors, At: at(10), WindowEnd: at(70), scope: map[string]bool{connSink: true}, failuresOnly: true}
	aero2 := &event{Kind: KindAeroLatency, At: at(20), WindowEnd: at(80), scope: map[string]bool{connSink: true}, failuresOnly: true}
	evs := []*event{kill, plugin, aero1, aero2, rejoin}
	eps := []episode{
		{Unit: unit{connDatagen, 0}, Start: at(0.5), End: at(14), Why: "RUNNING on w1 which is down", Worker: "w1"},
		{Unit: unit{connRepl, 1}, Start: at(5.5), End: at(9), Why: "RUNNING on w3 without a plugin process", Worker: "w3"},
		{Unit: unit{connRepl, 0}, Start: at(6), End: at(8), Why: "UNASSIGNED", Worker: "w2"}, // not on w3: the kill's
		{Unit: unit{connSink, 2}, Start: at(25), End: at(27), Why: "FAILED", Worker: "w2"},   // after aero2: aero2's
		{Unit: unit{connSink, 0}, Start: at(31), End: at(33), Why: "UNASSIGNED", Worker: "w2"},
	}
	attribute(evs, eps)
	for _, tc := range []struct {
		e    *event
		rec  time.Duration
		down []string
	}{
		{kill, 14 * time.Second, []string{"chaos-datagen-0", "chaos-repl-0"}},
		{plugin, 4 * time.Second, []string{"chaos-repl-1"}},
		{aero1, 0, nil},
		{aero2, 2 * time.Second, []string{"chaos-sink-2"}},
		{rejoin, 3 * time.Second, []string{"chaos-sink-0"}},
	} {
		if tc.e.Recovery != tc.rec || !slices.Equal(tc.e.Down, tc.down) {
			t.Errorf("%s: recovery %v down %v, want %v %v", tc.e.Kind, tc.e.Recovery, tc.e.Down, tc.rec, tc.down)
		}
	}
	// Pause/resume: the episode began at the pause, before At (the
	// resume); recovery counts from the resume.
	pr := &event{Kind: KindPauseResume, Disruptive: true, At: at(10), WindowEnd: at(40), scope: map[string]bool{connSink: true}}
	attribute([]*event{pr}, []episode{{Unit: unit{connSink, 0}, Start: at(2), End: at(11.5), Why: "PAUSED"}})
	if pr.Recovery != 1500*time.Millisecond {
		t.Errorf("pause/resume recovery %v, want 1.5s", pr.Recovery)
	}
}

// A plugin process hosts every connector of its plugin on its worker: a
// SIGKILL of the DatagenSource process is charged with the units of both
// datagen connectors on that worker, and with nothing of another plugin or
// another worker.
func TestPluginKillScope(t *testing.T) {
	pl := newPipeline("127.0.0.1:1", "chaos-logic", aeroTarget{hosts: "127.0.0.1:3000", namespace: "test", set: "counters"}, 1)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	eps := []episode{
		{Unit: unit{connDatagen, 0}, Start: at(5.3), End: at(9), Why: "RUNNING on w2 without a plugin process", Worker: "w2"},
		{Unit: unit{connDatagen2, -1}, Start: at(5.4), End: at(8), Why: "RUNNING on w2 without a plugin process", Worker: "w2"},
		{Unit: unit{connDatagen2, 1}, Start: at(5.5), End: at(12), Why: "FAILED", Worker: "w2"},
		{Unit: unit{connDatagen2, 0}, Start: at(6), End: at(20), Why: "FAILED", Worker: "w1"}, // another worker's process
		{Unit: unit{connRepl, 0}, Start: at(5.6), End: at(15), Why: "FAILED", Worker: "w2"},   // another plugin's process
		{Unit: unit{connSink, 1}, Start: at(5.7), End: at(16), Why: "FAILED", Worker: "w2"},
	}
	// What the last poll saw on each worker before the kill.
	m := &monitor{runsOn: map[unit]string{}}
	for _, ep := range eps {
		m.runsOn[ep.Unit] = ep.Worker
	}
	m.runsOn[unit{connDatagen, -1}] = "w3"
	for _, tc := range []struct {
		class  string
		conns  []string
		hosted []string
		rec    time.Duration
		down   []string
	}{
		{"DatagenSource", []string{connDatagen, connDatagen2}, []string{"chaos-datagen-0", "chaos-datagen2", "chaos-datagen2-1"},
			7 * time.Second, []string{"chaos-datagen-0", "chaos-datagen2", "chaos-datagen2-1"}},
		{"KafkaReplicationSource", []string{connRepl}, []string{"chaos-repl-0"}, 10 * time.Second, []string{"chaos-repl-0"}},
		{"AerospikeSink", []string{connSink}, []string{"chaos-sink-1"}, 11 * time.Second, []string{"chaos-sink-1"}},
		{tamperedClass, nil, nil, 0, nil},
	} {
		conns := pl.connectorsOf(tc.class)
		if !slices.Equal(conns, tc.conns) {
			t.Errorf("%s: connectors %v, want %v", tc.class, conns, tc.conns)
		}
		kill := &event{Kind: KindPluginKill, At: at(5), WindowEnd: at(65), scope: pluginKillScope(conns), worker: "w2"}
		if hosted := m.hostedOn(kill.worker, kill.scope); !slices.Equal(hosted, tc.hosted) {
			t.Errorf("%s: hosted %v, want %v", tc.class, hosted, tc.hosted)
		}
		attribute([]*event{kill}, eps)
		if kill.Recovery != tc.rec || !slices.Equal(kill.Down, tc.down) {
			t.Errorf("%s: recovery %v down %v, want %v %v", tc.class, kill.Recovery, kill.Down, tc.rec, tc.down)
		}
	}
}

// A unit that a worker kill took down, that the cluster then moved to
// another worker where a plugin crash hit it before the monitor saw it
// run: the kill's recovery ends when the unit is named on the new worker,
// and the crash owns the rest.
func TestObserveSplitsAMovedUnit(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	m := &monitor{log: slog.New(slog.DiscardHandler), open: map[unit]*episode{}}
	u := unit{connDatagen, 1}
	m.observe(at(0.4), u, false, "RUNNING on w1 which is down", "w1")
	m.observe(at(5), u, false, "UNASSIGNED", "") // no worker named: the same episode
	m.observe(at(12.9), u, false, "RUNNING on w3 without a plugin process", "w3")
	m.observe(at(16), u, true, "", "w3")
	if len(m.closed) != 2 || m.closed[0].End != at(12.9) || m.closed[1].Start != at(12.9) || m.closed[1].Worker != "w3" {
		t.Fatalf("episodes %+v, want one on w1 until 12.9 s and one on w3 from then", m.closed)
	}
	kill := &event{Kind: KindWorkerKill, Disruptive: true, At: t0, WindowEnd: at(30)}
	crash := &event{Kind: KindPluginKill, At: at(12.8), WindowEnd: at(72), scope: map[string]bool{connDatagen: true}, worker: "w3"}
	attribute([]*event{kill, crash}, m.closed)
	if kill.Recovery != 12900*time.Millisecond || crash.Recovery != 3200*time.Millisecond {
		t.Errorf("recoveries: kill %v, plugin crash %v; want 12.9s and 3.2s", kill.Recovery, crash.Recovery)
	}
}

// Every corpus kind builds a record, and the ones the sink must refuse for
// their key carry the key they are about.
func TestBadRecordCorpus(t *testing.T) {
	for i, kind := range badRecordKinds {
		k, v := badRecord(kind, i, "k7")
		if v == nil {
			t.Errorf("%s: null value (a tombstone is valid input, not bad input)", kind)
		}
		switch kind {
		case "null-key":
			if k != nil {
				t.Errorf("null-key has key %q", k)
			}
		case "empty-key":
			if k == nil || len(k) != 0 {
				t.Errorf("empty-key has key %q", k)
			}
		case "float-into-integer-counter":
			if string(k) != "k7" {
				t.Errorf("float record key %q", k)
			}
		default:
			if string(k) == "k7" || len(k) == 0 {
				t.Errorf("%s: key %q must not be a counter's", kind, k)
			}
		}
	}
}

// EXCLUDE leaves kinds out of both schedules and refuses kinds that do not
// exist (a typo would otherwise silently exclude nothing).
func TestExclude(t *testing.T) {
	workerFaults := []string{KindWorkerKill, KindWorkerKillRestart, KindWorkerZombie, KindWorkerAdd}
	for _, w := range without(disruptiveKinds, workerFaults) {
		if slices.Contains(workerFaults, w.kind) {
			t.Errorf("%s still scheduled", w.kind)
		}
	}
	if got, want := len(without(disruptiveKinds, workerFaults)), len(disruptiveKinds)-len(workerFaults); got != want {
		t.Errorf("%d disruptive kinds left, want %d", got, want)
	}
	if got := without(backgroundKinds, workerFaults); len(got) != len(backgroundKinds) {
		t.Errorf("background kinds changed: %v", got)
	}
	_, err := Run(context.Background(), Options{Exclude: []string{"worker-sigkil"}, Dir: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), `"worker-sigkil"`) {
		t.Fatalf("an unknown kind was not refused by name: %v", err)
	}
}

// Every REST corpus case can be sent by the suite's HTTP client (a URL it
// cannot build would count as a violation, not a refusal), has a unique
// name and expects a 4xx.
func TestRESTCorpus(t *testing.T) {
	r := &run{pl: newPipeline("127.0.0.1:1", "chaos-logic", aeroTarget{hosts: "127.0.0.1:3000", namespace: "test", set: "counters"}, 1)}
	seen := map[string]bool{}
	for _, c := range r.restCorpus() {
		if seen[c.name] {
			t.Errorf("two cases named %q", c.name)
		}
		seen[c.name] = true
		if c.want != 0 && (c.want < 400 || c.want > 499) {
			t.Errorf("%s: want %d, not a 4xx", c.name, c.want)
		}
		req, err := c.request(context.Background(), "http://127.0.0.1:8083")
		if err != nil {
			t.Errorf("%s: the client cannot build it: %v", c.name, err)
			continue
		}
		if req.URL.EscapedPath() == "" || req.URL.EscapedPath()[0] != '/' {
			t.Errorf("%s: path %q", c.name, req.URL.EscapedPath())
		}
		if len(c.headers)%2 != 0 {
			t.Errorf("%s: headers %q are not name/value pairs", c.name, c.headers)
		}
	}
}
