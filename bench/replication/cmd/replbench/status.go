package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/connectd/connectd/framework/rest/client"
)

// restStatus is a system whose worker serves Kafka Connect's REST API.
// Kafka Connect does not restart a FAILED task, so a MirrorMaker 2 run
// with one never completes; watching the status ends such a run at once
// instead of after -run-timeout.
type restStatus interface {
	// restConnector is the worker's base URL and the run's connector.
	restConnector() (baseURL, name string)
}

func (m *mm2System) restConnector() (string, string) {
	return fmt.Sprintf("http://127.0.0.1:%d", m.port), "mm2-bench"
}

func (c *connectdSystem) restConnector() (string, string) {
	return fmt.Sprintf("http://127.0.0.1:%d", c.port), "repl"
}

// failedFor is how long a task may stay FAILED before the run is given up:
// connectd restarts failed tasks itself (with backoff), Kafka Connect
// does not.
const failedFor = 30 * time.Second

// failureWatch remembers since when each task has been FAILED.
type failureWatch struct {
	c     *client.Client
	name  string
	since map[int]time.Time // task id (-1: the connector) → first seen FAILED
	next  time.Time
}

func newFailureWatch(s system) *failureWatch {
	rs, ok := s.(restStatus)
	if !ok {
		return nil
	}
	base, name := rs.restConnector()
	c, err := client.New(base)
	if err != nil {
		return nil // a URL of our own making; the run timeout still applies
	}
	return &failureWatch{c: c, name: name, since: map[int]time.Time{}}
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
	st, err := w.c.Status(ctx, w.name)
	if err != nil {
		// A busy worker may not answer in time, and the connector is 404
		// while it is being created; the run timeout still applies.
		return nil
	}
	failed := map[int]string{} // id → trace
	if st.Connector.State == "FAILED" {
		failed[-1] = st.Connector.Trace
	}
	for _, t := range st.Tasks {
		if t.State == "FAILED" {
			failed[t.ID] = t.Trace
		}
	}
	now := time.Now()
	for id := range w.since {
		if _, ok := failed[id]; !ok {
			delete(w.since, id) // restarted
		}
	}
	for id, trace := range failed {
		first, ok := w.since[id]
		if !ok {
			w.since[id] = now
			continue
		}
		if now.Sub(first) >= failedFor {
			what := fmt.Sprintf("task %d", id)
			if id < 0 {
				what = "the connector"
			}
			line, _, _ := strings.Cut(trace, "\n")
			return fmt.Errorf("%s FAILED for %v: %s", what, now.Sub(first).Round(time.Second), line)
		}
	}
	return nil
}
