package convert

import (
	"encoding/base64"
	"math"
	"reflect"
	"sort"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/connectd/connectd/framework/data"
	"github.com/connectd/connectd/framework/internal/javafmt"
)

// encoder writes Connect data as Kafka Connect's JsonConverter does
// (Jackson's output: no insignificant whitespace, Java number forms,
// base64 for bytes, non-ASCII text unescaped).
type encoder struct {
	c   *JSONConverter
	buf []byte
}

const maxDepth = 1000 // Jackson's default nesting limit

func (e *encoder) value(s *data.Schema, v any) error { return e.valueAt(s, v, 0) }

func (e *encoder) valueAt(s *data.Schema, v any, depth int) error {
	if depth > maxDepth {
		return dataError("Conversion error: value nested more than %d levels deep", maxDepth)
	}
	if v == nil {
		return e.null(s, depth)
	}
	if s != nil && s.Name != "" {
		if done, err := e.logical(s, v); done {
			return err
		}
	}
	t := data.Type("")
	if s != nil {
		t = s.Type
	} else {
		var ok bool
		if t, ok = data.InferType(v); !ok {
			return e.schemalessFallback(v, depth)
		}
	}
	switch t {
	case data.Array:
		if x, ok := v.([]any); ok {
			return e.array(s, x, depth)
		}
	case data.Map:
		return e.mapValue(s, v, depth)
	case data.Struct:
		if x, ok := v.(*data.StructValue); ok {
			return e.structValue(s, x, depth)
		}
	default:
		if done, err := e.primitive(t, v); done {
			return err
		}
	}
	return dataError("Invalid type for %s: %T", t.KafkaName(), v)
}

// null writes a null value, the schema's default in its place
// (replace.null.with.default), or fails for a required field.
func (e *encoder) null(s *data.Schema, depth int) error {
	switch {
	case s == nil:
		e.buf = append(e.buf, "null"...)
		return nil
	case s.Default != nil && e.c.replaceNull:
		return e.valueAt(s, s.Default, depth)
	case s.Optional:
		e.buf = append(e.buf, "null"...)
		return nil
	}
	return dataError("Conversion error: null value for field that is required and has no default value")
}

// primitive writes v as the primitive type t. It reports false when v is
// not t's Go type.
func (e *encoder) primitive(t data.Type, v any) (bool, error) {
	switch t {
	case data.Int8:
		if x, ok := v.(int8); ok {
			e.buf = strconv.AppendInt(e.buf, int64(x), 10)
			return true, nil
		}
	case data.Int16:
		if x, ok := v.(int16); ok {
			e.buf = strconv.AppendInt(e.buf, int64(x), 10)
			return true, nil
		}
	case data.Int32:
		if x, ok := v.(int32); ok {
			e.buf = strconv.AppendInt(e.buf, int64(x), 10)
			return true, nil
		}
	case data.Int64:
		if x, ok := v.(int64); ok {
			e.buf = strconv.AppendInt(e.buf, x, 10)
			return true, nil
		}
	case data.Float32:
		if x, ok := v.(float32); ok {
			e.float(float64(x), true)
			return true, nil
		}
	case data.Float64:
		if x, ok := v.(float64); ok {
			e.float(x, false)
			return true, nil
		}
	case data.Boolean:
		if x, ok := v.(bool); ok {
			e.buf = strconv.AppendBool(e.buf, x)
			return true, nil
		}
	case data.String:
		if x, ok := v.(string); ok {
			e.str(x)
			return true, nil
		}
	case data.Bytes:
		if x, ok := v.([]byte); ok {
			e.bytes(x)
			return true, nil
		}
	default:
		return true, dataError("Couldn't convert %s to JSON: unknown schema type %q", data.ValueString(v), t)
	}
	return false, nil
}

// array writes a list whose elements are s.Value (schemaless when s is nil).
func (e *encoder) array(s *data.Schema, x []any, depth int) error {
	var elem *data.Schema
	if s != nil {
		elem = s.Value
	}
	e.buf = append(e.buf, '[')
	for i, el := range x {
		if i > 0 {
			e.buf = append(e.buf, ',')
		}
		if err := e.valueAt(elem, el, depth+1); err != nil {
			return err
		}
	}
	e.buf = append(e.buf, ']')
	return nil
}

