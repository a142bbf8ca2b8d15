package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// report is results.json: the settings and every pass's rows.
type report struct {
	Started  string `json:"started"`
	Ns       []int  `json:"n"`
	Window   string `json:"window"`
	Settle   string `json:"settle"`
	Requests int    `json:"rest_requests"`
	Passes   []pass `json:"passes"`
}

func (rep *report) write(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "results.json"), b, 0o644); err != nil {
		return err
	}
	md := rep.markdown()
	if err := os.WriteFile(filepath.Join(dir, "summary.md"), []byte(md), 0o644); err != nil {
		return err
	}
	fmt.Print(md)
	fmt.Printf("\nresults: %s\n", dir)
	return nil
}

// key is one line of a system's table.
type key struct {
	phase string
	n     int
}

// medians merges the passes of one system: the median of every figure over
// the repetitions, in the order the rows were measured.
func (rep *report) medians(system string) ([]key, map[key]row) {
	var order []key
	all := map[key][]row{}
	for _, p := range rep.Passes {
		if p.System != system {
			continue
		}
		for _, r := range p.Rows {
			k := key{r.Phase, r.N}
			if _, ok := all[k]; !ok {
				order = append(order, k)
			}
			all[k] = append(all[k], r)
		}
	}
	out := map[key]row{}
	for k, rs := range all {
		m := row{Phase: k.phase, N: k.n}
		var running []float64
		for _, r := range rs {
			if r.RunningSec != nil {
				running = append(running, *r.RunningSec)
			}
		}
		if len(running) > 0 {
			v := median(running)
			m.RunningSec = &v
		}
		pick := func(f func(row) float64) float64 {
			vs := make([]float64, len(rs))
			for i, r := range rs {
				vs[i] = f(r)
			}
			return median(vs)
		}
		m.RSSMB = pick(func(r row) float64 { return r.RSSMB })
		m.PSSMB = pick(func(r row) float64 { return r.PSSMB })
		m.Procs = int(pick(func(r row) float64 { return float64(r.Procs) }))
		m.Threads = int(pick(func(r row) float64 { return float64(r.Threads) }))
		m.CPUPct = pick(func(r row) float64 { return r.CPUPct })
		m.RESTP50Ms = pick(func(r row) float64 { return r.RESTP50Ms })
		m.RESTMaxMs = pick(func(r row) float64 { return r.RESTMaxMs })
		m.Survivors = int(pick(func(r row) float64 { return float64(r.Survivors) }))
		out[k] = m
	}
	return order, out
}

func median(vs []float64) float64 {
	if len(vs) == 0 {
		return 0
	}
	s := slices.Clone(vs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func (rep *report) systems() []string {
	var out []string
	for _, p := range rep.Passes {
		if !slices.Contains(out, p.System) {
			out = append(out, p.System)
		}
	}
	return out
}

func (rep *report) markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Scale benchmark %s\n\nIdle source connectors (tasks.max=1) on one worker; CPU over %s after %s of settling; "+
		"REST: %d sequential `GET /connectors?expand=status`; medians over the repetitions.\n",
		rep.Started, rep.Window, rep.Settle, rep.Requests)
	for _, sys := range rep.systems() {
		order, m := rep.medians(sys)
		fmt.Fprintf(&b, "\n## %s\n\n", sys)
		b.WriteString("| phase | connectors | all RUNNING after | RSS sum | PSS sum | processes | threads | CPU (% of one core) | REST p50 | REST max |\n")
		b.WriteString("|---|---|---|---|---|---|---|---|---|---|\n")
		for _, k := range order {
			r := m[k]
			phase := r.Phase
			if r.Survivors > 0 {
				phase += fmt.Sprintf(" (%d processes outlived the SIGKILLed worker)", r.Survivors)
			}
			fmt.Fprintf(&b, "| %s | %d | %s | %.0f MB | %.0f MB | %d | %d | %.1f | %.1f ms | %.1f ms |\n",
				phase, r.N, secs(r.RunningSec), r.RSSMB, r.PSSMB, r.Procs, r.Threads, r.CPUPct, r.RESTP50Ms, r.RESTMaxMs)
		}
		if z, ok := m[key{phaseCreate, 0}]; ok {
			for _, ph := range []string{phaseDeleted, phaseReleased} {
				if d, ok := m[key{ph, 0}]; ok {
					fmt.Fprintf(&b, "\n%s, against N=0: processes %+d, threads %+d, RSS %+.0f MB, PSS %+.0f MB.\n",
						ph, d.Procs-z.Procs, d.Threads-z.Threads, d.RSSMB-z.RSSMB, d.PSSMB-z.PSSMB)
				}
			}
		}
	}
	rep.events(&b)
	for _, p := range rep.Passes {
		if p.Err != "" {
			fmt.Fprintf(&b, "\n%s pass %d failed: %s\n", p.System, p.Rep, p.Err)
		}
	}
	rep.ratios(&b)
	return b.String()
}

// ratios writes connectd / Kafka Connect and connectd / its baseline for
// every row both sides have.
func (rep *report) ratios(b *strings.Builder) {
	rep.ratioTable(b, "connectd", "kafka-connect", "connectd / Kafka Connect")
	rep.ratioTable(b, "connectd", "connectd-baseline", "connectd / connectd-baseline")
}

func (rep *report) ratioTable(b *strings.Builder, num, den, title string) {
	order, cd := rep.medians(num)
	_, kc := rep.medians(den)
	if len(cd) == 0 || len(kc) == 0 {
		return
	}
	fmt.Fprintf(b, "\n## %s\n\n", title)
	b.WriteString("| phase | connectors | all RUNNING after | RSS sum | PSS sum | processes | threads | CPU | REST p50 | REST max |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|\n")
	for _, k := range order {
		c, ok1 := cd[k]
		j, ok2 := kc[k]
		if !ok1 || !ok2 {
			continue
		}
		run := "—"
		if c.RunningSec != nil && j.RunningSec != nil {
			run = ratio(*c.RunningSec, *j.RunningSec)
		}
		fmt.Fprintf(b, "| %s | %d | %s | %s | %s | %s | %s | %s | %s | %s |\n", k.phase, k.n, run,
			ratio(c.RSSMB, j.RSSMB), ratio(c.PSSMB, j.PSSMB), ratio(float64(c.Procs), float64(j.Procs)),
			ratio(float64(c.Threads), float64(j.Threads)), ratio(c.CPUPct, j.CPUPct),
			ratio(c.RESTP50Ms, j.RESTP50Ms), ratio(c.RESTMaxMs, j.RESTMaxMs))
	}
}

func ratio(a, b float64) string {
	if b == 0 {
		return "—"
	}
	return fmt.Sprintf("%.2f", a/b)
}

func secs(s *float64) string {
	if s == nil {
		return "—"
	}
	return fmt.Sprintf("%.1f s", *s)
}

// events writes the rebalances of the -workers mode, every pass's own.
func (rep *report) events(b *strings.Builder) {
	head := false
	for _, p := range rep.Passes {
		for _, e := range p.Events {
			if !head {
				b.WriteString("\n## Rebalances\n\n| system | pass | event | workers after | seconds | tasks moved with the worker | other tasks moved |\n|---|---|---|---|---|---|---|\n")
				head = true
			}
			fmt.Fprintf(b, "| %s | %d | %s | %d | %.1f | %d | %d |\n", p.System, p.Rep, e.Event, e.Workers, e.Sec, e.Moved, e.Others)
		}
	}
}
