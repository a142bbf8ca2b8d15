package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/connectd/connectd/framework/rest/api"
)

func TestParseNs(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    []int
		wantErr bool
	}{
		{in: "0,100, 250", want: []int{0, 100, 250}},
		{in: "25", want: []int{25}},
		{in: "100,10", wantErr: true},
		{in: "0,-1", wantErr: true},
		{in: "0,x", wantErr: true},
	} {
		got, err := parseNs(tc.in)
		if (err != nil) != tc.wantErr {
			t.Errorf("parseNs(%q): error %v, want error %v", tc.in, err, tc.wantErr)
			continue
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("parseNs(%q) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

func status(state, worker string, tasks ...string) api.ConnectorExpanded {
	s := &api.ConnectorStateInfo{Connector: api.ConnectorState{State: state, WorkerID: worker}}
	for i, ts := range tasks {
		s.Tasks = append(s.Tasks, api.TaskState{ID: i, State: ts, WorkerID: worker})
	}
	return api.ConnectorExpanded{Status: s}
}

func TestRunning(t *testing.T) {
	for _, tc := range []struct {
		name  string
		st    map[string]api.ConnectorExpanded
		notOn string
		want  int
	}{
		{name: "all running", st: map[string]api.ConnectorExpanded{
			"a": status("RUNNING", "w1", "RUNNING"), "b": status("RUNNING", "w1", "RUNNING")}, want: 2},
		{name: "a task not yet running", st: map[string]api.ConnectorExpanded{
			"a": status("RUNNING", "w1", "UNASSIGNED"), "b": status("RUNNING", "w1", "RUNNING")}, want: 1},
		{name: "no tasks yet", st: map[string]api.ConnectorExpanded{"a": status("RUNNING", "w1")}, want: 0},
		{name: "failed connector", st: map[string]api.ConnectorExpanded{"a": status("FAILED", "w1", "RUNNING")}, want: 0},
		{name: "stale status of the killed worker", notOn: "w1", st: map[string]api.ConnectorExpanded{
			"a": status("RUNNING", "w1", "RUNNING"), "b": status("RUNNING", "w2", "RUNNING")}, want: 1},
		{name: "no status part", st: map[string]api.ConnectorExpanded{"a": {}}, want: 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got, _ := running(tc.st, tc.notOn); got != tc.want {
				t.Errorf("running = %d, want %d", got, tc.want)
			}
		})
	}
}

func ptr(f float64) *float64 { return &f }

func TestMarkdownMediansAndRatios(t *testing.T) {
	rep := &report{Started: "x", Window: "30s", Settle: "10s", Requests: 50, Passes: []pass{
		{System: "connectd", Rep: 0, Rows: []row{
			{Phase: phaseCreate, N: 0, RSSMB: 40, PSSMB: 40, Procs: 1, Threads: 40, CPUPct: 1},
			{Phase: phaseCreate, N: 10, RunningSec: ptr(4), RSSMB: 100, PSSMB: 80, Procs: 11, Threads: 100, CPUPct: 4, RESTP50Ms: 2},
			{Phase: phaseDeleted, N: 0, RSSMB: 50, PSSMB: 45, Procs: 1, Threads: 48, CPUPct: 1},
		}},
		{System: "connectd", Rep: 1, Rows: []row{
			{Phase: phaseCreate, N: 0, RSSMB: 40, PSSMB: 40, Procs: 1, Threads: 40, CPUPct: 1},
			{Phase: phaseCreate, N: 10, RunningSec: ptr(6), RSSMB: 120, PSSMB: 100, Procs: 11, Threads: 110, CPUPct: 6, RESTP50Ms: 4},
			{Phase: phaseDeleted, N: 0, RSSMB: 50, PSSMB: 45, Procs: 1, Threads: 48, CPUPct: 1},
		}},
		{System: "kafka-connect", Rep: 0, Rows: []row{
			{Phase: phaseCreate, N: 0, RSSMB: 400, PSSMB: 400, Procs: 1, Threads: 40, CPUPct: 2},
			{Phase: phaseCreate, N: 10, RunningSec: ptr(2.5), RSSMB: 440, PSSMB: 440, Procs: 1, Threads: 80, CPUPct: 2.5, RESTP50Ms: 6},
		}},
	}}
	md := rep.markdown()
	for _, want := range []string{
		"| create | 10 | 5.0 s | 110 MB | 90 MB | 11 | 105 | 5.0 | 3.0 ms |", // medians of two reps
		"processes +0, threads +8, RSS +10 MB, PSS +5 MB",                    // deleted against N=0
		"| create | 10 | 2.00 | 0.25 | 0.20 | 11.00 | 1.31 | 2.00 | 0.50 |",  // connectd / Kafka Connect
	} {
		if !strings.Contains(md, want) {
			t.Errorf("summary lacks %q:\n%s", want, md)
		}
	}
	if n := strings.Count(md, "| deleted |"); n != 1 {
		t.Errorf("%d deleted rows, want 1 (connectd's; no ratio for a phase only one system has):\n%s", n, md)
	}
}
