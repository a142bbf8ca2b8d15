package aerofake

import (
	"bytes"
	"encoding/binary"
)

// scanRequest is a parsed scan or primary-index query.
type scanRequest struct {
	ns         []byte
	set        []byte
	hasSet     bool
	pids       []byte // PID_ARRAY: n × u16 little-endian
	digests    []byte // DIGEST_ARRAY: n × 20 bytes, resume after each
	maxRecords uint64 // 0 = unlimited
	rc         ResultCode
}

func parseScan(m *message) scanRequest {
	var sr scanRequest
	var hasRange, hasIndex bool
	for _, f := range m.fields {
		switch f.typ {
		case fieldNamespace:
			sr.ns = f.data
		case fieldSet:
			sr.set, sr.hasSet = f.data, len(f.data) > 0
		case fieldPIDArray:
			if len(f.data)%2 != 0 {
				sr.rc = ParameterError
			}
			sr.pids = f.data
		case fieldDigestArray:
			if len(f.data)%20 != 0 {
				sr.rc = ParameterError
			}
			sr.digests = f.data
		case fieldMaxRecords:
			if len(f.data) != 8 {
				sr.rc = ParameterError
			} else {
				sr.maxRecords = binary.BigEndian.Uint64(f.data)
			}
		case fieldTranID, fieldSocketTimeout, fieldRecordsPerSecond, fieldBValArray, fieldQueryBinList:
		case fieldIndexRange:
			hasRange = true
		case fieldIndexName, fieldIndexContext, fieldIndexType:
			hasIndex = true
		case fieldFilterExp, fieldUDFFilename, fieldUDFFunction, fieldUDFArglist, fieldUDFOp:
			if sr.rc == OK {
				sr.rc = UnsupportedFeature
			}
		default:
			// Unknown field types are skipped, as CE 8.1 does.
		}
		if sr.rc == ParameterError {
			return sr
		}
	}
	switch {
	case sr.rc != OK:
	case hasRange:
		// The client's query with a filter: answered as by a node without
		// the index (this server has none).
		sr.rc = IndexNotFound
	case hasIndex:
		// Index fields without a range (only raw messages have them):
		// CE 8.1 answered UNSUPPORTED_FEATURE.
		sr.rc = UnsupportedFeature
	}
	if m.info2&info2Write != 0 && sr.rc == OK {
		sr.rc = UnsupportedFeature // background scans and queries
	}
	if m.info3&info3PartitionDone == 0 && sr.rc == OK {
		// Like the real server, refuse a basic query whose client cannot
		// track partitions (every v7 scan and query sets the bit).
		sr.rc = UnsupportedFeature
	}
	for i := range m.ops {
		if m.ops[i].code != opRead && sr.rc == OK {
			sr.rc = ParameterError
		}
	}
	return sr
}

// handleScan streams every live record of the requested partitions (in
// ascending digest order within a partition, resuming strictly after a
// DIGEST_ARRAY entry), then a LAST message.
func (c *conn) handleScan(m *message) error {
	s := c.s
	s.stats.scans.Add(1)
	sr := parseScan(m)
	if sr.rc == OK {
		if act := s.faults.match(OpScan, sr.ns); act != nil {
			if err := c.applyBefore(act); err != nil {
				return err
			}
			if act.rc != 0 {
				sr.rc = act.rc
			}
		}
	}
	ns := s.namespaces[string(sr.ns)]
	if sr.rc == OK && ns == nil {
		sr.rc = InvalidNamespace
	}
	if sr.rc != OK {
		return c.batchFail(sr.rc)
	}

	type part struct {
		pid    int
		resume []byte
	}
	var parts []part
	for i := 0; i+2 <= len(sr.pids); i += 2 {
		pid := int(binary.LittleEndian.Uint16(sr.pids[i:]))
		if pid >= nPartitions {
			return c.batchFail(ParameterError)
		}
		parts = append(parts, part{pid: pid})
	}
	for i := 0; i+20 <= len(sr.digests); i += 20 {
		d := (*[20]byte)(sr.digests[i : i+20])
		parts = append(parts, part{pid: partitionID(d), resume: d[:]})
	}
	if sr.pids == nil && sr.digests == nil {
		for pid := 0; pid < nPartitions; pid++ {
			parts = append(parts, part{pid: pid})
		}
	}

	var set []byte
	if sr.hasSet {
		set = sr.set
	}
	noBins := m.info1&info1NoBinData != 0
	rowInfo1 := byte(0)
	if noBins {
		rowInfo1 = info1NoBinData
	}
	now := s.now().cl
	sent := uint64(0)
	out := appendProtoHeader(c.out[:0], protoMsg, 0)
	nsName := string(sr.ns)
scan:
	for _, pt := range parts {
		c.scan = ns.parts[pt.pid].snapshot(set, now, c.scan[:0])
		for _, dr := range c.scan {
			if pt.resume != nil && bytes.Compare(dr.digest[:], pt.resume) <= 0 {
				continue
			}
			if sr.maxRecords > 0 && sent >= sr.maxRecords {
				break scan
			}
			out = appendScanRow(out, rowInfo1, nsName, &dr, noBins, m.ops)
			sent++
			if len(out) >= frameTarget {
				putProtoSize(out, 0, protoMsg)
				if _, err := c.w.Write(out); err != nil {
					return err
				}
				out = appendProtoHeader(out[:0], protoMsg, 0)
			}
		}
	}
	clear(c.scan)
	s.stats.scanRecords.Add(int64(sent))
	out = appendMsgHeader(out, 0, info3Last, OK, 0, 0, 0, 0, 0)
	putProtoSize(out, 0, protoMsg)
	c.out = out
	_, err := c.w.Write(out)
	return err
}

func appendScanRow(out []byte, info1 byte, ns string, dr *digestRecord, noBins bool, ops []op) []byte {
	r := dr.rec
	nFields := 2
	if r.set != "" {
		nFields++
	}
	if r.key != nil {
		nFields++
	}
	// Count the ops first: the header carries the count.
	nOps := 0
	if !noBins {
		if len(ops) == 0 {
			nOps = len(r.bins)
		} else {
			for i := range ops {
				if _, ok := r.bin(ops[i].name); ok {
					nOps++
				}
			}
		}
	}
	out = appendMsgHeader(out, info1, 0, OK, uint32(r.gen), r.voidTime, 0, nFields, nOps)
	out = appendFieldString(out, fieldNamespace, ns)
	out = appendField(out, fieldDigest, dr.digest[:])
	if r.set != "" {
		out = appendFieldString(out, fieldSet, r.set)
	}
	if r.key != nil {
		out = appendField(out, fieldKey, r.key)
	}
	if noBins {
		return out
	}
	if len(ops) == 0 {
		for _, b := range r.bins {
			out = appendOp(out, opRead, b.ptype, b.name, b.data)
		}
		return out
	}
	for i := range ops {
		if j, ok := r.bin(ops[i].name); ok {
			b := &r.bins[j]
			out = appendOp(out, opRead, b.ptype, b.name, b.data)
		}
	}
	return out
}
