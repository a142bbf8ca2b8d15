package main

import (
	"context"
	"fmt"
	"log"
	"strings"
	"time"

	"github.com/connectd/connectd/framework/rest/api"
)

// event is one rebalance of the -workers mode.
type event struct {
	Event   string  `json:"event"` // kill, join or leave
	Workers int     `json:"workers"`
	Sec     float64 `json:"sec"`
	// Moved counts the connectors whose task went to (join) or came from
	// (kill, leave) the worker of the event; Others the connectors whose
	// task moved between other workers.
	Moved  int `json:"moved"`
	Others int `json:"others_moved"`
}

func (e event) String() string {
	return fmt.Sprintf("%s (%d workers after): %.1f s, %d tasks moved with the worker, %d others moved",
		e.Event, e.Workers, e.Sec, e.Moved, e.Others)
}

// placement maps every connector to the worker of its task 0.
func placement(st map[string]api.ConnectorExpanded) map[string]string {
	out := map[string]string{}
	for name, c := range st {
		if c.Status != nil && len(c.Status.Tasks) > 0 {
			out[name] = c.Status.Tasks[0].WorkerID
		}
	}
	return out
}

// onPort tells whether a worker id names the worker listening on port.
func onPort(id string, port int) bool { return strings.HasSuffix(id, fmt.Sprintf(":%d", port)) }

// runCluster starts workers workers of sys in one group, creates the
// largest N of connectors, measures the cluster, then times a SIGKILLed
// worker's share coming back, a new worker joining and a worker leaving
// (SIGTERM).
func runCluster(ctx context.Context, sys system, r *run, set settings, workers int) ([]row, []event, error) {
	if err := prepare(ctx, r); err != nil {
		return nil, nil, err
	}
	defer cleanup(r, sys)
	var ws []*worker
	defer func() {
		for _, w := range ws {
			w.proc.Stop(20 * time.Second)
		}
	}()
	for range workers {
		w, err := startWorker(ctx, sys, r)
		if err != nil {
			return nil, nil, err
		}
		ws = append(ws, w)
	}
	n := set.ns[len(set.ns)-1]
	label := fmt.Sprintf("%s %d workers N=%d", sys.name(), workers, n)
	t0, err := ws[0].create(label, 0, n, sys.connectorConfig(r))
	if err != nil {
		return nil, nil, err
	}
	took, err := ws[0].waitRunning(ctx, label, n, "", t0, set.timeout)
	if err != nil {
		return nil, nil, err
	}
	m, err := measureTree(ctx, ws[0], ws, set, fmt.Sprintf("%d workers", workers), n, took)
	if err != nil {
		return nil, nil, err
	}
	log.Printf("%s: %s", sys.name(), m)
	rows := []row{m}
	var evs []event

	// kill: the last worker, SIGKILL, its share RUNNING elsewhere.
	victim := ws[len(ws)-1]
	ws = ws[:len(ws)-1]
	ev, err := leave(ctx, "kill", label+" kill", ws[0], victim, n, set, victim.proc.Kill)
	if err != nil {
		return rows, evs, err
	}
	evs = append(evs, ev)
	// join: a new worker takes its share.
	ev, joiner, err := join(ctx, label+" join", sys, r, ws[0], n, set)
	if joiner != nil {
		ws = append(ws, joiner)
	}
	if err != nil {
		return rows, evs, err
	}
	evs = append(evs, ev)
	// leave: a worker stops (SIGTERM), its share RUNNING elsewhere.
	leaver := ws[len(ws)-1]
	ws = ws[:len(ws)-1]
	ev, err = leave(ctx, "leave", label+" leave", ws[0], leaver, n, set, func() { go leaver.proc.Stop(time.Minute) })
	if err != nil {
		return rows, evs, err
	}
	evs = append(evs, ev)
	for _, e := range evs {
		log.Printf("%s: %s", sys.name(), e)
	}
	return rows, evs, nil
}

// leave times from stop() until every connector runs again on another
// worker than gone, watched through obs.
func leave(ctx context.Context, name, label string, obs, gone *worker, n int, set settings, stop func()) (event, error) {
	st, err := obs.statuses(ctx)
	if err != nil {
		return event{}, err
	}
	before := placement(st)
	goneID := ""
	for _, id := range before {
		if onPort(id, gone.port) {
			goneID = id
		}
	}
	if goneID == "" {
		return event{}, fmt.Errorf("%s: the worker on port %d runs no task", label, gone.port)
	}
	t0 := time.Now()
	stop()
	took, err := obs.waitRunning(ctx, label, n, goneID, t0, set.timeout)
	if err != nil {
		return event{}, err
	}
	st, err = obs.statuses(ctx)
	if err != nil {
		return event{}, err
	}
	ev := event{Event: name, Sec: took.Seconds()}
	for name, w := range placement(st) {
		switch {
		case before[name] == goneID:
			ev.Moved++
		case before[name] != w:
			ev.Others++
		}
	}
	ev.Workers = len(workerIDs(st))
	return ev, nil
}

// join starts a worker and times until every connector runs and the
// placement has held for 15 s with tasks on the new worker; the time is
// that of the last change.
func join(ctx context.Context, label string, sys system, r *run, obs *worker, n int, set settings) (event, *worker, error) {
	st, err := obs.statuses(ctx)
	if err != nil {
		return event{}, nil, err
	}
	before := placement(st)
	t0 := time.Now()
	j, err := startWorker(ctx, sys, r)
	if err != nil {
		return event{}, nil, err
	}
	last, lastChange := before, time.Now()
	for {
		st, err := obs.statuses(ctx)
		if err == nil {
			now := placement(st)
			if !equal(now, last) {
				last, lastChange = now, time.Now()
			}
			done, _ := running(st, "")
			on := 0
			for _, id := range now {
				if onPort(id, j.port) {
					on++
				}
			}
			if done >= n && on > 0 && time.Since(lastChange) >= 15*time.Second {
				ev := event{Event: "join", Workers: len(workerIDs(st)), Sec: lastChange.Sub(t0).Seconds(), Moved: on}
				for name, id := range now {
					if !onPort(id, j.port) && before[name] != id {
						ev.Others++
					}
				}
				return ev, j, nil
			}
		}
		if time.Since(t0) > set.timeout {
			return event{}, j, fmt.Errorf("%s: no stable placement with tasks on the new worker after %v", label, set.timeout)
		}
		select {
		case <-ctx.Done():
			return event{}, j, ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

func equal(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func workerIDs(st map[string]api.ConnectorExpanded) map[string]bool {
	out := map[string]bool{}
	for _, id := range placement(st) {
		out[id] = true
	}
	return out
}
