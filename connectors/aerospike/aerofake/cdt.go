package aerofake

import (
	"encoding/binary"
	"slices"
)

// Map CDT opcodes (client cdt_map.go, server proto.h).
const (
	mapSetType         = 64
	mapAdd             = 65
	mapAddItems        = 66
	mapPut             = 67
	mapPutItems        = 68
	mapReplace         = 69
	mapReplaceItems    = 70
	mapIncrement       = 73
	mapDecrement       = 74
	mapClear           = 75
	mapRemoveByKey     = 76
	mapRemoveByKeyList = 81
	mapSize            = 96
	mapGetByKey        = 97
	mapGetByKeyList    = 107
)

// Map return types.
const (
	rtNone         = 0
	rtIndex        = 1
	rtReverseIndex = 2
	rtCount        = 5
	rtKey          = 6
	rtValue        = 7
	rtKeyValue     = 8
	rtExists       = 13
	rtUnorderedMap = 16
	rtOrderedMap   = 17
)

// Map write flags.
const (
	mapFlagCreateOnly = 1
	mapFlagUpdateOnly = 2
	mapFlagNoFail     = 4
	mapFlagPartial    = 8
)

const mapOrderKey = 0x01 // map attr bit: entries kept in key order

type mapEntry struct {
	key  mapKey
	kraw []byte
	vraw []byte
}

// cdtMap is a decoded map bin. Entries alias the bytes they were decoded from
// until encode copies them into a new bin.
type cdtMap struct {
	flags   byte
	entries []mapEntry // in key order when the map is K-ordered
	// idx locates keys of a large unordered map; nil until first needed and
	// after any change that moves entries.
	idx map[keyID]int
}

func (m *cdtMap) ordered() bool { return m.flags&mapOrderKey != 0 }

// decodeMap decodes a whole MAP particle, including the ordered-map header
// pseudo-pair the server writes for K-ordered maps.
func decodeMap(b []byte) (*cdtMap, error) {
	m := &cdtMap{}
	if err := decodeMapInto(b, m); err != nil {
		return nil, err
	}
	return m, nil
}

// decodeMapInto is decodeMap reusing m's storage.
func decodeMapInto(b []byte, m *cdtMap) error {
	m.flags, m.entries, m.idx = 0, m.entries[:0], nil
	count, off, err := mpMapHeader(b)
	if err != nil {
		return err
	}
	var seen map[keyID]struct{}
	if count > smallMap {
		seen = make(map[keyID]struct{}, min(count, 1<<16))
	}
	for i := 0; i < count; i++ {
		kn, err := mpSkip(b[off:])
		if err != nil {
			return err
		}
		kraw := b[off : off+kn]
		off += kn
		vn, err := mpSkip(b[off:])
		if err != nil {
			return err
		}
		vraw := b[off : off+vn]
		off += vn
		if i == 0 && len(kraw) == 3 && kraw[0] == 0xc7 && kraw[1] == 0 {
			m.flags = kraw[2]
			continue
		}
		k, n, err := mpMapKey(kraw)
		if err != nil || n != len(kraw) {
			return malformed("bad map key")
		}
		if seen != nil {
			id := k.id()
			if _, dup := seen[id]; dup {
				return malformed("duplicate map key")
			}
			seen[id] = struct{}{}
		} else if m.scan(k) >= 0 {
			return malformed("duplicate map key")
		}
		m.entries = append(m.entries, mapEntry{key: k, kraw: kraw, vraw: vraw})
	}
	if off != len(b) {
		return malformed("trailing bytes after map")
	}
	if m.ordered() {
		m.sort()
	}
	return nil
}

// smallMap is the size up to which a linear scan beats building an index.
const smallMap = 16

func cmpKeys(a, b mapKey) int {
	switch {
	case a.less(b):
		return -1
	case b.less(a):
		return 1
	}
	return 0
}

func (m *cdtMap) sort() {
	slices.SortFunc(m.entries, func(a, b mapEntry) int { return cmpKeys(a.key, b.key) })
	m.idx = nil
}

func (m *cdtMap) scan(k mapKey) int {
	for i := range m.entries {
		if m.entries[i].key.equal(k) {
			return i
		}
	}
	return -1
}