// structValue writes a struct as an object of its fields in schema order.
// Schemaless, the struct's own schema applies; otherwise it must equal s.
func (e *encoder) structValue(s *data.Schema, x *data.StructValue, depth int) error {
	if s == nil {
		s = x.Schema()
	} else if !x.Schema().Equal(s) {
		return dataError("Mismatching schema.")
	}
	e.buf = append(e.buf, '{')
	for i, f := range s.Fields {
		if i > 0 {
			e.buf = append(e.buf, ',')
		}
		e.str(f.Name)
		e.buf = append(e.buf, ':')
		if err := e.valueAt(f.Schema, x.RawAt(i), depth+1); err != nil {
			return err
		}
	}
	e.buf = append(e.buf, '}')
	return nil
}

// schemalessFallback writes Go values that have no Connect type but an
// obvious JSON form, so that schemaless connectors can use plain Go
// (int, uint64, []string, map[string]string, time.Time).
func (e *encoder) schemalessFallback(v any, depth int) error {
	switch x := v.(type) {
	case int:
		e.buf = strconv.AppendInt(e.buf, int64(x), 10)
		return nil
	case uint:
		e.buf = strconv.AppendUint(e.buf, uint64(x), 10)
		return nil
	case uint8:
		e.buf = strconv.AppendUint(e.buf, uint64(x), 10)
		return nil
	case uint16:
		e.buf = strconv.AppendUint(e.buf, uint64(x), 10)
		return nil
	case uint32:
		e.buf = strconv.AppendUint(e.buf, uint64(x), 10)
		return nil
	case uint64:
		e.buf = strconv.AppendUint(e.buf, x, 10)
		return nil
	case time.Time:
		e.buf = strconv.AppendInt(e.buf, x.UnixMilli(), 10)
		return nil
	case data.Decimal:
		e.buf = append(e.buf, x.String()...)
		return nil
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Slice, reflect.Array:
		e.buf = append(e.buf, '[')
		for i := 0; i < rv.Len(); i++ {
			if i > 0 {
				e.buf = append(e.buf, ',')
			}
			if err := e.valueAt(nil, rv.Index(i).Interface(), depth+1); err != nil {
				return err
			}
		}
		e.buf = append(e.buf, ']')
		return nil
	case reflect.Map:
		if rv.Type().Key().Kind() == reflect.String {
			keys := rv.MapKeys()
			sort.Slice(keys, func(i, j int) bool { return keys[i].String() < keys[j].String() })
			e.buf = append(e.buf, '{')
			for i, k := range keys {
				if i > 0 {
					e.buf = append(e.buf, ',')
				}
				e.str(k.String())
				e.buf = append(e.buf, ':')
				if err := e.valueAt(nil, rv.MapIndex(k).Interface(), depth+1); err != nil {
					return err
				}
			}
			e.buf = append(e.buf, '}')
			return nil
		}
	case reflect.Pointer:
		if rv.IsNil() {
			e.buf = append(e.buf, "null"...)
			return nil
		}
		return e.valueAt(nil, rv.Elem().Interface(), depth+1)
	}
	return dataError("Go type %T does not have a corresponding schema type", v)
}

