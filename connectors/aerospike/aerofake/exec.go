package aerofake

import (
	"bytes"
	"encoding/binary"
	"math"
	"time"
)

// TTL values with special meaning in the record_ttl header field.
const (
	ttlNamespaceDefault = 0
	ttlNeverExpire      = 0xFFFFFFFF
	ttlDontUpdate       = 0xFFFFFFFE
	maxTTLSeconds       = 315360000 // 10 years
)

// request is one single-record command, either a whole AS_MSG or one row of a
// batch. Slices alias the request frame.
type request struct {
	info1, info2, info3 byte
	gen                 uint32
	ttl                 uint32
	ns                  []byte
	set                 []byte
	hasSet              bool
	digest              [20]byte
	key                 []byte
	ops                 []op
	rc                  ResultCode // non-zero when building the request already failed
}

// kind classifies the request for stats and fault matching.
func (r *request) kind() OpKind {
	if r.info2&info2Write == 0 {
		return OpRead
	}
	if r.info2&info2Delete != 0 {
		return OpDelete
	}
	return OpWrite
}

// opResult is one op of a reply. data may alias stored (immutable) bin data.
// The bin name is either name or, to save an allocation per op, rawName
// aliasing the request.
type opResult struct {
	code    byte
	ptype   byte
	name    string
	rawName []byte
	data    []byte
}

func appendOpResult(dst []byte, r *opResult) []byte {
	if r.rawName != nil {
		dst = binary.BigEndian.AppendUint32(dst, uint32(4+len(r.rawName)+len(r.data)))
		dst = append(dst, r.code, r.ptype, 0, byte(len(r.rawName)))
		dst = append(dst, r.rawName...)
		return append(dst, r.data...)
	}
	return appendOp(dst, r.code, r.ptype, r.name, r.data)
}

// binName is the name for a bin written by o: the stored string when the bin
// exists, a new one otherwise.
func binName(bins []bin, idx int, o *op) string {
	if idx >= 0 {
		return bins[idx].name
	}
	return string(o.name)
}

// reply is the outcome of a single-record command.
type reply struct {
	rc       ResultCode
	gen      uint32
	voidTime uint32
	ops      []opResult
	scr      scratch
}

func (rep *reply) reset() {
	rep.rc, rep.gen, rep.voidTime = 0, 0, 0
	rep.ops = rep.ops[:0]
	rep.scr.reset()
}

func (rep *reply) fail(rc ResultCode) {
	rep.rc, rep.gen, rep.voidTime = rc, 0, 0
	rep.ops = rep.ops[:0]
}

// fieldsToRequest fills req's namespace, set, digest and key from AS_MSG
// fields and rejects fields this server does not support. Batch rows carry
// their digest outside the fields, so they pass haveDigest=true.
func fieldsToRequest(fields []field, req *request, haveDigest bool) {
	haveNS := false
	for _, f := range fields {
		switch f.typ {
		case fieldNamespace:
			req.ns, haveNS = f.data, true
		case fieldSet:
			req.set, req.hasSet = f.data, len(f.data) > 0
		case fieldDigest:
			if len(f.data) != 20 {
				req.rc = ParameterError
				return
			}
			copy(req.digest[:], f.data)
			haveDigest = true
		case fieldKey:
			if len(f.data) < 1 {
				req.rc = ParameterError
				return
			}
			req.key = f.data
		case fieldTranID, fieldSocketTimeout, fieldRecordsPerSecond:
			// Scheduling hints; nothing to do for an in-memory node.
		case fieldFilterExp, fieldUDFFilename, fieldUDFFunction, fieldUDFArglist, fieldUDFOp,
			fieldMRTID, fieldMRTDeadline, fieldRecordVersion:
			req.rc = UnsupportedFeature
			return
		default:
			// CE 8.1 skips fields it has no use for on a single-record
			// command, unknown types included.
		}
	}
	switch {
	case !haveNS:
		req.rc = InvalidNamespace // CE 8.1: no namespace field is an unknown namespace
	case !haveDigest:
		req.rc = ParameterError
	}
}

// clock reads the server's notion of now once per command.
type clock struct {
	nanos int64  // Unix nanoseconds
	cl    uint32 // seconds since the citrusleaf epoch
}