// find returns the entry index of k, or -1: binary search in a K-ordered
// map, a hash index in a large unordered one.
func (m *cdtMap) find(k mapKey) int {
	if m.ordered() {
		i, ok := slices.BinarySearchFunc(m.entries, k, func(e mapEntry, k mapKey) int { return cmpKeys(e.key, k) })
		if ok {
			return i
		}
		return -1
	}
	if len(m.entries) <= smallMap {
		return m.scan(k)
	}
	if m.idx == nil {
		m.idx = make(map[keyID]int, len(m.entries))
		for i := range m.entries {
			m.idx[m.entries[i].key.id()] = i
		}
	}
	if i, ok := m.idx[k.id()]; ok {
		return i
	}
	return -1
}

// insert adds an entry whose key is not present yet.
func (m *cdtMap) insert(e mapEntry) {
	if m.ordered() {
		i, _ := slices.BinarySearchFunc(m.entries, e.key, func(e mapEntry, k mapKey) int { return cmpKeys(e.key, k) })
		m.entries = slices.Insert(m.entries, i, e)
		return
	}
	m.entries = append(m.entries, e)
	if m.idx != nil {
		m.idx[e.key.id()] = len(m.entries) - 1
	}
}

// keyRanks returns each entry's position in key order.
func (m *cdtMap) keyRanks() []int {
	ranks := make([]int, len(m.entries))
	if m.ordered() {
		for i := range ranks {
			ranks[i] = i
		}
		return ranks
	}
	order := make([]int, len(m.entries))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return cmpKeys(m.entries[a].key, m.entries[b].key) })
	for pos, i := range order {
		ranks[i] = pos
	}
	return ranks
}

// encode writes the map as a MAP particle into a fresh buffer.
func (m *cdtMap) encode() []byte {
	return encodeEntries(nil, m.entries, m.ordered(), m.flags)
}

func encodeEntries(dst []byte, entries []mapEntry, ordered bool, flags byte) []byte {
	n := len(entries)
	size := 8
	for i := range entries {
		size += len(entries[i].kraw) + len(entries[i].vraw)
	}
	if dst == nil {
		dst = make([]byte, 0, size)
	}
	if ordered {
		dst = appendMPMapHeader(dst, n+1)
		dst = append(dst, 0xc7, 0x00, flags|mapOrderKey, 0xc0)
	} else {
		dst = appendMPMapHeader(dst, n)
	}
	// The real server keeps unordered maps in key order as well; only the
	// header tells them apart.
	if !slices.IsSortedFunc(entries, func(a, b mapEntry) int { return cmpKeys(a.key, b.key) }) {
		entries = slices.Clone(entries)
		slices.SortFunc(entries, func(a, b mapEntry) int { return cmpKeys(a.key, b.key) })
	}
	for i := range entries {
		dst = append(dst, entries[i].kraw...)
		dst = append(dst, entries[i].vraw...)
	}
	return dst
}

// cdtCall is a decoded CDT op payload.
type cdtCall struct {
	opcode int
	params [][]byte // raw msgpack items
}

// scratch is per-connection working memory for the CDT work of one command,
// reused so a map op does not allocate its bookkeeping every time.
type scratch struct {
	call cdtCall
	m    cdtMap
	num  []byte
}

func (s *scratch) reset() { s.num = s.num[:0] }

// int64 returns v as an INTEGER particle backed by the scratch buffer. The
// slice stays valid for the rest of the command (growth reallocates rather
// than overwrites).
func (s *scratch) int64(v int64) []byte {
	s.num = binary.BigEndian.AppendUint64(s.num, uint64(v))
	n := len(s.num)
	return s.num[n-8 : n : n]
}

