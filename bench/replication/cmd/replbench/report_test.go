package main

import (
	"strings"
	"testing"
	"time"
)

func TestMarkdownCheckpointLag(t *testing.T) {
	ok := verdict{Records: 600}
	tests := []struct {
		name    string
		results []result
		want    []string
	}{
		{
			name: "lags pooled over the runs, a system without a checkpoint connector says so",
			results: []result{
				{system: "mm2-eos", size: 1024, records: 600, rep: 1, seconds: 2, verdict: ok,
					ckpt: &ckptResult{lags: []time.Duration{time.Second, 3 * time.Second}}},
				{system: "mm2-eos", size: 1024, records: 600, rep: 2, seconds: 2, verdict: ok,
					ckpt: &ckptResult{lags: []time.Duration{2 * time.Second}}},
				{system: "connectd-eos-interval", size: 1024, records: 600, rep: 1, seconds: 1, verdict: ok,
					ckpt: &ckptResult{note: "n/a (no checkpoint connector)"}},
			},
			want: []string{"checkpoint lag s |", "| 2.00 [3.00] (n=3) |", "| n/a (no checkpoint connector) |"},
		},
		{
			name: "a failed measurement is shown with the lags it got",
			results: []result{
				{system: "mm2-eos", size: 1024, records: 600, rep: 1, seconds: 2, verdict: ok,
					ckpt: &ckptResult{lags: []time.Duration{time.Second}, err: "sample 2: no checkpoint"}},
			},
			want: []string{"| 1.00 [1.00] (n=1); sample 2: no checkpoint |"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newReport(t.TempDir(), 6, 20, 1<<20, 100*time.Millisecond)
			r.cross = true
			r.results = tt.results
			md := r.markdown()
			for _, w := range tt.want {
				if !strings.Contains(md, w) {
					t.Errorf("summary lacks %q:\n%s", w, md)
				}
			}
		})
	}
}

func TestMarkdownSingleClusterHasNoLagColumn(t *testing.T) {
	r := newReport(t.TempDir(), 6, 20, 1<<20, 100*time.Millisecond)
	r.results = []result{{system: "mm2-eos", size: 100, records: 10, rep: 1, seconds: 1, verdict: verdict{Records: 10}}}
	if md := r.markdown(); strings.Contains(md, "checkpoint") {
		t.Fatalf("single-cluster summary mentions checkpoints:\n%s", md)
	}
}
