package chaos

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	as "github.com/aerospike/aerospike-client-go/v7"

	"github.com/connectd/connectd/connectors/aerospike/aerofake"
	"github.com/connectd/connectd/connectors/aerospike/aerotest"
	"github.com/connectd/connectd/internal/syncbuf"
)

// aeroTarget is where the sink writes.
type aeroTarget struct {
	hosts, namespace, set string
	user, password        string
}

// aeroServer is the Aerospike test server running as its own process
// (`connectd-dev aerospike --control`), disturbed through its control API;
// or, when AEROSPIKE_HOSTS names one (see package aerotest), an external
// cluster, which the suite writes to but cannot disturb.
type aeroServer struct {
	aeroTarget
	proc    *child // nil for an external cluster
	control string // http://host:port; "" for an external cluster
	hc      *http.Client
	client  *as.Client
}

// external reports whether the cluster is an external one: no fault
// injection, no process to sample.
func (s *aeroServer) external() bool { return s.proc == nil }

// errExternal is returned by the control calls against an external cluster.
var errExternal = errors.New("an external Aerospike cluster has no control API")

// connectExternal connects to the cluster named by the environment; the
// sink writes to a set of the run's own, truncated at the end.
func connectExternal(ext aerotest.External) (*aeroServer, error) {
	var b [4]byte
	_, _ = rand.Read(b[:])
	s := &aeroServer{aeroTarget: aeroTarget{
		hosts: ext.HostList(), namespace: ext.Namespace, set: "chaos_" + hex.EncodeToString(b[:]),
		user: ext.User, password: ext.Password,
	}}
	cp := as.NewClientPolicy()
	cp.Timeout = 10 * time.Second
	cp.User, cp.Password = ext.User, ext.Password
	hosts := make([]*as.Host, len(ext.Hosts))
	for i, h := range ext.Hosts {
		hosts[i] = as.NewHost(h.Name, h.Port)
	}
	var err error
	if s.client, err = as.NewClientWithPolicyAndHost(cp, hosts...); err != nil {
		return nil, fmt.Errorf("aerospike client for %s: %w", s.hosts, err)
	}
	return s, nil
}

// lineWatcher collects a child's stdout lines.
type lineWatcher struct{ syncbuf.Buffer }

func (w *lineWatcher) value(prefix string) string {
	for _, line := range strings.Split(w.String(), "\n") {
		if v, ok := strings.CutPrefix(line, prefix); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

func startAerospike(ctx context.Context, connectdDev, logPath string) (*aeroServer, error) {
	ext, ok, err := aerotest.FromEnv(os.LookupEnv)
	if err != nil {
		return nil, err
	}
	if ok {
		return connectExternal(ext)
	}
	var lw lineWatcher
	p, err := startChild(logPath, &lw, nil, connectdDev, "aerospike",
		"--listen", "127.0.0.1:0", "--control", "127.0.0.1:0", "--namespaces", "test")
	if err != nil {
		return nil, err
	}
	s := &aeroServer{proc: p, hc: &http.Client{Timeout: 10 * time.Second}, aeroTarget: aeroTarget{namespace: "test", set: "counters"}}
	deadline := time.Now().Add(30 * time.Second)
	for s.hosts == "" || s.control == "" {
		s.hosts, s.control = lw.value("AEROSPIKE_ADDR="), lw.value("AEROSPIKE_CONTROL=")
		if !p.alive() {
			return nil, fmt.Errorf("aerospike test server exited: %v\n%s", p.exitErr(), p.logTail(20))
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			p.kill()
			return nil, fmt.Errorf("aerospike test server printed no addresses within 30 s\n%s", p.logTail(20))
		}
		time.Sleep(20 * time.Millisecond)
	}
	host, portStr, _ := net.SplitHostPort(s.hosts)
	port, _ := strconv.Atoi(portStr)
	cp := as.NewClientPolicy()
	cp.Timeout = 10 * time.Second
	s.client, err = as.NewClientWithPolicyAndHost(cp, as.NewHost(host, port))
	if err != nil {
		p.kill()
		return nil, fmt.Errorf("aerospike client: %w", err)
	}
	return s, nil
}

func (s *aeroServer) close() {
	if s.client != nil {
		if s.external() {
			_ = s.client.Truncate(nil, s.namespace, s.set, nil)
		}
		s.client.Close()
	}
	if s.proc != nil {
		s.proc.terminate(10 * time.Second)
	}
}

func (s *aeroServer) call(ctx context.Context, method, path string, body any, out any) error {
	if s.external() {
		return errExternal
	}
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, s.control+path, rd)
	if err != nil {
		return err
	}
	resp, err := s.hc.Do(req)
	if err != nil {
		return fmt.Errorf("aerospike control %s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("aerospike control %s %s: %s %s", method, path, resp.Status, b)
	}
	if out != nil {
		return json.Unmarshal(b, out)
	}
	return nil
}

func (s *aeroServer) inject(ctx context.Context, f aerofake.ControlFault) error {
	return s.call(ctx, http.MethodPost, "/faults", f, nil)
}

func (s *aeroServer) clearFaults(ctx context.Context) error {
	if s.external() {
		return nil // none were injected
	}
	return s.call(ctx, http.MethodDelete, "/faults", nil, nil)
}

func (s *aeroServer) dropConnections(ctx context.Context) error {
	return s.call(ctx, http.MethodPost, "/connections/drop", nil, nil)
}

func (s *aeroServer) stats(ctx context.Context) (aerofake.Stats, error) {
	var st aerofake.Stats
	err := s.call(ctx, http.MethodGet, "/stats", nil, &st)
	return st, err
}

// counters scans the set with the real client and returns the amount bin
// of every record by its stored user key (the sink runs with send.key),
// and the records that have no integer amount bin.
func (s *aeroServer) counters(set string) (map[string]int64, []string, error) {
	sp := as.NewScanPolicy()
	sp.TotalTimeout = 60 * time.Second
	rs, err := s.client.ScanAll(sp, s.namespace, set)
	if err != nil {
		return nil, nil, fmt.Errorf("scan %s: %w", set, err)
	}
	defer rs.Close()
	out := map[string]int64{}
	var odd []string
	for res := range rs.Results() {
		if res.Err != nil {
			return nil, nil, fmt.Errorf("scan %s: %w", set, res.Err)
		}
		r := res.Record
		var key string
		if r.Key != nil && r.Key.Value() != nil {
			key = fmt.Sprint(r.Key.Value().GetObject())
		} else {
			key = fmt.Sprintf("digest:%x", r.Key.Digest())
		}
		switch v := r.Bins["amount"].(type) {
		case int:
			out[key] = int64(v)
		case int64:
			out[key] = v
		default:
			odd = append(odd, fmt.Sprintf("%s (amount %v)", key, r.Bins["amount"]))
		}
	}
	return out, odd, nil
}

// amount reads one counter: ok is false when the record or its integer
// amount bin does not exist.
func (s *aeroServer) amount(set, key string) (int64, bool) {
	k, err := as.NewKey(s.namespace, set, key)
	if err != nil {
		return 0, false
	}
	r, err := s.client.Get(nil, k, "amount")
	if err != nil || r == nil {
		return 0, false
	}
	switch v := r.Bins["amount"].(type) {
	case int:
		return int64(v), true
	case int64:
		return v, true
	}
	return 0, false
}