// execute runs one single-record command against the store.
func (s *Server) execute(req *request, now clock, rep *reply) {
	rep.reset()
	if req.rc != 0 {
		rep.fail(req.rc)
		return
	}
	ns := s.namespaces[string(req.ns)]
	if ns == nil {
		rep.fail(InvalidNamespace)
		return
	}
	for i := range req.ops {
		if len(req.ops[i].name) > maxBinNameLen {
			rep.fail(BinNameTooLong)
			return
		}
	}
	p := &ns.parts[partitionID(&req.digest)]
	if req.info2&info2Write == 0 {
		s.executeRead(ns, p, req, now, rep)
		return
	}
	if req.info2&info2Delete != 0 {
		s.executeDelete(p, req, now, rep)
		return
	}
	s.executeWrite(ns, p, req, now, rep)
}

func setMismatch(r *record, req *request) bool {
	return req.hasSet && r.set != string(req.set)
}

func (s *Server) executeRead(ns *namespace, p *partition, req *request, now clock, rep *reply) {
	if req.info1&info1Read == 0 {
		rep.fail(ParameterError)
		return
	}
	noBins := req.info1&info1NoBinData != 0
	getAll := req.info1&info1GetAll != 0
	if !noBins && !getAll && len(req.ops) == 0 {
		rep.fail(ParameterError)
		return
	}
	for i := range req.ops {
		switch req.ops[i].code {
		case opRead, opCDTRead:
		case opExpRead, opBitsRead, opHLLRead:
			rep.fail(UnsupportedFeature)
			return
		default:
			rep.fail(ParameterError)
			return
		}
	}
	p.mu.Lock()
	r := p.lookup(&req.digest, now.cl)
	p.mu.Unlock()
	if r == nil {
		rep.fail(KeyNotFound)
		return
	}
	if setMismatch(r, req) {
		rep.fail(ParameterError)
		return
	}
	rep.gen, rep.voidTime = uint32(r.gen), r.voidTime
	if noBins {
		return
	}
	respondAll := req.info2&info2RespondAllOps != 0
	if len(req.ops) == 0 {
		for _, b := range r.bins {
			rep.ops = append(rep.ops, opResult{code: opRead, ptype: b.ptype, name: b.name, data: b.data})
		}
		return
	}
	for i := range req.ops {
		o := &req.ops[i]
		if o.code == opCDTRead {
			res, rc := cdtRead(r.bins, o, &rep.scr)
			if rc != OK {
				rep.fail(rc)
				return
			}
			if res.ptype != ptNull || respondAll {
				rep.ops = append(rep.ops, res)
			}
			continue
		}
		rep.ops = appendReadResult(rep.ops, r.bins, o, getAll, respondAll)
	}
}

// appendReadResult emits the results of one READ op: every bin for a
// read-all, the named bin if present, or a NULL op under RESPOND_ALL_OPS.
func appendReadResult(dst []opResult, bins []bin, o *op, getAll, respondAll bool) []opResult {
	if len(o.name) == 0 {
		if getAll {
			for _, b := range bins {
				dst = append(dst, opResult{code: opRead, ptype: b.ptype, name: b.name, data: b.data})
			}
		}
		return dst
	}
	for _, b := range bins {
		if b.name == string(o.name) {
			return append(dst, opResult{code: opRead, ptype: b.ptype, name: b.name, data: b.data})
		}
	}
	if respondAll {
		dst = append(dst, opResult{code: opRead, ptype: ptNull, rawName: o.name})
	}
	return dst
}

// checkGeneration applies the generation policy against the current
// generation (0 for a record that does not exist).
func checkGeneration(req *request, cur uint16) bool {
	switch {
	case req.info2&info2Generation != 0:
		return req.gen == uint32(cur)
	case req.info2&info2GenerationGT != 0:
		return req.gen > uint32(cur)
	}
	return true
}