// parseCDT decodes a CDT op value: either the 16-bit form (u16 opcode, then an
// optional msgpack array of params) or a msgpack array [opcode, params...].
// Contexts ([0xff, ctx, op]) are not supported.
func parseCDT(v []byte, c *cdtCall) ResultCode {
	c.opcode, c.params = 0, c.params[:0]
	if len(v) < 1 {
		return ParameterError
	}
	var rest []byte
	var count int
	if v[0] == 0 {
		if len(v) < 2 {
			return ParameterError
		}
		c.opcode = int(binary.BigEndian.Uint16(v[0:2]))
		rest = v[2:]
		if len(rest) == 0 {
			return OK
		}
		n, hn, err := mpArrayHeader(rest)
		if err != nil {
			return ParameterError
		}
		count, rest = n, rest[hn:]
	} else {
		n, hn, err := mpArrayHeader(v)
		if err != nil || n == 0 {
			return ParameterError
		}
		rest = v[hn:]
		op, on, ok := mpInt(rest)
		if !ok {
			return ParameterError
		}
		if op == 0xff {
			return UnsupportedFeature // nested context
		}
		c.opcode, rest, count = int(op), rest[on:], n-1
	}
	if count > len(rest) {
		return ParameterError
	}
	for i := 0; i < count; i++ {
		n, err := mpSkip(rest)
		if err != nil {
			return ParameterError
		}
		c.params = append(c.params, rest[:n])
		rest = rest[n:]
	}
	if len(rest) != 0 {
		return ParameterError
	}
	return OK
}

func (c *cdtCall) intParam(i int, def int64) (int64, bool) {
	if i >= len(c.params) {
		return def, true
	}
	v, n, ok := mpInt(c.params[i])
	return v, ok && n == len(c.params[i])
}

func isMapRead(opcode int) bool   { return opcode >= 96 && opcode <= 127 }
func isMapModify(opcode int) bool { return opcode >= 64 && opcode < 96 }

// loadMap decodes the map stored in bins[idx] into m (an empty map when
// idx < 0).
func loadMap(bins []bin, idx int, m *cdtMap) (bool, ResultCode) {
	m.flags, m.entries, m.idx = 0, m.entries[:0], nil
	if idx < 0 {
		return false, OK
	}
	if bins[idx].ptype != ptMap {
		return true, BinTypeError
	}
	if err := decodeMapInto(bins[idx].data, m); err != nil {
		return true, ParameterError
	}
	return true, OK
}

// cdtRead runs a CDT_READ op against bins.
func cdtRead(bins []bin, o *op, scr *scratch) (opResult, ResultCode) {
	res := opResult{code: o.code, ptype: ptNull, rawName: o.name}
	c := &scr.call
	if rc := parseCDT(o.value, c); rc != OK {
		return res, rc
	}
	if c.opcode < 64 {
		return res, UnsupportedFeature // list operations
	}
	if !isMapRead(c.opcode) {
		return res, ParameterError
	}
	idx := -1
	for i := range bins {
		if bins[i].name == string(o.name) {
			idx = i
			break
		}
	}
	if idx < 0 {
		return res, OK // missing bin reads as NULL
	}
	m := &scr.m
	if _, rc := loadMap(bins, idx, m); rc != OK {
		return res, rc
	}
	switch c.opcode {
	case mapSize:
		res.ptype, res.data = ptInteger, scr.int64(int64(len(m.entries)))
		return res, OK
	case mapGetByKey, mapGetByKeyList:
		if len(c.params) != 2 {
			return res, ParameterError
		}
		rt, ok := c.intParam(0, 0)
		if !ok {
			return res, ParameterError
		}
		found, rc := m.findParamKeys(c.params[1], c.opcode == mapGetByKeyList)
		if rc != OK {
			return res, rc
		}
		res.ptype, res.data, rc = m.result(int(rt), found, c.opcode == mapGetByKeyList, scr)
		return res, rc
	}
	return res, UnsupportedFeature
}

// findParamKeys returns the entry indexes selected by a key (or key list)
// parameter, in parameter order, skipping keys that are absent.
func (m *cdtMap) findParamKeys(p []byte, list bool) ([]int, ResultCode) {
	if !list {
		k, n, err := mpMapKey(p)
		if err != nil || n != len(p) {
			return nil, ParameterError
		}
		if i := m.find(k); i >= 0 {
			return []int{i}, OK
		}
		return nil, OK
	}
	count, off, err := mpArrayHeader(p)
	if err != nil {
		return nil, ParameterError
	}
	var found []int
	var marked []bool
	for j := 0; j < count; j++ {
		k, n, err := mpMapKey(p[off:])
		if err != nil {
			return nil, ParameterError
		}
		off += n
		if i := m.find(k); i >= 0 {
			if marked == nil {
				marked = make([]bool, len(m.entries))
			}
			if !marked[i] {
				marked[i] = true
				found = append(found, i)
			}
		}
	}
	if off != len(p) {
		return nil, ParameterError
	}
	return found, OK
}

