package benchkit

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"
)

// FreePort returns a TCP port on 127.0.0.1 that was free a moment ago.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// WaitHTTP waits until url answers 200 or one of procs exits.
func WaitHTTP(ctx context.Context, url string, timeout time.Duration, procs ...*Proc) error {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		for _, p := range procs {
			select {
			case <-p.Done():
				return fmt.Errorf("%s exited while starting: %v", p.Name, p.err)
			default:
			}
		}
		resp, err := http.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
	return fmt.Errorf("%s did not answer within %v", url, timeout)
}

// PostJSON posts body, retrying while the worker answers 409 (a rebalance
// or start-up in progress: Kafka Connect's "retry later"). It returns when
// the accepted attempt was sent.
func PostJSON(url string, body any) (time.Time, error) {
	b, err := json.Marshal(body)
	if err != nil {
		return time.Time{}, err
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		sent := time.Now()
		resp, err := http.Post(url, "application/json", bytes.NewReader(b))
		if err != nil {
			return sent, err
		}
		out, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		switch {
		case resp.StatusCode/100 == 2:
			return sent, nil
		case resp.StatusCode == http.StatusConflict && time.Now().Before(deadline):
			time.Sleep(250 * time.Millisecond)
		default:
			return sent, fmt.Errorf("POST %s: %s: %s", url, resp.Status, out)
		}
	}
}