func (s *Server) executeDelete(p *partition, req *request, now clock, rep *reply) {
	if req.info2&info2DurableDelete != 0 {
		rep.fail(EnterpriseOnly) // durable deletes are an EE feature
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	r := p.lookup(&req.digest, now.cl)
	if r == nil {
		rep.fail(KeyNotFound)
		return
	}
	if setMismatch(r, req) || (!req.hasSet && r.set != "") {
		rep.fail(ParameterError)
		return
	}
	if !checkGeneration(req, r.gen) {
		rep.fail(GenerationError)
		return
	}
	// CE keeps no tombstone: a re-created record starts again at generation 1.
	p.remove(&req.digest)
}

// writeOpsCheck validates a write's op list before touching the record.
func writeOpsCheck(req *request) ResultCode {
	if len(req.ops) == 0 {
		return ParameterError
	}
	replacing := req.info3&(info3CreateOrReplace|info3ReplaceOnly) != 0
	respondAll := req.info2&info2RespondAllOps != 0
	for i := range req.ops {
		o := &req.ops[i]
		switch o.code {
		case opRead:
			if req.info1&info1Read == 0 {
				return ParameterError
			}
			if len(o.name) == 0 && respondAll {
				return ParameterError
			}
		case opCDTRead:
			if req.info1&info1Read == 0 {
				return ParameterError
			}
		case opWrite:
			if o.ptype == ptNull && replacing {
				return ParameterError
			}
			if rc := checkWriteParticle(o.ptype, o.value); rc != OK {
				return rc
			}
		case opIncr, opAppend, opPrepend, opCDTModify, opDeleteAll, opTouch:
			// A replace accepts only bin writes; CE 8.1 refuses the rest
			// (a touch included) before looking at the record.
			if replacing {
				return ParameterError
			}
		case opExpRead, opExpModify, opBitsRead, opBitsModify, opHLLRead, opHLLModify:
			return UnsupportedFeature
		default:
			return ParameterError
		}
	}
	return OK
}

// checkWriteParticle validates a WRITE op's value.
func checkWriteParticle(ptype byte, v []byte) ResultCode {
	switch ptype {
	case ptNull, ptString, ptBlob, ptHLL:
		return OK
	case ptInteger:
		switch len(v) {
		case 1, 2, 4, 8:
			return OK
		}
	case ptFloat:
		if len(v) == 8 {
			return OK
		}
	case ptBool:
		if len(v) == 1 {
			return OK
		}
	case ptGeoJSON:
		if len(v) >= 3 {
			ncells := int(binary.BigEndian.Uint16(v[1:3]))
			if 3+ncells*8 <= len(v) {
				return OK
			}
		}
	case ptMap:
		if _, err := decodeMap(v); err == nil {
			return OK
		}
		// CE 8.1 answers a map particle it cannot parse with SERVER_ERROR,
		// not PARAMETER_ERROR (recorded against the real server).
		return ServerError
	case ptList:
		if _, hn, err := mpArrayHeader(v); err == nil && hn > 0 {
			if n, err := mpSkip(v); err == nil && n == len(v) {
				return OK
			}
		}
	}
	return ParameterError
}

// normalizeParticle returns the stored form of a WRITE/INCR value, copied out
// of the request buffer.
func normalizeParticle(ptype byte, v []byte) []byte {
	if ptype == ptInteger && len(v) != 8 {
		return binary.BigEndian.AppendUint64(nil, uint64(beInt(v)))
	}
	if ptype == ptMap || ptype == ptList {
		return mpSortMaps(v)
	}
	return bytes.Clone(v)
}

// beInt decodes a 1, 2, 4 or 8 byte big-endian signed integer.
func beInt(v []byte) int64 {
	switch len(v) {
	case 1:
		return int64(int8(v[0]))
	case 2:
		return int64(int16(binary.BigEndian.Uint16(v)))
	case 4:
		return int64(int32(binary.BigEndian.Uint32(v)))
	case 8:
		return int64(binary.BigEndian.Uint64(v))
	}
	return 0
}

// voidTimeFor applies the TTL rules of a write. exists and oldVoid describe the
// current record.
func voidTimeFor(cfg *NamespaceConfig, ttl uint32, exists bool, oldVoid uint32, now uint32) (uint32, ResultCode) {
	switch {
	case ttl == ttlNeverExpire:
		return 0, OK
	case ttl == ttlDontUpdate && exists:
		return oldVoid, OK
	case ttl == ttlDontUpdate || ttl == ttlNamespaceDefault:
		if cfg.DefaultTTL == 0 {
			return 0, OK
		}
		ttl = uint32(cfg.DefaultTTL / time.Second)
	case ttl > maxTTLSeconds:
		return 0, ParameterError
	}
	if !cfg.AllowTTL {
		// A stock namespace (nsup-period 0, allow-ttl-without-nsup false)
		// refuses records that would expire.
		return 0, FailForbidden
	}
	return now + ttl, OK
}

func (s *Server) executeWrite(ns *namespace, p *partition, req *request, now clock, rep *reply) {
	if rc := writeOpsCheck(req); rc != OK {
		rep.fail(rc)
		return
	}
	mustNotCreate := req.info3&(info3UpdateOnly|info3ReplaceOnly) != 0
	for i := range req.ops {
		if req.ops[i].code == opTouch {
			mustNotCreate = true
		}
	}

	p.mu.Lock()
	defer p.mu.Unlock()
	old := p.lookup(&req.digest, now.cl)
	var curGen uint16
	if old != nil {
		curGen = old.gen
	}
	if rc := writeAllowed(req, old, curGen, mustNotCreate); rc != OK {
		rep.fail(rc)
		return
	}
	var oldVoid uint32
	if old != nil {
		oldVoid = old.voidTime
	}
	voidTime, rc := voidTimeFor(&ns.cfg, req.ttl, old != nil, oldVoid, now.cl)
	if rc != OK {
		rep.fail(rc)
		return
	}

	// The new record is allocated up front so small bin sets live in its
	// inline array: one allocation for record and bins.
	nr := &record{}
	bins := nr.inline[:0]
	if old != nil && req.info3&(info3CreateOrReplace|info3ReplaceOnly) == 0 {
		if n := len(old.bins) + len(req.ops); n > len(nr.inline) {
			bins = make([]bin, 0, n)
		}
		bins = append(bins, old.bins...)
	} else if len(req.ops) > len(nr.inline) {
		bins = make([]bin, 0, len(req.ops))
	}
	getAll := req.info1&info1GetAll != 0
	respondAll := req.info2&info2RespondAllOps != 0
	for i := range req.ops {
		o := &req.ops[i]
		var rc ResultCode
		bins, rc = s.applyWriteOp(bins, o, getAll, respondAll, rep)
		if rc != OK {
			rep.fail(rc)
			return
		}
	}

	if len(bins) == 0 {
		// A write that leaves no bins deletes the record; there must have
		// been one to delete.
		if old == nil || len(old.bins) == 0 {
			rep.fail(KeyNotFound)
			return
		}
		if req.info2&info2DurableDelete != 0 {
			rep.fail(EnterpriseOnly)
			return
		}
		p.remove(&req.digest)
		rep.gen, rep.voidTime = 0, 0
		return
	}

	nr.bins, nr.gen, nr.voidTime, nr.lut = bins, nextGeneration(curGen), voidTime, now.nanos
	if old != nil {
		nr.set, nr.key = old.set, old.key
	} else {
		nr.set = string(req.set)
	}
	if nr.key == nil && req.key != nil {
		nr.key = bytes.Clone(req.key)
	}
	if nr.size() > s.cfg.MaxRecordSize {
		rep.fail(RecordTooBig)
		return
	}
	p.store(&req.digest, nr)
	rep.gen, rep.voidTime = uint32(nr.gen), nr.voidTime
}

// writeAllowed checks a write against the record it finds (old, nil when
// there is none; curGen its generation): existence policy, generation, set
// and stored key.
func writeAllowed(req *request, old *record, curGen uint16, mustNotCreate bool) ResultCode {
	if old == nil && mustNotCreate {
		return KeyNotFound
	}
	if old != nil && req.info2&info2CreateOnly != 0 {
		return KeyExists
	}
	if !checkGeneration(req, curGen) {
		return GenerationError
	}
	if old == nil {
		return OK
	}
	if old.set != "" && string(req.set) != old.set {
		return ParameterError
	}
	if req.key != nil && old.key != nil && !bytes.Equal(req.key, old.key) {
		return KeyMismatch
	}
	return OK
}

// applyWriteOp applies one op of a write to bins and records its result.
func (s *Server) applyWriteOp(bins []bin, o *op, getAll, respondAll bool, rep *reply) ([]bin, ResultCode) {
	idx := -1
	for i := range bins {
		if bins[i].name == string(o.name) {
			idx = i
			break
		}
	}
	switch o.code {
	case opRead:
		rep.ops = appendReadResult(rep.ops, bins, o, getAll, respondAll)
	case opWrite:
		if o.ptype == ptNull {
			if idx >= 0 {
				bins = append(bins[:idx], bins[idx+1:]...)
			}
		} else {
			b := bin{name: binName(bins, idx, o), ptype: o.ptype, data: normalizeParticle(o.ptype, o.value)}
			bins = setBin(bins, idx, b)
		}
		if respondAll {
			rep.ops = append(rep.ops, opResult{code: o.code, ptype: ptNull, rawName: o.name})
		}
	case opIncr:
		nb, rc := incrBin(bins, idx, o)
		if rc != OK {
			return bins, rc
		}
		bins = setBin(bins, idx, nb)
		if respondAll {
			rep.ops = append(rep.ops, opResult{code: o.code, ptype: ptNull, rawName: o.name})
		}
	case opAppend, opPrepend:
		if o.ptype != ptString && o.ptype != ptBlob {
			return bins, BinTypeError
		}
		var data []byte
		switch {
		case idx < 0:
			data = bytes.Clone(o.value)
		case bins[idx].ptype != o.ptype:
			return bins, BinTypeError
		case o.code == opAppend:
			data = append(append(make([]byte, 0, len(bins[idx].data)+len(o.value)), bins[idx].data...), o.value...)
		default:
			data = append(append(make([]byte, 0, len(bins[idx].data)+len(o.value)), o.value...), bins[idx].data...)
		}
		bins = setBin(bins, idx, bin{name: binName(bins, idx, o), ptype: o.ptype, data: data})
		if respondAll {
			rep.ops = append(rep.ops, opResult{code: o.code, ptype: ptNull, rawName: o.name})
		}
	case opTouch:
		if respondAll {
			rep.ops = append(rep.ops, opResult{code: o.code, ptype: ptNull, rawName: o.name})
		}
	case opDeleteAll:
		bins = bins[:0]
		if respondAll {
			rep.ops = append(rep.ops, opResult{code: o.code, ptype: ptNull, rawName: o.name})
		}
	case opCDTRead:
		res, rc := cdtRead(bins, o, &rep.scr)
		if rc != OK {
			return bins, rc
		}
		if res.ptype != ptNull || respondAll {
			rep.ops = append(rep.ops, res)
		}
	case opCDTModify:
		var res opResult
		var rc ResultCode
		bins, res, rc = cdtModify(bins, idx, o, &rep.scr)
		if rc != OK {
			return bins, rc
		}
		if res.ptype != ptNull || respondAll {
			rep.ops = append(rep.ops, res)
		}
	}
	return bins, OK
}

func setBin(bins []bin, idx int, b bin) []bin {
	if idx >= 0 {
		bins[idx] = b
		return bins
	}
	return append(bins, b)
}

// incrBin computes the bin after an INCR op.
func incrBin(bins []bin, idx int, o *op) (bin, ResultCode) {
	var isFloat bool
	var di int64
	var df float64
	switch {
	case o.ptype == ptInteger && (len(o.value) == 1 || len(o.value) == 2 || len(o.value) == 4 || len(o.value) == 8):
		di = beInt(o.value)
	case o.ptype == ptFloat && len(o.value) == 8:
		isFloat = true
		df = math.Float64frombits(binary.BigEndian.Uint64(o.value))
	default:
		return bin{}, ParameterError
	}
	name := binName(bins, idx, o)
	if idx < 0 {
		return bin{name: name, ptype: o.ptype, data: normalizeParticle(o.ptype, o.value)}, OK
	}
	cur := bins[idx]
	switch {
	case !isFloat && cur.ptype == ptInteger && len(cur.data) == 8:
		v := int64(binary.BigEndian.Uint64(cur.data)) + di // wraps like the server
		return bin{name: name, ptype: ptInteger, data: binary.BigEndian.AppendUint64(nil, uint64(v))}, OK
	case isFloat && cur.ptype == ptFloat && len(cur.data) == 8:
		v := math.Float64frombits(binary.BigEndian.Uint64(cur.data)) + df
		return bin{name: name, ptype: ptFloat, data: binary.BigEndian.AppendUint64(nil, math.Float64bits(v))}, OK
	}
	return bin{}, BinTypeError
}
