package aerofake

import (
	"encoding/binary"
)

// Batch row flags (server batch.c).
const (
	batchRepeat        = 0x01
	batchHasExtraInfo  = 0x02
	batchHasGeneration = 0x04
	batchHasTTL        = 0x08
	batchHasInfo4      = 0x10

	minBatchRow = 4 + 20 + 1
)

// batchRow is one parsed row: the key plus the request template it uses
// (its own, or the previous row's when REPEAT is set).
type batchRow struct {
	index  uint32
	digest [20]byte
	tmpl   int
}

// batchTemplate is the part of a row that REPEAT reuses. Ops are kept as an
// index range into batchState.ops because that slice may grow while parsing.
type batchTemplate struct {
	req            request
	opStart, opEnd int
}

// batchState is per-connection scratch space reused across batches.
type batchState struct {
	rows   []batchRow
	tmpls  []batchTemplate
	ops    []op
	fields []field
}

// parseBatch decodes a field 41 or field 42 payload. Both layouts share the
// row prefix (index, digest, flags byte); a field 42 flags byte is 0 or 1,
// which reads as "no extra info" or REPEAT.
func (bs *batchState) parse(payload []byte) ResultCode {
	bs.rows, bs.tmpls, bs.ops = bs.rows[:0], bs.tmpls[:0], bs.ops[:0]
	if len(payload) < 5 {
		return ParameterError
	}
	count := binary.BigEndian.Uint32(payload[0:4])
	b := payload[5:] // skip the batch flags byte
	if uint64(count) > uint64(len(b)/minBatchRow) {
		return ParameterError
	}
	for i := uint32(0); i < count; i++ {
		if len(b) < minBatchRow {
			return ParameterError
		}
		row := batchRow{index: binary.BigEndian.Uint32(b[0:4])}
		copy(row.digest[:], b[4:24])
		flags := b[24]
		b = b[25:]
		if flags&batchRepeat != 0 {
			if len(bs.tmpls) == 0 {
				return ParameterError
			}
			row.tmpl = len(bs.tmpls) - 1
			bs.rows = append(bs.rows, row)
			continue
		}
		if flags&batchHasInfo4 != 0 {
			return UnsupportedFeature // MRT rows; v7 never sends them
		}
		var t batchTemplate
		need := 1
		if flags&batchHasExtraInfo != 0 {
			need = 3
		}
		if flags&batchHasGeneration != 0 {
			need += 2
		}
		if flags&batchHasTTL != 0 {
			need += 4
		}
		if len(b) < need+4 {
			return ParameterError
		}
		t.req.info1 = b[0]
		b = b[1:]
		if flags&batchHasExtraInfo != 0 {
			t.req.info2, t.req.info3 = b[0], b[1]
			b = b[2:]
		}
		if flags&batchHasGeneration != 0 {
			t.req.gen = uint32(binary.BigEndian.Uint16(b[0:2]))
			b = b[2:]
		}
		if flags&batchHasTTL != 0 {
			t.req.ttl = binary.BigEndian.Uint32(b[0:4])
			b = b[4:]
		}
		nFields := int(binary.BigEndian.Uint16(b[0:2]))
		nOps := int(binary.BigEndian.Uint16(b[2:4]))
		b = b[4:]
		var err error
		bs.fields = bs.fields[:0]
		if b, err = parseFields(b, nFields, &bs.fields); err != nil {
			return ParameterError
		}
		fieldsToRequest(bs.fields, &t.req, true)
		t.opStart = len(bs.ops)
		if b, err = parseOps(b, nOps, &bs.ops); err != nil {
			return ParameterError
		}
		t.opEnd = len(bs.ops)
		row.tmpl = len(bs.tmpls)
		bs.tmpls = append(bs.tmpls, t)
		bs.rows = append(bs.rows, row)
	}
	if len(b) != 0 {
		return ParameterError
	}
	for i := range bs.tmpls {
		t := &bs.tmpls[i]
		t.req.ops = bs.ops[t.opStart:t.opEnd]
	}
	return OK
}