// result encodes the selected entries as the particle for return type rt.
func (m *cdtMap) result(rt int, found []int, multi bool, scr *scratch) (byte, []byte, ResultCode) {
	if rt&0x10000 != 0 {
		return 0, nil, UnsupportedFeature // INVERTED
	}
	switch rt {
	case rtNone:
		return ptNull, nil, OK
	case rtCount:
		return ptInteger, scr.int64(int64(len(found))), OK
	case rtExists:
		if len(found) > 0 {
			return ptBool, []byte{1}, OK
		}
		return ptBool, []byte{0}, OK
	case rtIndex, rtReverseIndex:
		ranks := m.keyRanks()
		idx := func(i int) int64 {
			k := ranks[i]
			if rt == rtReverseIndex {
				k = len(m.entries) - 1 - k
			}
			return int64(k)
		}
		if !multi {
			if len(found) == 0 {
				return ptNull, nil, OK
			}
			return ptInteger, scr.int64(idx(found[0])), OK
		}
		out := appendMPArrayHeader(nil, len(found))
		for _, i := range found {
			out = appendMPInt(out, idx(i))
		}
		return ptList, out, OK
	case rtKey, rtValue:
		pick := func(i int) []byte {
			if rt == rtKey {
				return m.entries[i].kraw
			}
			return m.entries[i].vraw
		}
		if !multi {
			if len(found) == 0 {
				return ptNull, nil, OK
			}
			pt, data, err := mpToParticle(pick(found[0]))
			if err != nil {
				return 0, nil, ParameterError
			}
			return pt, cloneIfAliased(data), OK
		}
		out := appendMPArrayHeader(nil, len(found))
		for _, i := range found {
			out = append(out, pick(i)...)
		}
		return ptList, out, OK
	case rtKeyValue, rtUnorderedMap, rtOrderedMap:
		sel := make([]mapEntry, 0, len(found))
		for _, i := range found {
			sel = append(sel, m.entries[i])
		}
		// KEY_VALUE answers key-ordered pairs whatever the map's order
		// (real CE 8.1); the Go client returns them as []MapPair.
		ordered := rt == rtOrderedMap || rt == rtKeyValue
		return ptMap, encodeEntries(nil, sel, ordered, m.flags&^mapOrderKey), OK
	}
	return 0, nil, UnsupportedFeature
}

// cloneIfAliased copies particle data taken from a map's bytes so a reply
// never aliases a buffer that may be reused.
func cloneIfAliased(b []byte) []byte { return append([]byte(nil), b...) }

// cdtModify runs a CDT_MODIFY op: it decodes the bin's map, applies the op,
// and stores the re-encoded map.
func cdtModify(bins []bin, idx int, o *op, scr *scratch) ([]bin, opResult, ResultCode) {
	res := opResult{code: o.code, ptype: ptNull, rawName: o.name}
	c := &scr.call
	if rc := parseCDT(o.value, c); rc != OK {
		return bins, res, rc
	}
	if c.opcode < 64 {
		return listModify(bins, idx, o, c, scr)
	}
	if !isMapModify(c.opcode) {
		return bins, res, ParameterError
	}
	m := &scr.m
	exists, rc := loadMap(bins, idx, m)
	if rc != OK {
		return bins, res, rc
	}
	mo := mapModify{c: c, m: m, exists: exists, res: &res, scr: scr}
	var out *cdtMap
	switch c.opcode {
	case mapSetType:
		out, rc = mo.setType()
	case mapPut, mapAdd, mapReplace:
		out, rc = mo.put()
	case mapPutItems, mapAddItems, mapReplaceItems:
		out, rc = mo.putItems()
	case mapIncrement, mapDecrement:
		out, rc = mo.increment()
	case mapClear:
		out, rc = mo.clear()
	case mapRemoveByKey, mapRemoveByKeyList:
		out, rc = mo.removeByKey()
	default:
		return bins, res, UnsupportedFeature
	}
	if rc != OK || out == nil {
		return bins, res, rc
	}
	nb := bin{name: binName(bins, idx, o), ptype: ptMap, data: out.encode()}
	return setBin(bins, idx, nb), res, OK
}

