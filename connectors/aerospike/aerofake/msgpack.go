package aerofake

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
)

// Aerospike stores list and map bins as msgpack. Strings and blobs inside
// msgpack carry a leading particle-type byte (0x03 string, 0x04 blob, 0x17
// GeoJSON) counted in the str length. This file holds a small, defensive
// msgpack reader and writer for that dialect; every reader bounds-checks and
// returns an error instead of panicking.

// maxMsgpackDepth bounds nesting so hostile input cannot exhaust the stack.
const maxMsgpackDepth = 32

var errMsgpack = malformed("invalid msgpack")

// mpSkip returns the encoded length of the msgpack object at the start of b.
func mpSkip(b []byte) (int, error) { return mpSkipDepth(b, 0) }

func mpSkipDepth(b []byte, depth int) (int, error) {
	if depth > maxMsgpackDepth {
		return 0, malformed("msgpack nested deeper than %d", maxMsgpackDepth)
	}
	if len(b) == 0 {
		return 0, errMsgpack
	}
	t := b[0]
	switch {
	case t <= 0x7f || t >= 0xe0 || t == 0xc0 || t == 0xc2 || t == 0xc3:
		return 1, nil
	case t >= 0x80 && t <= 0x8f:
		return mpSkipItems(b, 1, uint64(t&0x0f)*2, depth)
	case t >= 0x90 && t <= 0x9f:
		return mpSkipItems(b, 1, uint64(t&0x0f), depth)
	case t >= 0xa0 && t <= 0xbf:
		return mpFixed(b, 1+int(t&0x1f))
	}
	switch t {
	case 0xc4, 0xd9: // bin 8, str 8
		return mpSized(b, 1)
	case 0xc5, 0xda: // bin 16, str 16
		return mpSized(b, 2)
	case 0xc6, 0xdb: // bin 32, str 32
		return mpSized(b, 4)
	case 0xc7: // ext 8
		return mpExt(b, 1)
	case 0xc8: // ext 16
		return mpExt(b, 2)
	case 0xc9: // ext 32
		return mpExt(b, 4)
	case 0xca, 0xce, 0xd2: // float 32, uint 32, int 32
		return mpFixed(b, 5)
	case 0xcb, 0xcf, 0xd3: // float 64, uint 64, int 64
		return mpFixed(b, 9)
	case 0xcc, 0xd0: // uint 8, int 8
		return mpFixed(b, 2)
	case 0xcd, 0xd1: // uint 16, int 16
		return mpFixed(b, 3)
	case 0xd4, 0xd5, 0xd6, 0xd7, 0xd8: // fixext 1, 2, 4, 8, 16: type, ext type, data
		return mpFixed(b, 2+1<<(t-0xd4))
	case 0xdc: // array 16
		return mpSkipCollection(b, 2, 1, depth)
	case 0xdd: // array 32
		return mpSkipCollection(b, 4, 1, depth)
	case 0xde: // map 16
		return mpSkipCollection(b, 2, 2, depth)
	case 0xdf: // map 32
		return mpSkipCollection(b, 4, 2, depth)
	}
	return 0, errMsgpack // 0xc1 is never used
}

// mpExt skips an ext object with a hdr-byte length: after the length
// comes the ext type byte, then the data.
func mpExt(b []byte, hdr int) (int, error) {
	n, err := mpSized(b, hdr)
	return n + 1, mpCheck(b, n+1, err)
}

// mpSkipCollection skips an array or map whose item count is a hdr-byte
// number after the type; a map entry is per items (2) objects.
func mpSkipCollection(b []byte, hdr int, per uint64, depth int) (int, error) {
	if len(b) < 1+hdr {
		return 0, errMsgpack
	}
	var n uint64
	if hdr == 2 {
		n = uint64(binary.BigEndian.Uint16(b[1:3]))
	} else {
		n = uint64(binary.BigEndian.Uint32(b[1:5]))
	}
	return mpSkipItems(b, 1+hdr, n*per, depth)
}

func mpCheck(b []byte, n int, err error) error {
	if err != nil {
		return err
	}
	if n > len(b) {
		return errMsgpack
	}
	return nil
}

