package aerospike

// Size estimates of what a write puts on the wire. The client refuses a
// command it cannot fit in its buffer (120 MiB) with PARSE_ERROR before
// sending anything, so batches are cut by these estimates as well as by key
// count. They err on the large side: a string is counted with the largest
// msgpack header and particle byte wherever it could be nested.

const (
	// opOverhead is one operation's header (size, op, particle type, flags,
	// name length) without the name.
	opOverhead = 8
	// rowOverhead is a batch row's own bytes: index, digest, row header,
	// namespace and set fields and the policy fields a write row carries.
	rowOverhead = 64
	// posEntryOverhead is one positions-bin map entry without its key: the
	// msgpack int and the key's string header and particle byte.
	posEntryOverhead = 16
	// msgpackHeader is the largest msgpack header of a str, bin, array or
	// map (1 + 4 bytes).
	msgpackHeader = 5
)

// recordSize estimates the bytes one mapped record adds to a batch write:
// its bins as operations, plus its entry in the positions bin.
func recordSize(m *mapped) int {
	n := posEntryOverhead + len(m.pos)
	for _, b := range m.bins {
		n += opOverhead + len(b.name) + valueSize(b.value)
		if m.mapKey != nil {
			n += msgpackHeader + elemSize(m.mapKey)
		}
	}
	return n
}

// keySize estimates the fixed bytes of one key's row: the row itself, the
// user key when it is sent, and the positions bin operation.
func (w *writer) keySize(m *mapped) int {
	n := rowOverhead + len(m.key.Namespace()) + len(m.key.SetName()) + opOverhead + len(w.cfg.PositionsBin) + msgpackHeader
	if w.cfg.SendKey {
		n += msgpackHeader + valueSize(m.key.Value().GetObject())
	}
	return n
}

// valueSize estimates a bin value's particle bytes as the client sends it.
func valueSize(v any) int {
	switch x := v.(type) {
	case nil:
		return 0
	case bool, int64, float64:
		return 8
	case string:
		return len(x)
	case []byte:
		return len(x)
	}
	return elemSize(v)
}

// elemSize estimates a value's msgpack encoding inside a list or map,
// where strings and blobs carry a particle-type byte.
func elemSize(v any) int {
	switch x := v.(type) {
	case nil, bool:
		return 1
	case int64, float64:
		return 9
	case string:
		return msgpackHeader + 1 + len(x)
	case []byte:
		return msgpackHeader + 1 + len(x)
	case []any:
		n := msgpackHeader
		for _, e := range x {
			n += elemSize(e)
		}
		return n
	case map[string]any:
		n := msgpackHeader
		for k, e := range x {
			n += msgpackHeader + 1 + len(k) + elemSize(e)
		}
		return n
	case map[any]any:
		n := msgpackHeader
		for k, e := range x {
			n += elemSize(k) + elemSize(e)
		}
		return n
	}
	// normalize leaves no other types; count an unknown one as a number.
	return 9
}
