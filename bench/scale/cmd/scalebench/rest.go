package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net/http"
	"slices"
	"time"

	"github.com/connectd/connectd/bench/internal/benchkit"
	"github.com/connectd/connectd/framework/rest/api"
)

// worker is a running worker's REST API.
type worker struct {
	port int
	base string // http://127.0.0.1:<port>
	proc *benchkit.Proc
	hc   *http.Client
}

func newWorker(port int, p *benchkit.Proc) *worker {
	return &worker{port: port, base: fmt.Sprintf("http://127.0.0.1:%d", port), proc: p, hc: &http.Client{Timeout: 30 * time.Second}}
}

// statuses is one GET /connectors?expand=status.
func (w *worker) statuses(ctx context.Context) (map[string]api.ConnectorExpanded, error) {
	body, err := w.statusBody(ctx)
	if err != nil {
		return nil, err
	}
	return decodeStatuses(body)
}

// statusBody is one GET /connectors?expand=status, read to its last byte.
func (w *worker) statusBody(ctx context.Context) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, w.base+"/connectors?expand=status", nil)
	if err != nil {
		return nil, err
	}
	resp, err := w.hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET /connectors?expand=status: %s", resp.Status)
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("GET /connectors?expand=status: %w", err)
	}
	return body, nil
}

func decodeStatuses(body []byte) (map[string]api.ConnectorExpanded, error) {
	out := map[string]api.ConnectorExpanded{}
	if err := json.Unmarshal(body, &out); err != nil {
		return nil, fmt.Errorf("GET /connectors?expand=status: %w", err)
	}
	return out, nil
}

// running counts the connectors whose connector and every task are RUNNING
// on a worker other than notOn (the worker id before a restart; "" for
// any), and returns one worker id seen.
func running(st map[string]api.ConnectorExpanded, notOn string) (n int, workerID string) {
	for _, c := range st {
		s := c.Status
		if s == nil || s.Connector.State != "RUNNING" || len(s.Tasks) == 0 {
			continue
		}
		ok := notOn == "" || s.Connector.WorkerID != notOn
		for _, t := range s.Tasks {
			ok = ok && t.State == "RUNNING" && (notOn == "" || t.WorkerID != notOn)
			workerID = t.WorkerID
		}
		if ok {
			n++
		}
	}
	return n, workerID
}

// waitRunning polls the status every second until want connectors run (on
// another worker than notOn), and returns the time since t0.
func (w *worker) waitRunning(ctx context.Context, label string, want int, notOn string, t0 time.Time, timeout time.Duration) (time.Duration, error) {
	lastLog := time.Now()
	for {
		st, err := w.statuses(ctx)
		n := 0
		if err == nil {
			n, _ = running(st, notOn)
		}
		if n >= want {
			return time.Since(t0), nil
		}
		if time.Since(lastLog) >= 5*time.Second {
			if err != nil {
				log.Printf("%s: %d/%d RUNNING after %v (status: %v)", label, n, want, time.Since(t0).Round(time.Second), err)
			} else {
				log.Printf("%s: %d/%d RUNNING after %v", label, n, want, time.Since(t0).Round(time.Second))
			}
			lastLog = time.Now()
		}
		if time.Since(t0) > timeout {
			return 0, fmt.Errorf("%s: %d/%d RUNNING after %v", label, n, want, timeout)
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-w.proc.Done():
			return 0, fmt.Errorf("%s: the worker exited", label)
		case <-time.After(time.Second):
		}
	}
}

// latency times n sequential GET /connectors?expand=status and returns
// their median and maximum.
func (w *worker) latency(ctx context.Context, n int) (p50, maxD time.Duration, err error) {
	ds := make([]time.Duration, 0, n)
	for range n {
		// The time to the response's last byte: decoding it is the
		// client's work, not the worker's.
		t := time.Now()
		body, err := w.statusBody(ctx)
		if err != nil {
			return 0, 0, err
		}
		ds = append(ds, time.Since(t))
		if _, err := decodeStatuses(body); err != nil {
			return 0, 0, err
		}
	}
	if len(ds) == 0 {
		return 0, 0, nil
	}
	slices.Sort(ds)
	return ds[len(ds)/2], ds[len(ds)-1], nil
}

// create POSTs connectors idle-<from> … idle-<to-1> one after the other
// and returns when the first was sent.
func (w *worker) create(label string, from, to int, cfg map[string]string) (time.Time, error) {
	var first time.Time
	for i := from; i < to; i++ {
		sent, err := benchkit.PostJSON(w.base+"/connectors", map[string]any{"name": connName(i), "config": cfg})
		if err != nil {
			return first, err
		}
		if i == from {
			first = sent
		}
		if (i+1-from)%100 == 0 {
			log.Printf("%s: %d/%d created", label, i+1, to)
		}
	}
	return first, nil
}

func connName(i int) string { return fmt.Sprintf("idle-%04d", i) }

// deleteAll deletes connectors idle-0000 … idle-<n-1>.
func (w *worker) deleteAll(ctx context.Context, label string, n int) error {
	for i := 0; i < n; i++ {
		req, err := http.NewRequestWithContext(ctx, http.MethodDelete, w.base+"/connectors/"+connName(i), nil)
		if err != nil {
			return err
		}
		resp, err := w.hc.Do(req)
		if err != nil {
			return fmt.Errorf("DELETE %s: %w", connName(i), err)
		}
		resp.Body.Close()
		switch {
		case resp.StatusCode/100 == 2 || resp.StatusCode == http.StatusNotFound:
		case resp.StatusCode == http.StatusConflict:
			time.Sleep(250 * time.Millisecond) // a rebalance: Kafka Connect's "retry later"
			i--
			continue
		default:
			return fmt.Errorf("DELETE %s: %s", connName(i), resp.Status)
		}
		if (i+1)%100 == 0 {
			log.Printf("%s: %d/%d deleted", label, i+1, n)
		}
	}
	return nil
}