func (e *encoder) mapValue(s *data.Schema, v any, depth int) error {
	var keySchema, valSchema *data.Schema
	objectMode := true
	if s != nil {
		keySchema, valSchema = s.Key, s.Value
		objectMode = keySchema != nil && keySchema.Type == data.String
	}
	switch m := v.(type) {
	case map[string]any:
		if !objectMode {
			// String-keyed Go map under a non-string key schema: encode
			// pairs, checking keys against the key schema.
			keys := sortedKeys(m)
			e.buf = append(e.buf, '[')
			for i, k := range keys {
				if i > 0 {
					e.buf = append(e.buf, ',')
				}
				e.buf = append(e.buf, '[')
				if err := e.valueAt(keySchema, k, depth+1); err != nil {
					return err
				}
				e.buf = append(e.buf, ',')
				if err := e.valueAt(valSchema, m[k], depth+1); err != nil {
					return err
				}
				e.buf = append(e.buf, ']')
			}
			e.buf = append(e.buf, ']')
			return nil
		}
		// Sorted keys make the output deterministic; the scratch slice is
		// shared with nested maps, which append after this map's keys.
		start := len(e.c.keyBuf)
		for k := range m {
			e.c.keyBuf = append(e.c.keyBuf, k)
		}
		keys := e.c.keyBuf[start:]
		sort.Strings(keys)
		defer func() { e.c.keyBuf = e.c.keyBuf[:start] }()
		e.buf = append(e.buf, '{')
		for i, k := range keys {
			if i > 0 {
				e.buf = append(e.buf, ',')
			}
			e.str(k)
			e.buf = append(e.buf, ':')
			if err := e.valueAt(valSchema, m[k], depth+1); err != nil {
				return err
			}
		}
		e.buf = append(e.buf, '}')
		return nil
	case map[any]any:
		if s == nil {
			for k := range m {
				if _, ok := k.(string); !ok {
					objectMode = false
					break
				}
			}
		}
		// Render every key and value first, then order entries by the
		// rendered key, so output does not depend on Go's map order.
		type entry struct{ k, v []byte }
		entries := make([]entry, 0, len(m))
		for k, val := range m {
			sub := encoder{c: e.c}
			if err := sub.valueAt(keySchema, k, depth+1); err != nil {
				return err
			}
			kb := sub.buf
			sub.buf = nil
			if err := sub.valueAt(valSchema, val, depth+1); err != nil {
				return err
			}
			entries = append(entries, entry{kb, sub.buf})
		}
		sort.Slice(entries, func(i, j int) bool { return string(entries[i].k) < string(entries[j].k) })
		if objectMode {
			e.buf = append(e.buf, '{')
			for i, en := range entries {
				if i > 0 {
					e.buf = append(e.buf, ',')
				}
				if len(en.k) > 0 && en.k[0] == '"' {
					e.buf = append(e.buf, en.k...)
				} else { // Jackson's asText() of a non-text key
					e.str(string(en.k))
				}
				e.buf = append(e.buf, ':')
				e.buf = append(e.buf, en.v...)
			}
			e.buf = append(e.buf, '}')
			return nil
		}
		e.buf = append(e.buf, '[')
		for i, en := range entries {
			if i > 0 {
				e.buf = append(e.buf, ',')
			}
			e.buf = append(e.buf, '[')
			e.buf = append(e.buf, en.k...)
			e.buf = append(e.buf, ',')
			e.buf = append(e.buf, en.v...)
			e.buf = append(e.buf, ']')
		}
		e.buf = append(e.buf, ']')
		return nil
	}
	return dataError("Invalid type for MAP: %T", v)
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// logical writes logical-type values; done=false when s names no logical type.
func (e *encoder) logical(s *data.Schema, v any) (done bool, err error) {
	switch s.Name {
	case data.DecimalName:
		d, ok := v.(data.Decimal)
		if !ok {
			return true, dataError("Invalid type for Decimal, expected data.Decimal but was %T", v)
		}
		if e.c.numericDecimals {
			e.buf = append(e.buf, d.String()...)
			return true, nil
		}
		scale, err := data.DecimalScale(s)
		if err != nil {
			return true, &data.Error{Msg: err.Error()}
		}
		if d.Scale != scale {
			return true, dataError("Decimal %s has mismatching scale value for given Decimal schema (scale %d)", d, scale)
		}
		e.bytes(d.UnscaledBytes())
		return true, nil
	case data.DateName, data.TimeName, data.TimestampName:
		t, ok := v.(time.Time)
		if !ok {
			return true, dataError("Invalid type for %s, expected time.Time but was %T", logicalShort(s.Name), v)
		}
		switch s.Name {
		case data.DateName:
			n, err := data.DateToDays(t)
			if err != nil {
				return true, &data.Error{Msg: err.Error()}
			}
			e.buf = strconv.AppendInt(e.buf, int64(n), 10)
		case data.TimeName:
			n, err := data.TimeToMillis(t)
			if err != nil {
				return true, &data.Error{Msg: err.Error()}
			}
			e.buf = strconv.AppendInt(e.buf, int64(n), 10)
		default:
			e.buf = strconv.AppendInt(e.buf, data.TimestampToMillis(t), 10)
		}
		return true, nil
	}
	return false, nil
}

func logicalShort(name string) string {
	switch name {
	case data.DateName:
		return "Date"
	case data.TimeName:
		return "Time"
	case data.TimestampName:
		return "Timestamp"
	}
	return "Decimal"
}

func (e *encoder) float(f float64, is32 bool) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		// Jackson quotes non-finite numbers (QUOTE_NON_NUMERIC_NUMBERS).
		e.buf = append(e.buf, '"')
		e.buf = javafmt.AppendDouble(e.buf, f)
		e.buf = append(e.buf, '"')
		return
	}
	if is32 {
		e.buf = javafmt.AppendFloat(e.buf, float32(f))
	} else {
		e.buf = javafmt.AppendDouble(e.buf, f)
	}
}