// handleBatch runs a batch command and streams its per-row replies, ending
// with a LAST message.
func (c *conn) handleBatch(m *message, fieldType byte) error {
	s := c.s
	s.stats.batches.Add(1)
	for _, f := range m.fields {
		switch f.typ {
		case fieldBatchIndex, fieldBatchIndexSet, fieldSocketTimeout, fieldTranID:
		case fieldFilterExp:
			return c.batchFail(UnsupportedFeature)
		default:
			// Unknown field types are skipped, as CE 8.1 does.
		}
	}
	payload, _ := m.field(fieldType)
	bs := &c.batch
	if rc := bs.parse(payload); rc != OK {
		s.stats.malformed.Add(1)
		return c.batchFail(rc)
	}
	var ns []byte
	if len(bs.tmpls) > 0 {
		ns = bs.tmpls[0].req.ns
	}
	act := s.faults.match(OpBatch, ns)
	if act != nil {
		if err := c.applyBefore(act); err != nil {
			return err
		}
		if act.rc != 0 && !act.afterApply {
			return c.batchFail(act.rc)
		}
	}

	out := appendProtoHeader(c.out[:0], protoMsg, 0)
	frameStart := 0
	now := s.now()
	for i := range bs.rows {
		row := &bs.rows[i]
		req := &c.req
		*req = bs.tmpls[row.tmpl].req
		req.digest = row.digest
		kind := req.kind()
		s.stats.batchRecords.Add(1)
		rowAct := s.faults.match(kind, req.ns)
		if rowAct != nil {
			// Rows share the connection: flush what is ready so a delayed or
			// dropped row behaves like a slow or dead server mid-batch.
			c.out = out
			if rowAct.delay > 0 || rowAct.drop {
				putProtoSize(out, frameStart, protoMsg)
				if _, err := c.w.Write(out[frameStart:]); err != nil {
					return err
				}
				out = appendProtoHeader(out[:0], protoMsg, 0)
				frameStart = 0
			}
			if err := c.applyBefore(rowAct); err != nil {
				return err
			}
			if rowAct.rc != 0 && !rowAct.afterApply {
				s.stats.count(kind, rowAct.rc)
				out = appendMsgHeader(out, 0, 0, rowAct.rc, 0, 0, row.index, 0, 0)
				continue
			}
		}
		s.execute(req, now, &c.rep)
		s.stats.count(kind, c.rep.rc)
		rep := &c.rep
		if rowAct != nil && rowAct.afterApply {
			if rowAct.drop {
				return errDropped
			}
			if rowAct.rc != 0 {
				rep.fail(rowAct.rc)
			}
		}
		out = appendMsgHeader(out, 0, 0, rep.rc, rep.gen, rep.voidTime, row.index, 0, len(rep.ops))
		for j := range rep.ops {
			out = appendOpResult(out, &rep.ops[j])
		}
		if len(out)-frameStart >= frameTarget {
			putProtoSize(out, frameStart, protoMsg)
			if _, err := c.w.Write(out[frameStart:]); err != nil {
				return err
			}
			out = appendProtoHeader(out[:0], protoMsg, 0)
			frameStart = 0
		}
	}
	if act != nil && act.afterApply {
		c.out = out
		if act.drop {
			return errDropped
		}
		if act.rc != 0 {
			// The rows ran; the client only sees the batch-level failure.
			return c.batchFail(act.rc)
		}
	}
	out = appendMsgHeader(out, 0, info3Last, OK, 0, 0, 0, 0, 0)
	putProtoSize(out, frameStart, protoMsg)
	c.out = out
	_, err := c.w.Write(out[frameStart:])
	return err
}

// batchFail answers a batch-level error: a frame holding only a LAST message
// with the result code, which the client reports for the whole command.
func (c *conn) batchFail(rc ResultCode) error {
	c.s.stats.errors.Add(1)
	out := appendProtoHeader(c.out[:0], protoMsg, 0)
	out = appendMsgHeader(out, 0, info3Last, rc, 0, 0, 0, 0, 0)
	putProtoSize(out, 0, protoMsg)
	c.out = out
	_, err := c.w.Write(out)
	return err
}
