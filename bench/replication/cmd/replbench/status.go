package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// restStatus is a system whose worker serves Kafka Connect's REST API.
// Kafka Connect does not restart a FAILED task, so a MirrorMaker 2 run
// with one never completes; watching the status ends such a run at once
// instead of after -run-timeout.
type restStatus interface {
	// statusURL is GET /connectors/{name}/status of the run's connector.
	statusURL() string
}

func (m *mm2System) statusURL() string {
	return fmt.Sprintf("http://127.0.0.1:%d/connectors/mm2-bench/status", m.port)
}

func (c *connectdSystem) statusURL() string {
	return fmt.Sprintf("http://127.0.0.1:%d/connectors/repl/status", c.port)
}

// failedFor is how long a task may stay FAILED before the run is given up:
// connectd restarts failed tasks itself (with backoff), Kafka Connect
// does not.
const failedFor = 30 * time.Second

// failureWatch remembers since when each task has been FAILED.
type failureWatch struct {
	url   string
	since map[int]time.Time // task id (-1: the connector) → first seen FAILED
	next  time.Time
}

func newFailureWatch(s system) *failureWatch {
	rs, ok := s.(restStatus)
	if !ok {
		return nil
	}
	return &failureWatch{url: rs.statusURL(), since: map[int]time.Time{}}
}

// check polls the status every two seconds and returns an error once a
// task (or the connector) has been FAILED for failedFor, carrying the
// first line of its trace.
func (w *failureWatch) check(ctx context.Context) error {
	if w == nil || time.Now().Before(w.next) {
		return nil
	}
	w.next = time.Now().Add(2 * time.Second)
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, w.url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil // a busy worker may not answer in time; the run timeout still applies
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil // e.g. 404 while the connector is being created
	}
	type state struct {
		ID    int    `json:"id"`
		State string `json:"state"`
		Trace string `json:"trace"`
	}
	var st struct {
		Connector state   `json:"connector"`
		Tasks     []state `json:"tasks"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		return nil
	}
	st.Connector.ID = -1
	seen := map[int]bool{}
	now := time.Now()
	for _, s := range append(st.Tasks, st.Connector) {
		if s.State != "FAILED" {
			continue
		}
		seen[s.ID] = true
		first, ok := w.since[s.ID]
		if !ok {
			w.since[s.ID] = now
			continue
		}
		if now.Sub(first) >= failedFor {
			what := fmt.Sprintf("task %d", s.ID)
			if s.ID < 0 {
				what = "the connector"
			}
			trace, _, _ := strings.Cut(s.Trace, "\n")
			return fmt.Errorf("%s FAILED for %v: %s", what, now.Sub(first).Round(time.Second), trace)
		}
	}
	for id := range w.since {
		if !seen[id] {
			delete(w.since, id) // restarted
		}
	}
	return nil
}