func mpFixed(b []byte, n int) (int, error) {
	if len(b) < n {
		return 0, errMsgpack
	}
	return n, nil
}

// mpSized handles str/bin/ext headers with a hdr-byte length after the type.
func mpSized(b []byte, hdr int) (int, error) {
	if len(b) < 1+hdr {
		return 0, errMsgpack
	}
	var n uint64
	switch hdr {
	case 1:
		n = uint64(b[1])
	case 2:
		n = uint64(binary.BigEndian.Uint16(b[1:3]))
	default:
		n = uint64(binary.BigEndian.Uint32(b[1:5]))
	}
	if n > uint64(len(b)-1-hdr) {
		return 0, errMsgpack
	}
	return 1 + hdr + int(n), nil
}

func mpSkipItems(b []byte, off int, n uint64, depth int) (int, error) {
	if n > uint64(len(b)) { // every item takes at least one byte
		return 0, errMsgpack
	}
	for i := uint64(0); i < n; i++ {
		k, err := mpSkipDepth(b[off:], depth+1)
		if err != nil {
			return 0, err
		}
		off += k
	}
	return off, nil
}

// mpArrayHeader reads an array header and returns the element count and the
// header length.
func mpArrayHeader(b []byte) (count, n int, err error) {
	if len(b) == 0 {
		return 0, 0, errMsgpack
	}
	switch t := b[0]; {
	case t >= 0x90 && t <= 0x9f:
		return int(t & 0x0f), 1, nil
	case t == 0xdc && len(b) >= 3:
		return int(binary.BigEndian.Uint16(b[1:3])), 3, nil
	case t == 0xdd && len(b) >= 5:
		c := binary.BigEndian.Uint32(b[1:5])
		if uint64(c) > uint64(len(b)) {
			return 0, 0, errMsgpack
		}
		return int(c), 5, nil
	}
	return 0, 0, malformed("msgpack array expected")
}

// mpMapHeader reads a map header and returns the pair count and header length.
func mpMapHeader(b []byte) (count, n int, err error) {
	if len(b) == 0 {
		return 0, 0, errMsgpack
	}
	switch t := b[0]; {
	case t >= 0x80 && t <= 0x8f:
		return int(t & 0x0f), 1, nil
	case t == 0xde && len(b) >= 3:
		return int(binary.BigEndian.Uint16(b[1:3])), 3, nil
	case t == 0xdf && len(b) >= 5:
		c := binary.BigEndian.Uint32(b[1:5])
		if uint64(c) > uint64(len(b)) {
			return 0, 0, errMsgpack
		}
		return int(c), 5, nil
	}
	return 0, 0, malformed("msgpack map expected")
}

// mpInt decodes an integer. ok is false when b does not start with one.
func mpInt(b []byte) (v int64, n int, ok bool) {
	if len(b) == 0 {
		return 0, 0, false
	}
	t := b[0]
	switch {
	case t <= 0x7f:
		return int64(t), 1, true
	case t >= 0xe0:
		return int64(int8(t)), 1, true
	}
	switch t {
	case 0xcc:
		if len(b) >= 2 {
			return int64(b[1]), 2, true
		}
	case 0xcd:
		if len(b) >= 3 {
			return int64(binary.BigEndian.Uint16(b[1:])), 3, true
		}
	case 0xce:
		if len(b) >= 5 {
			return int64(binary.BigEndian.Uint32(b[1:])), 5, true
		}
	case 0xcf:
		if len(b) >= 9 {
			return int64(binary.BigEndian.Uint64(b[1:])), 9, true
		}
	case 0xd0:
		if len(b) >= 2 {
			return int64(int8(b[1])), 2, true
		}
	case 0xd1:
		if len(b) >= 3 {
			return int64(int16(binary.BigEndian.Uint16(b[1:]))), 3, true
		}
	case 0xd2:
		if len(b) >= 5 {
			return int64(int32(binary.BigEndian.Uint32(b[1:]))), 5, true
		}
	case 0xd3:
		if len(b) >= 9 {
			return int64(binary.BigEndian.Uint64(b[1:])), 9, true
		}
	}
	return 0, 0, false
}

