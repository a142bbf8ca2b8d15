package wire

import (
	"encoding/json"
	"math"
	"strconv"
)

// AppendJSONObject appends m as encoding/json marshals it, byte for byte.
// Source partitions and offsets are small flat objects of strings and
// numbers, one pair per record; for those it writes the bytes directly
// (sorted keys, as encoding/json does), which costs a fraction of
// json.Marshal's reflection. Anything else (nesting, strings that need
// escaping, other types) goes through json.Marshal.
func AppendJSONObject(dst []byte, m map[string]any) ([]byte, error) {
	if out, ok := appendFlatObject(dst, m); ok {
		return out, nil
	}
	b, err := json.Marshal(m)
	if err != nil {
		return dst, err
	}
	return append(dst, b...), nil
}

// flatKeys is how many keys the direct path handles.
const flatKeys = 8

func appendFlatObject(dst []byte, m map[string]any) ([]byte, bool) {
	var arr [flatKeys]string
	out, _, ok := appendFlatObjectKeys(dst, m, arr[:0])
	return out, ok
}

// appendFlatObjectKeys is appendFlatObject that also returns m's keys,
// sorted, appended to keys.
func appendFlatObjectKeys(dst []byte, m map[string]any, keys []string) ([]byte, []string, bool) {
	if m == nil || len(m) > flatKeys {
		return dst, keys, false
	}
	for k := range m {
		if !plainString(k) {
			return dst, keys, false
		}
		// Insertion sort: encoding/json orders keys by strings.Compare.
		i := len(keys)
		keys = append(keys, k)
		for ; i > 0 && keys[i-1] > k; i-- {
			keys[i] = keys[i-1]
		}
		keys[i] = k
	}
	start := len(dst)
	dst = append(dst, '{')
	for i, k := range keys {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, '"')
		dst = append(dst, k...)
		dst = append(dst, '"', ':')
		var ok bool
		if dst, ok = appendFlatValue(dst, m[k]); !ok {
			return dst[:start], keys, false
		}
	}
	return append(dst, '}'), keys, true
}

// ObjectEncoder is AppendJSONObject with a memory of the last flat
// object's keys. A map with exactly those keys (same count, each found
// by lookup) is written without iterating it: ranging over a map costs a
// random start and an iterator, and sorting its keys, several lookups'
// worth, while one task's source offsets nearly always share their keys.
// The zero value is ready to use; an encoder is not safe for concurrent
// use.
type ObjectEncoder struct {
	keys []string // sorted, plain; empty when unknown
}

// Append appends m as encoding/json marshals it, byte for byte.
func (e *ObjectEncoder) Append(dst []byte, m map[string]any) ([]byte, error) {
	if n := len(e.keys); n > 0 && len(m) == n {
		start := len(dst)
		dst = append(dst, '{')
		ok := true
		for i, k := range e.keys {
			v, found := m[k]
			if !found {
				ok = false
				break
			}
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, '"')
			dst = append(dst, k...)
			dst = append(dst, '"', ':')
			if dst, ok = appendFlatValue(dst, v); !ok {
				break
			}
		}
		if ok {
			return append(dst, '}'), nil
		}
		dst = dst[:start]
	}
	out, keys, ok := appendFlatObjectKeys(dst, m, e.keys[:0])
	if ok && len(keys) > 0 {
		e.keys = keys
		return out, nil
	}
	e.keys = e.keys[:0]
	return AppendJSONObject(dst, m)
}

func appendFlatValue(dst []byte, v any) ([]byte, bool) {
	switch x := v.(type) {
	case nil:
		return append(dst, "null"...), true
	case string:
		if !plainString(x) {
			return dst, false
		}
		dst = append(dst, '"')
		dst = append(dst, x...)
		return append(dst, '"'), true
	case bool:
		return strconv.AppendBool(dst, x), true
	case int:
		return strconv.AppendInt(dst, int64(x), 10), true
	case int32:
		return strconv.AppendInt(dst, int64(x), 10), true
	case int64:
		return strconv.AppendInt(dst, x, 10), true
	case uint32:
		return strconv.AppendUint(dst, uint64(x), 10), true
	case uint64:
		return strconv.AppendUint(dst, x, 10), true
	case float64:
		// encoding/json writes 'f' format in this range and 'e' outside it.
		if a := math.Abs(x); a != 0 && (a < 1e-6 || a >= 1e21) || math.IsNaN(x) || math.IsInf(x, 0) {
			return dst, false
		}
		return strconv.AppendFloat(dst, x, 'f', -1, 64), true
	}
	return dst, false
}

// plainString reports whether encoding/json writes s unchanged between
// quotes: printable ASCII without '"', '\\' and the HTML-escaped '<', '>',
// '&'.
func plainString(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
}
