package aerofake

import (
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// OpKind classifies commands for fault matching and counters. Kinds combine
// as a bit set.
type OpKind uint8

const (
	// OpRead is a single-record read (get, exists, header, read-only
	// operate) or a read row of a batch.
	OpRead OpKind = 1 << iota
	// OpWrite is a single-record write (put, add, append, prepend, touch,
	// operate with a write op) or a write row of a batch.
	OpWrite
	// OpDelete is a single-record delete or a delete row of a batch.
	OpDelete
	// OpBatch is a whole batch command; a fault matching it fails the batch
	// as a unit (before any row runs, or after all of them with AfterApply).
	OpBatch
	// OpScan is a scan or primary-index query.
	OpScan
	// OpInfo is an info request.
	OpInfo

	// OpRecord matches every single-record command and batch row.
	OpRecord = OpRead | OpWrite | OpDelete
)

func (k OpKind) String() string {
	var parts []string
	for _, n := range []struct {
		k    OpKind
		name string
	}{{OpRead, "read"}, {OpWrite, "write"}, {OpDelete, "delete"}, {OpBatch, "batch"}, {OpScan, "scan"}, {OpInfo, "info"}} {
		if k&n.k != 0 {
			parts = append(parts, n.name)
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, "|")
}

// Fault disturbs commands that match it. Rules are checked in the order they
// were injected; the first matching rule with remaining uses applies.
type Fault struct {
	// Ops selects the commands the fault applies to; 0 means OpRecord.
	Ops OpKind
	// Namespace restricts the fault to one namespace; "" matches any.
	Namespace string
	// Times is how many matching commands the fault disturbs; 0 means every
	// matching command until ClearFaults.
	Times int
	// Delay is added before the command runs.
	Delay time.Duration
	// ResultCode, when non-zero, is answered instead of the real result.
	// For a batch row it becomes that row's result; for OpBatch and OpScan
	// it fails the whole command.
	ResultCode ResultCode
	// DropConnection closes the connection instead of answering.
	DropConnection bool
	// AfterApply runs the command first and then fails or drops it, which
	// leaves the client with an in-doubt write that did happen.
	AfterApply bool
}

// faultAction is what one command must suffer.
type faultAction struct {
	delay      time.Duration
	rc         ResultCode
	drop       bool
	afterApply bool
}

type faultRule struct {
	f         Fault
	remaining int // -1 = unlimited
}

type faultSet struct {
	active atomic.Bool // fast path: no lock while no rule is installed
	mu     sync.Mutex
	rules  []*faultRule
	fired  atomic.Int64
}

func (fs *faultSet) add(f Fault) {
	if f.Ops == 0 {
		f.Ops = OpRecord
	}
	r := &faultRule{f: f, remaining: f.Times}
	if f.Times <= 0 {
		r.remaining = -1
	}
	fs.mu.Lock()
	fs.rules = append(fs.rules, r)
	fs.active.Store(true)
	fs.mu.Unlock()
}

func (fs *faultSet) clear() {
	fs.mu.Lock()
	fs.rules = nil
	fs.active.Store(false)
	fs.mu.Unlock()
}

// match consumes one use of the first rule matching kind and namespace.
func (fs *faultSet) match(kind OpKind, ns []byte) *faultAction {
	if !fs.active.Load() {
		return nil
	}
	fs.mu.Lock()
	defer fs.mu.Unlock()
	for i, r := range fs.rules {
		if r.f.Ops&kind == 0 || (r.f.Namespace != "" && r.f.Namespace != string(ns)) {
			continue
		}
		if r.remaining > 0 {
			r.remaining--
			if r.remaining == 0 {
				fs.rules = append(fs.rules[:i:i], fs.rules[i+1:]...)
				fs.active.Store(len(fs.rules) > 0)
			}
		}
		fs.fired.Add(1)
		return &faultAction{delay: r.f.Delay, rc: r.f.ResultCode, drop: r.f.DropConnection, afterApply: r.f.AfterApply}
	}
	return nil
}

// pending returns the rules that still have uses left.
func (fs *faultSet) pending() []Fault {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	out := make([]Fault, 0, len(fs.rules))
	for _, r := range fs.rules {
		f := r.f
		if r.remaining > 0 {
			f.Times = r.remaining
		}
		out = append(out, f)
	}
	return out
}

// InjectFault installs a fault rule.
func (s *Server) InjectFault(f Fault) { s.faults.add(f) }

// FailNext makes the next n commands matching ops (0 = OpRecord) fail with
// rc without being applied.
func (s *Server) FailNext(n int, ops OpKind, rc ResultCode) {
	if n <= 0 {
		return
	}
	s.faults.add(Fault{Ops: ops, Times: n, ResultCode: rc})
}

// DropNext makes the next n commands matching ops (0 = OpRecord) close their
// connection without being applied or answered.
func (s *Server) DropNext(n int, ops OpKind) {
	if n <= 0 {
		return
	}
	s.faults.add(Fault{Ops: ops, Times: n, DropConnection: true})
}

// SetLatency delays every command matching ops (0 = OpRecord) by d until
// ClearFaults.
func (s *Server) SetLatency(ops OpKind, d time.Duration) {
	s.faults.add(Fault{Ops: ops, Delay: d})
}

// ClearFaults removes every fault rule.
func (s *Server) ClearFaults() { s.faults.clear() }

// PendingFaults returns the installed rules that still have uses left, with
// Times set to the remaining count.
func (s *Server) PendingFaults() []Fault { return s.faults.pending() }