// mpFloat decodes a float32/float64.
func mpFloat(b []byte) (v float64, n int, ok bool) {
	if len(b) >= 5 && b[0] == 0xca {
		return float64(math.Float32frombits(binary.BigEndian.Uint32(b[1:]))), 5, true
	}
	if len(b) >= 9 && b[0] == 0xcb {
		return math.Float64frombits(binary.BigEndian.Uint64(b[1:])), 9, true
	}
	return 0, 0, false
}

// mpStr decodes a msgpack str or bin. For str it returns the particle-type
// prefix byte separately (0 when the str is empty); bin yields ptBlob.
func mpStr(b []byte) (ptype byte, data []byte, n int, ok bool) {
	if len(b) == 0 {
		return 0, nil, 0, false
	}
	t := b[0]
	var hdr int
	var isBin bool
	switch {
	case t >= 0xa0 && t <= 0xbf:
		hdr = 0
	case t == 0xd9:
		hdr = 1
	case t == 0xda:
		hdr = 2
	case t == 0xdb:
		hdr = 4
	case t == 0xc4:
		hdr, isBin = 1, true
	case t == 0xc5:
		hdr, isBin = 2, true
	case t == 0xc6:
		hdr, isBin = 4, true
	default:
		return 0, nil, 0, false
	}
	var size int
	if hdr == 0 {
		size = int(t & 0x1f)
		if len(b) < 1+size {
			return 0, nil, 0, false
		}
		data = b[1 : 1+size]
	} else {
		total, err := mpSized(b, hdr)
		if err != nil {
			return 0, nil, 0, false
		}
		size = total - 1 - hdr
		data = b[1+hdr : total]
	}
	n = 1 + hdr + size
	if isBin {
		return ptBlob, data, n, true
	}
	if len(data) == 0 {
		return 0, data, n, true
	}
	return data[0], data[1:], n, true
}

// mapKey is a decoded map key. Aerospike map keys are integers, strings or
// blobs and compare by decoded value, never by encoding. b aliases the bytes
// the key was decoded from.
type mapKey struct {
	kind byte // ptInteger, ptString or ptBlob
	i    int64
	b    []byte
}

func (k mapKey) equal(o mapKey) bool {
	return k.kind == o.kind && k.i == o.i && bytes.Equal(k.b, o.b)
}

// less orders keys the way Aerospike orders msgpack values: integers before
// strings before blobs; strings and blobs byte-wise.
func (k mapKey) less(o mapKey) bool {
	if k.kind != o.kind {
		return k.kind < o.kind
	}
	if k.kind == ptInteger {
		return k.i < o.i
	}
	return bytes.Compare(k.b, o.b) < 0
}

// keyID is a comparable copy of a mapKey, for Go maps.
type keyID struct {
	kind byte
	i    int64
	s    string
}

func (k mapKey) id() keyID { return keyID{kind: k.kind, i: k.i, s: string(k.b)} }

// mpMapKey decodes a map key at the start of b.
func mpMapKey(b []byte) (mapKey, int, error) {
	if v, n, ok := mpInt(b); ok {
		return mapKey{kind: ptInteger, i: v}, n, nil
	}
	if pt, data, n, ok := mpStr(b); ok {
		switch pt {
		case ptString, ptBlob:
			return mapKey{kind: pt, b: data}, n, nil
		}
	}
	return mapKey{}, 0, malformed("map key must be an integer, string or blob")
}