func (e *encoder) bytes(b []byte) {
	e.buf = append(e.buf, '"')
	n := base64.StdEncoding.EncodedLen(len(b))
	start := len(e.buf)
	e.buf = append(e.buf, make([]byte, n)...)
	base64.StdEncoding.Encode(e.buf[start:], b)
	e.buf = append(e.buf, '"')
}

const hexDigits = "0123456789abcdef"

// str writes a JSON string the way Jackson does: quote, backslash and
// control characters escaped (\b \t \n \f \r short forms), everything else
// as UTF-8; invalid UTF-8 becomes U+FFFD.
func (e *encoder) str(s string) {
	e.buf = append(e.buf, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			e.buf = append(e.buf, s[start:i]...)
			switch c {
			case '"':
				e.buf = append(e.buf, '\\', '"')
			case '\\':
				e.buf = append(e.buf, '\\', '\\')
			case '\b':
				e.buf = append(e.buf, '\\', 'b')
			case '\t':
				e.buf = append(e.buf, '\\', 't')
			case '\n':
				e.buf = append(e.buf, '\\', 'n')
			case '\f':
				e.buf = append(e.buf, '\\', 'f')
			case '\r':
				e.buf = append(e.buf, '\\', 'r')
			default:
				e.buf = append(e.buf, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			e.buf = append(e.buf, s[start:i]...)
			e.buf = append(e.buf, "\uFFFD"...)
			i++
			start = i
			continue
		}
		i += size
	}
	e.buf = append(e.buf, s[start:]...)
	e.buf = append(e.buf, '"')
}

// schema writes a schema as Kafka's JsonConverter.asJsonSchema does, with
// the same key order: type, items | keys, values | fields, optional, name,
// version, doc, parameters (sorted by key), default.
func (e *encoder) schema(s *data.Schema) error { return e.schemaAt(s, "", 0) }

func (e *encoder) schemaAt(s *data.Schema, fieldName string, depth int) error {
	if depth > maxDepth {
		return dataError("schema nested more than %d levels deep", maxDepth)
	}
	if s == nil {
		return dataError("Couldn't translate null schema")
	}
	e.buf = append(e.buf, `{"type":`...)
	switch s.Type {
	case data.Int8, data.Int16, data.Int32, data.Int64, data.Float32, data.Float64, data.Boolean, data.String, data.Bytes:
		e.str(string(s.Type))
	case data.Array:
		e.buf = append(e.buf, `"array","items":`...)
		if err := e.schemaAt(s.Value, "", depth+1); err != nil {
			return err
		}
	case data.Map:
		e.buf = append(e.buf, `"map","keys":`...)
		if err := e.schemaAt(s.Key, "", depth+1); err != nil {
			return err
		}
		e.buf = append(e.buf, `,"values":`...)
		if err := e.schemaAt(s.Value, "", depth+1); err != nil {
			return err
		}
	case data.Struct:
		e.buf = append(e.buf, `"struct","fields":[`...)
		for i, f := range s.Fields {
			if i > 0 {
				e.buf = append(e.buf, ',')
			}
			if err := e.schemaAt(f.Schema, f.Name, depth+1); err != nil {
				return err
			}
		}
		e.buf = append(e.buf, ']')
	default:
		return dataError("Couldn't translate unsupported schema type %s.", s)
	}
	e.buf = append(e.buf, `,"optional":`...)
	e.buf = strconv.AppendBool(e.buf, s.Optional)
	if s.Name != "" {
		e.buf = append(e.buf, `,"name":`...)
		e.str(s.Name)
	}
	if s.Version != 0 {
		e.buf = append(e.buf, `,"version":`...)
		e.buf = strconv.AppendInt(e.buf, int64(s.Version), 10)
	}
	if s.Doc != "" {
		e.buf = append(e.buf, `,"doc":`...)
		e.str(s.Doc)
	}
	if s.Parameters != nil {
		e.buf = append(e.buf, `,"parameters":{`...)
		keys := make([]string, 0, len(s.Parameters))
		for k := range s.Parameters {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for i, k := range keys {
			if i > 0 {
				e.buf = append(e.buf, ',')
			}
			e.str(k)
			e.buf = append(e.buf, ':')
			e.str(s.Parameters[k])
		}
		e.buf = append(e.buf, '}')
	}
	if s.Default != nil {
		e.buf = append(e.buf, `,"default":`...)
		if err := e.valueAt(s, s.Default, depth+1); err != nil {
			return err
		}
	}
	if fieldName != "" {
		e.buf = append(e.buf, `,"field":`...)
		e.str(fieldName)
	}
	e.buf = append(e.buf, '}')
	return nil
}
