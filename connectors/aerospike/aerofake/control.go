package aerofake

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// ControlFault is the JSON form of a Fault on the control API.
type ControlFault struct {
	// Ops lists the command kinds ("read", "write", "delete", "batch",
	// "scan", "info", or "record" for read|write|delete); empty means
	// "record".
	Ops            []string `json:"ops,omitempty"`
	Namespace      string   `json:"namespace,omitempty"`
	Times          int      `json:"times,omitempty"`
	DelayMS        int64    `json:"delay_ms,omitempty"`
	ResultCode     int      `json:"result_code,omitempty"`
	DropConnection bool     `json:"drop_connection,omitempty"`
	AfterApply     bool     `json:"after_apply,omitempty"`
}

var opNames = map[string]OpKind{
	"read": OpRead, "write": OpWrite, "delete": OpDelete, "batch": OpBatch,
	"scan": OpScan, "info": OpInfo, "record": OpRecord,
}

// Fault converts the JSON form, refusing unknown operation kinds and
// out-of-range values.
func (cf ControlFault) Fault() (Fault, error) {
	var f Fault
	for _, o := range cf.Ops {
		k, ok := opNames[strings.ToLower(strings.TrimSpace(o))]
		if !ok {
			return Fault{}, fmt.Errorf("ops: unknown operation kind %q (want read, write, delete, batch, scan, info or record)", o)
		}
		f.Ops |= k
	}
	switch {
	case cf.Times < 0:
		return Fault{}, errors.New("times: must be at least 0 (0 = until cleared)")
	case cf.DelayMS < 0 || cf.DelayMS > int64(time.Hour/time.Millisecond):
		return Fault{}, errors.New("delay_ms: must be between 0 and 3600000")
	case cf.ResultCode < 0 || cf.ResultCode > 255:
		return Fault{}, errors.New("result_code: must be between 0 and 255")
	case cf.ResultCode == 0 && !cf.DropConnection && cf.DelayMS == 0:
		return Fault{}, errors.New("a fault needs result_code, drop_connection or delay_ms")
	}
	f.Namespace = cf.Namespace
	f.Times = cf.Times
	f.Delay = time.Duration(cf.DelayMS) * time.Millisecond
	f.ResultCode = ResultCode(cf.ResultCode)
	f.DropConnection = cf.DropConnection
	f.AfterApply = cf.AfterApply
	return f, nil
}

func controlFaultOf(f Fault) ControlFault {
	cf := ControlFault{Namespace: f.Namespace, Times: f.Times, DelayMS: f.Delay.Milliseconds(),
		ResultCode: int(f.ResultCode), DropConnection: f.DropConnection, AfterApply: f.AfterApply}
	for _, n := range []string{"read", "write", "delete", "batch", "scan", "info"} {
		if f.Ops&opNames[n] != 0 {
			cf.Ops = append(cf.Ops, n)
		}
	}
	return cf
}

// ControlHandler serves a small HTTP API for injecting faults into a server
// that runs in another process (`connectd-dev aerospike --control`), so
// that tests can disturb it without linking it in:
//
//	POST   /faults              body: ControlFault JSON → 204
//	GET    /faults              the pending rules as a JSON array
//	DELETE /faults              remove every rule → 204
//	POST   /connections/drop    close every client connection → {"dropped":N}
//	GET    /stats               the operation counters (Stats) as JSON
//
// Bad requests are answered 400 with {"error": "..."}; it is a test
// control surface, not a management API, and has no authentication: bind it
// to loopback.
func (s *Server) ControlHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /faults", func(w http.ResponseWriter, r *http.Request) {
		var cf ControlFault
		dec := json.NewDecoder(io.LimitReader(r.Body, 1<<16))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&cf); err != nil {
			controlError(w, http.StatusBadRequest, "invalid fault JSON: "+err.Error())
			return
		}
		f, err := cf.Fault()
		if err != nil {
			controlError(w, http.StatusBadRequest, err.Error())
			return
		}
		s.InjectFault(f)
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("GET /faults", func(w http.ResponseWriter, _ *http.Request) {
		out := []ControlFault{}
		for _, f := range s.PendingFaults() {
			out = append(out, controlFaultOf(f))
		}
		controlJSON(w, out)
	})
	mux.HandleFunc("DELETE /faults", func(w http.ResponseWriter, _ *http.Request) {
		s.ClearFaults()
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("POST /connections/drop", func(w http.ResponseWriter, _ *http.Request) {
		controlJSON(w, map[string]int{"dropped": s.DropConnections()})
	})
	mux.HandleFunc("GET /stats", func(w http.ResponseWriter, _ *http.Request) {
		controlJSON(w, s.Stats())
	})
	return mux
}

func controlJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

func controlError(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": msg})
}