func appendMPInt(dst []byte, v int64) []byte {
	switch {
	case v >= 0 && v < 128:
		return append(dst, byte(v))
	case v >= 0 && v <= math.MaxUint8:
		return append(dst, 0xcc, byte(v))
	case v >= 0 && v <= math.MaxUint16:
		return binary.BigEndian.AppendUint16(append(dst, 0xcd), uint16(v))
	case v >= 0 && v <= math.MaxUint32:
		return binary.BigEndian.AppendUint32(append(dst, 0xce), uint32(v))
	case v >= -32 && v < 0:
		return append(dst, byte(v))
	case v >= math.MinInt8 && v < 0:
		return append(dst, 0xd0, byte(v))
	case v >= math.MinInt16 && v < 0:
		return binary.BigEndian.AppendUint16(append(dst, 0xd1), uint16(v))
	case v >= math.MinInt32 && v < 0:
		return binary.BigEndian.AppendUint32(append(dst, 0xd2), uint32(v))
	}
	return binary.BigEndian.AppendUint64(append(dst, 0xd3), uint64(v))
}

func appendMPFloat(dst []byte, f float64) []byte {
	return binary.BigEndian.AppendUint64(append(dst, 0xcb), math.Float64bits(f))
}

func appendMPArrayHeader(dst []byte, n int) []byte {
	switch {
	case n < 16:
		return append(dst, 0x90|byte(n))
	case n <= math.MaxUint16:
		return binary.BigEndian.AppendUint16(append(dst, 0xdc), uint16(n))
	}
	return binary.BigEndian.AppendUint32(append(dst, 0xdd), uint32(n))
}

func appendMPMapHeader(dst []byte, n int) []byte {
	switch {
	case n < 16:
		return append(dst, 0x80|byte(n))
	case n <= math.MaxUint16:
		return binary.BigEndian.AppendUint16(append(dst, 0xde), uint16(n))
	}
	return binary.BigEndian.AppendUint32(append(dst, 0xdf), uint32(n))
}

// mpToParticle converts one msgpack value to the particle the server sends
// for it as an op result.
func mpToParticle(b []byte) (ptype byte, data []byte, err error) {
	if len(b) == 0 {
		return 0, nil, errMsgpack
	}
	if v, _, ok := mpInt(b); ok {
		return ptInteger, binary.BigEndian.AppendUint64(nil, uint64(v)), nil
	}
	if f, _, ok := mpFloat(b); ok {
		return ptFloat, binary.BigEndian.AppendUint64(nil, math.Float64bits(f)), nil
	}
	if pt, data, _, ok := mpStr(b); ok {
		switch pt {
		case ptString, ptBlob:
			return pt, data, nil
		case ptGeoJSON:
			return ptGeoJSON, append([]byte{0, 0, 0}, data...), nil
		}
		return ptBlob, data, nil
	}
	switch t := b[0]; {
	case t == 0xc0:
		return ptNull, nil, nil
	case t == 0xc2:
		return ptBool, []byte{0}, nil
	case t == 0xc3:
		return ptBool, []byte{1}, nil
	case t >= 0x90 && t <= 0x9f, t == 0xdc, t == 0xdd:
		return ptList, b, nil
	case t >= 0x80 && t <= 0x8f, t == 0xde, t == 0xdf:
		return ptMap, b, nil
	}
	return 0, nil, malformed("msgpack value 0x%02x has no particle form", b[0])
}

// BlobKey is how [Record.Bins] represents a blob map key, since []byte cannot
// be a Go map key.
type BlobKey string

