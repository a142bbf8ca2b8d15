package aerofake

import (
	"strconv"
	"strings"
	"sync/atomic"
)

// Stats is a snapshot of the server's operation counters. Batch rows count
// as reads, writes and deletes in addition to BatchRecords.
type Stats struct {
	ConnectionsOpened int64
	ConnectionsOpen   int64
	InfoRequests      int64
	AdminRequests     int64
	Reads             int64
	Writes            int64
	Deletes           int64
	Batches           int64
	BatchRecords      int64
	Scans             int64
	ScanRecords       int64
	// Errors counts replies (and batch rows) with a non-zero result code,
	// KEY_NOT_FOUND_ERROR included.
	Errors int64
	// MalformedFrames counts frames rejected as malformed.
	MalformedFrames int64
	// FaultsInjected counts commands disturbed by fault rules.
	FaultsInjected int64
	// Panics counts connection handlers that panicked (a server bug; the
	// connection is closed and the server keeps running).
	Panics int64
}

type counters struct {
	connectionsOpened atomic.Int64
	connectionsClosed atomic.Int64
	info              atomic.Int64
	admin             atomic.Int64
	reads             atomic.Int64
	writes            atomic.Int64
	deletes           atomic.Int64
	batches           atomic.Int64
	batchRecords      atomic.Int64
	scans             atomic.Int64
	scanRecords       atomic.Int64
	errors            atomic.Int64
	malformed         atomic.Int64
	panics            atomic.Int64
}

// count records one single-record command or batch row.
func (c *counters) count(kind OpKind, rc ResultCode) {
	switch kind {
	case OpRead:
		c.reads.Add(1)
	case OpWrite:
		c.writes.Add(1)
	case OpDelete:
		c.deletes.Add(1)
	}
	if rc != OK {
		c.errors.Add(1)
	}
}

// Stats returns the current counters.
func (s *Server) Stats() Stats {
	c := &s.stats
	opened := c.connectionsOpened.Load()
	return Stats{
		ConnectionsOpened: opened,
		ConnectionsOpen:   opened - c.connectionsClosed.Load(),
		InfoRequests:      c.info.Load(),
		AdminRequests:     c.admin.Load(),
		Reads:             c.reads.Load(),
		Writes:            c.writes.Load(),
		Deletes:           c.deletes.Load(),
		Batches:           c.batches.Load(),
		BatchRecords:      c.batchRecords.Load(),
		Scans:             c.scans.Load(),
		ScanRecords:       c.scanRecords.Load(),
		Errors:            c.errors.Load(),
		MalformedFrames:   c.malformed.Load(),
		FaultsInjected:    s.faults.fired.Load(),
		Panics:            c.panics.Load(),
	}
}

// String renders the counters as the "stats" info command answers them:
// semicolon-separated key=value pairs.
func (st Stats) String() string {
	pairs := []struct {
		k string
		v int64
	}{
		{"connections_opened", st.ConnectionsOpened},
		{"connections_open", st.ConnectionsOpen},
		{"info_requests", st.InfoRequests},
		{"admin_requests", st.AdminRequests},
		{"reads", st.Reads},
		{"writes", st.Writes},
		{"deletes", st.Deletes},
		{"batches", st.Batches},
		{"batch_records", st.BatchRecords},
		{"scans", st.Scans},
		{"scan_records", st.ScanRecords},
		{"errors", st.Errors},
		{"malformed_frames", st.MalformedFrames},
		{"faults_injected", st.FaultsInjected},
		{"panics", st.Panics},
	}
	var b strings.Builder
	for i, p := range pairs {
		if i > 0 {
			b.WriteByte(';')
		}
		b.WriteString(p.k)
		b.WriteByte('=')
		b.WriteString(strconv.FormatInt(p.v, 10))
	}
	return b.String()
}