// mapModify is one map-modify op against the bin's map m (exists: the bin
// held a map). Each op returns the map to store, or nil when the bin stays
// as it was, and sets the op's reply in res.
type mapModify struct {
	c      *cdtCall
	m      *cdtMap
	exists bool
	res    *opResult
	scr    *scratch
}

func (mo mapModify) setType() (*cdtMap, ResultCode) {
	c, m := mo.c, mo.m
	attr, ok := c.intParam(0, 0)
	if !ok || len(c.params) != 1 {
		return nil, ParameterError
	}
	m.flags = byte(attr)
	m.sort() // key order for an ordered map; harmless otherwise
	return m, OK
}

// createAttr gives a map that the op creates the order attribute of
// parameter i (none for a replace, which creates nothing).
func (mo mapModify) createAttr(i int, replace bool) {
	if mo.exists {
		return
	}
	attr, _ := mo.c.intParam(i, 0)
	if replace {
		attr = 0
	}
	mo.m.flags = byte(attr)
}

func (mo mapModify) put() (*cdtMap, ResultCode) {
	c, m := mo.c, mo.m
	if len(c.params) < 2 || len(c.params) > 4 {
		return nil, ParameterError
	}
	flags, rc := putFlags(c, c.opcode, 3)
	if rc != OK {
		return nil, rc
	}
	mo.createAttr(2, c.opcode == mapReplace)
	k, n, err := mpMapKey(c.params[0])
	if err != nil || n != len(c.params[0]) {
		return nil, ParameterError
	}
	ok, rc := m.put(k, c.params[0], mpSortMaps(c.params[1]), flags)
	if rc != OK {
		return nil, rc
	}
	mo.res.ptype, mo.res.data = ptInteger, mo.scr.int64(int64(len(m.entries)))
	if !ok && mo.exists {
		return nil, OK
	}
	return m, OK
}

func (mo mapModify) putItems() (*cdtMap, ResultCode) {
	c, m := mo.c, mo.m
	if len(c.params) < 1 || len(c.params) > 3 {
		return nil, ParameterError
	}
	flags, rc := putFlags(c, c.opcode, 2)
	if rc != OK {
		return nil, rc
	}
	mo.createAttr(1, c.opcode == mapReplaceItems)
	items, err := decodeMap(mpSortMaps(c.params[0]))
	if err != nil {
		return nil, ParameterError
	}
	// Without PARTIAL a denied item (tolerated by NO_FAIL) leaves the
	// whole op unapplied, so work on a copy.
	work := &cdtMap{flags: m.flags, entries: slices.Clone(m.entries)}
	denied := false
	for _, e := range items.entries {
		ok, rc := work.put(e.key, e.kraw, e.vraw, flags)
		if rc != OK {
			return nil, rc
		}
		denied = denied || !ok
	}
	if !denied || flags&mapFlagPartial != 0 {
		m = work
	}
	mo.res.ptype, mo.res.data = ptInteger, mo.scr.int64(int64(len(m.entries)))
	return m, OK
}

func (mo mapModify) increment() (*cdtMap, ResultCode) {
	c, m := mo.c, mo.m
	if len(c.params) < 1 || len(c.params) > 4 {
		return nil, ParameterError
	}
	mo.createAttr(2, false)
	k, n, err := mpMapKey(c.params[0])
	if err != nil || n != len(c.params[0]) {
		return nil, ParameterError
	}
	delta := []byte{0x01}
	if len(c.params) >= 2 {
		delta = c.params[1]
	}
	val, rc := m.increment(k, c.params[0], delta, c.opcode == mapDecrement)
	if rc != OK {
		return nil, rc
	}
	pt, data, err := mpToParticle(val)
	if err != nil {
		return nil, ParameterError
	}
	mo.res.ptype, mo.res.data = pt, data
	return m, OK
}