// mpDecode decodes one msgpack value into plain Go values: nil, bool, int64,
// float64, string, []byte, []any, map[any]any (keys int64, string or BlobKey).
func mpDecode(b []byte, depth int) (any, int, error) {
	if depth > maxMsgpackDepth {
		return nil, 0, errMsgpack
	}
	if v, n, ok := mpInt(b); ok {
		return v, n, nil
	}
	if f, n, ok := mpFloat(b); ok {
		return f, n, nil
	}
	if pt, data, n, ok := mpStr(b); ok {
		switch pt {
		case ptBlob:
			return append([]byte(nil), data...), n, nil
		default:
			return string(data), n, nil
		}
	}
	if len(b) == 0 {
		return nil, 0, errMsgpack
	}
	switch b[0] {
	case 0xc0:
		return nil, 1, nil
	case 0xc2:
		return false, 1, nil
	case 0xc3:
		return true, 1, nil
	}
	if count, hn, err := mpArrayHeader(b); err == nil {
		out := make([]any, 0, min(count, 1024))
		off := hn
		for i := 0; i < count; i++ {
			v, n, err := mpDecode(b[off:], depth+1)
			if err != nil {
				return nil, 0, err
			}
			out = append(out, v)
			off += n
		}
		return out, off, nil
	}
	if count, hn, err := mpMapHeader(b); err == nil {
		out := make(map[any]any, min(count, 1024))
		off := hn
		for i := 0; i < count; i++ {
			kn, err := mpSkipDepth(b[off:], depth+1)
			if err != nil {
				return nil, 0, err
			}
			kraw := b[off : off+kn]
			off += kn
			v, vn, err := mpDecode(b[off:], depth+1)
			if err != nil {
				return nil, 0, err
			}
			off += vn
			if len(kraw) > 0 && (kraw[0] == 0xc7 || (kraw[0] >= 0xd4 && kraw[0] <= 0xd8)) {
				continue // ordered-map header pseudo-pair
			}
			k, _, err := mpMapKey(kraw)
			if err != nil {
				return nil, 0, err
			}
			switch k.kind {
			case ptInteger:
				out[k.i] = v
			case ptString:
				out[string(k.b)] = v
			default:
				out[BlobKey(k.b)] = v
			}
		}
		return out, off, nil
	}
	n, err := mpSkipDepth(b, depth)
	if err != nil {
		return nil, 0, err
	}
	return fmt.Sprintf("msgpack-ext:%x", b[:n]), n, nil
}

// mpSortMaps returns the msgpack object b with the pairs of every map in it,
// nested ones included, in key order: Aerospike stores unordered maps that
// way (K-ordered ones too). A map whose keys are not all integers, strings
// or blobs keeps its order. The result never aliases b; a malformed b (the
// caller has validated it) comes back copied as it is.
func mpSortMaps(b []byte) []byte {
	out, n, ok := appendSortedMaps(make([]byte, 0, len(b)), b, 0)
	if !ok || n != len(b) {
		return bytes.Clone(b)
	}
	return out
}

// sortedPair is one map pair of appendSortedMaps: its key and its bytes
// (key and value, nested maps already sorted).
type sortedPair struct {
	key mapKey
	raw []byte
}

func appendSortedMaps(dst, b []byte, depth int) ([]byte, int, bool) {
	if depth > maxMsgpackDepth || len(b) == 0 {
		return dst, 0, false
	}
	if count, hn, err := mpArrayHeader(b); err == nil {
		dst = append(dst, b[:hn]...)
		off := hn
		for range count {
			var n int
			var ok bool
			if dst, n, ok = appendSortedMaps(dst, b[off:], depth+1); !ok {
				return dst, 0, false
			}
			off += n
		}
		return dst, off, true
	}
	count, hn, err := mpMapHeader(b)
	if err != nil {
		n, err := mpSkip(b)
		if err != nil {
			return dst, 0, false
		}
		return append(dst, b[:n]...), n, true
	}
	if count > len(b) {
		return dst, 0, false
	}
	dst = append(dst, b[:hn]...)
	off := hn
	pairs := make([]sortedPair, 0, count)
	sortable := true
	for i := range count {
		kn, err := mpSkip(b[off:])
		if err != nil {
			return dst, 0, false
		}
		kraw := b[off : off+kn]
		raw, vn, ok := appendSortedMaps(append([]byte(nil), kraw...), b[off+kn:], depth+1)
		if !ok {
			return dst, 0, false
		}
		off += kn + vn
		if i == 0 && len(kraw) == 3 && kraw[0] == 0xc7 && kraw[1] == 0 {
			dst = append(dst, raw...) // the ordered-map header stays first
			continue
		}
		k, n, err := mpMapKey(kraw)
		if err != nil || n != len(kraw) {
			sortable = false
		}
		pairs = append(pairs, sortedPair{key: k, raw: raw})
	}
	if sortable {
		slices.SortStableFunc(pairs, func(a, b sortedPair) int { return cmpKeys(a.key, b.key) })
	}
	for _, p := range pairs {
		dst = append(dst, p.raw...)
	}
	return dst, off, true
}
