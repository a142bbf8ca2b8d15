package aerofake

// List CDT opcodes the test server models (client cdt_list.go, server
// proto.h). Only appending to an unordered top-level list is modelled: it
// is what the AerospikeSink's list_append mode sends. Every other list
// opcode answers UNSUPPORTED_FEATURE.
const (
	listAppend      = 1
	listAppendItems = 2
)

// listModify runs a list CDT_MODIFY op (opcode below 64) on bins[idx].
// As on the real server, a missing bin becomes a new list, a bin of another
// type answers BIN_TYPE_ERROR, and the result is the list's new size.
func listModify(bins []bin, idx int, o *op, c *cdtCall, scr *scratch) ([]bin, opResult, ResultCode) {
	res := opResult{code: o.code, ptype: ptNull, rawName: o.name}
	if c.opcode != listAppend && c.opcode != listAppendItems {
		return bins, res, UnsupportedFeature
	}
	if len(c.params) < 1 || len(c.params) > 3 {
		return bins, res, ParameterError
	}
	// Ordered lists and the write flags (ADD_UNIQUE, INSERT_BOUNDED, ...)
	// are not modelled.
	if attr, ok := c.intParam(1, 0); !ok || attr != 0 {
		return bins, res, UnsupportedFeature
	}
	if flags, ok := c.intParam(2, 0); !ok || flags != 0 {
		return bins, res, UnsupportedFeature
	}
	var stored []byte
	count := 0
	if idx >= 0 {
		if bins[idx].ptype != ptList {
			return bins, res, BinTypeError
		}
		n, hn, err := mpArrayHeader(bins[idx].data)
		if err != nil {
			return bins, res, ParameterError
		}
		if n > 0 && isExt(bins[idx].data[hn]) {
			return bins, res, UnsupportedFeature // an ordered list: its first element is an ext header
		}
		count, stored = n, bins[idx].data[hn:]
	}
	var add []byte
	added := 1
	if c.opcode == listAppend {
		add = mpSortMaps(c.params[0])
	} else {
		n, hn, err := mpArrayHeader(c.params[0])
		if err != nil {
			return bins, res, ParameterError
		}
		if n == 0 {
			return bins, res, ParameterError
		}
		added = n
		rest := c.params[0][hn:]
		for range n {
			k, err := mpSkip(rest)
			if err != nil {
				return bins, res, ParameterError
			}
			add = append(add, mpSortMaps(rest[:k])...)
			rest = rest[k:]
		}
	}
	data := appendMPArrayHeader(make([]byte, 0, 5+len(stored)+len(add)), count+added)
	data = append(append(data, stored...), add...)
	res.ptype, res.data = ptInteger, scr.int64(int64(count+added))
	nb := bin{name: binName(bins, idx, o), ptype: ptList, data: data}
	return setBin(bins, idx, nb), res, OK
}

// isExt reports whether a msgpack type byte starts an ext value.
func isExt(t byte) bool { return t >= 0xc7 && t <= 0xc9 || t >= 0xd4 && t <= 0xd8 }