func (mo mapModify) clear() (*cdtMap, ResultCode) {
	if len(mo.c.params) != 0 {
		return nil, ParameterError
	}
	if !mo.exists {
		return nil, OK
	}
	mo.m.entries, mo.m.idx = mo.m.entries[:0], nil
	return mo.m, OK
}

func (mo mapModify) removeByKey() (*cdtMap, ResultCode) {
	c, m := mo.c, mo.m
	if len(c.params) != 2 {
		return nil, ParameterError
	}
	rt, ok := c.intParam(0, 0)
	if !ok {
		return nil, ParameterError
	}
	list := c.opcode == mapRemoveByKeyList
	found, rc := m.findParamKeys(c.params[1], list)
	if rc != OK {
		return nil, rc
	}
	mo.res.ptype, mo.res.data, rc = m.result(int(rt), found, list, mo.scr)
	if rc != OK || len(found) == 0 {
		return nil, rc
	}
	drop := make([]bool, len(m.entries))
	for _, i := range found {
		drop[i] = true
	}
	keep := make([]mapEntry, 0, len(m.entries)-len(found))
	for i, e := range m.entries {
		if !drop[i] {
			keep = append(keep, e)
		}
	}
	m.entries, m.idx = keep, nil
	return m, OK
}

// putFlags derives the write flags of a put-style op; flagsAt is the index of
// the optional flags parameter.
func putFlags(c *cdtCall, opcode, flagsAt int) (int64, ResultCode) {
	flags, ok := c.intParam(flagsAt, 0)
	if !ok {
		return 0, ParameterError
	}
	switch opcode {
	case mapAdd, mapAddItems:
		flags |= mapFlagCreateOnly
	case mapReplace, mapReplaceItems:
		flags |= mapFlagUpdateOnly
	}
	return flags, OK
}

// put writes one entry under the write flags. It reports false when the item
// was denied but NO_FAIL tolerated it.
func (m *cdtMap) put(k mapKey, kraw, vraw []byte, flags int64) (bool, ResultCode) {
	if _, err := mpSkip(vraw); err != nil {
		return false, ParameterError
	}
	i := m.find(k)
	switch {
	case i >= 0 && flags&mapFlagCreateOnly != 0:
		if flags&mapFlagNoFail != 0 {
			return false, OK
		}
		return false, ElementExists
	case i < 0 && flags&mapFlagUpdateOnly != 0:
		if flags&mapFlagNoFail != 0 {
			return false, OK
		}
		return false, ElementNotFound
	case i >= 0:
		m.entries[i].vraw = vraw
	default:
		m.insert(mapEntry{key: k, kraw: kraw, vraw: vraw})
	}
	return true, OK
}

// increment adds delta to the numeric value under k (creating it from 0) and
// returns the new value's msgpack bytes.
func (m *cdtMap) increment(k mapKey, kraw, delta []byte, negate bool) ([]byte, ResultCode) {
	di, dn, dIsInt := mpInt(delta)
	df, fn, dIsFloat := mpFloat(delta)
	switch {
	case dIsInt && dn == len(delta):
	case dIsFloat && fn == len(delta):
	default:
		return nil, ParameterError
	}
	if negate {
		di, df = -di, -df
	}
	var out []byte
	i := m.find(k)
	switch {
	case i < 0 && dIsInt:
		out = appendMPInt(nil, di)
	case i < 0:
		out = appendMPFloat(nil, df)
	default:
		v := m.entries[i].vraw
		if cur, n, ok := mpInt(v); ok && n == len(v) {
			if dIsFloat {
				di = int64(df)
			}
			out = appendMPInt(nil, cur+di)
		} else if cur, n, ok := mpFloat(v); ok && n == len(v) {
			if dIsInt {
				df = float64(di)
			}
			out = appendMPFloat(nil, cur+df)
		} else {
			return nil, ParameterError
		}
	}
	if i >= 0 {
		m.entries[i].vraw = out
	} else {
		m.insert(mapEntry{key: k, kraw: kraw, vraw: out})
	}
	return out, OK
}
