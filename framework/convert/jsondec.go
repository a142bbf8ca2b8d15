package convert

import (
	"encoding/base64"
	"errors"
	"fmt"
	"math"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/connectd/connectd/framework/data"
)

// decoder reads JSON directly into Connect values, guided by a schema when
// there is one, without building an intermediate tree.
type decoder struct {
	c    *JSONConverter
	data []byte
	pos  int
}

// syntaxError is malformed JSON.
type syntaxError struct {
	msg string
	off int
}

func (e *syntaxError) Error() string { return fmt.Sprintf("%s at offset %d", e.msg, e.off) }

func (d *decoder) syntax(format string, args ...any) error {
	return &syntaxError{msg: fmt.Sprintf(format, args...), off: d.pos}
}

// serializationError gives malformed input Kafka's wording; data errors
// (valid JSON that does not fit the schema) pass through.
func serializationError(err error) error {
	var se *syntaxError
	if errors.As(err, &se) {
		return &data.Error{Msg: "Converting byte[] to Kafka Connect data failed due to serialization error: " + se.Error()}
	}
	return err
}

func (d *decoder) skipWS() {
	for d.pos < len(d.data) {
		switch d.data[d.pos] {
		case ' ', '\t', '\n', '\r':
			d.pos++
		default:
			return
		}
	}
}

// end checks that only whitespace follows the value.
func (d *decoder) end() error {
	d.skipWS()
	if d.pos != len(d.data) {
		return d.syntax("unexpected data after the JSON value")
	}
	return nil
}

// kind names the JSON token at pos as Jackson's JsonNodeType does.
func (d *decoder) kind() string {
	if d.pos >= len(d.data) {
		return "MISSING"
	}
	switch c := d.data[d.pos]; {
	case c == '{':
		return "OBJECT"
	case c == '[':
		return "ARRAY"
	case c == '"':
		return "STRING"
	case c == 't' || c == 'f':
		return "BOOLEAN"
	case c == 'n':
		return "NULL"
	case c == '-' || (c >= '0' && c <= '9'):
		return "NUMBER"
	}
	return "INVALID"
}

func (d *decoder) expect(c byte) error {
	d.skipWS()
	if d.pos >= len(d.data) {
		return d.syntax("unexpected end of input, expected '%c'", c)
	}
	if d.data[d.pos] != c {
		return d.syntax("invalid character '%c', expected '%c'", d.data[d.pos], c)
	}
	d.pos++
	return nil
}

func (d *decoder) literal(word string) error {
	if len(d.data)-d.pos < len(word) || string(d.data[d.pos:d.pos+len(word)]) != word {
		return d.syntax("invalid literal, expected %s", word)
	}
	d.pos += len(word)
	return nil
}

// number scans a JSON number and returns its text and whether it has no
// fraction or exponent.
func (d *decoder) number() ([]byte, bool, error) {
	start := d.pos
	integral := true
	if d.pos < len(d.data) && d.data[d.pos] == '-' {
		d.pos++
	}
	digits := func() int {
		n := 0
		for d.pos < len(d.data) && d.data[d.pos] >= '0' && d.data[d.pos] <= '9' {
			d.pos++
			n++
		}
		return n
	}
	// Leading zeros are accepted, as Kafka enables Jackson's
	// ALLOW_LEADING_ZEROS_FOR_NUMBERS.
	if digits() == 0 {
		return nil, false, d.syntax("invalid number")
	}
	if d.pos < len(d.data) && d.data[d.pos] == '.' {
		integral = false
		d.pos++
		if digits() == 0 {
			return nil, false, d.syntax("invalid number: no digits after the decimal point")
		}
	}
	if d.pos < len(d.data) && (d.data[d.pos] == 'e' || d.data[d.pos] == 'E') {
		integral = false
		d.pos++
		if d.pos < len(d.data) && (d.data[d.pos] == '+' || d.data[d.pos] == '-') {
			d.pos++
		}
		if digits() == 0 {
			return nil, false, d.syntax("invalid number: no digits in the exponent")
		}
	}
	return d.data[start:d.pos], integral, nil
}

// str reads a JSON string at pos (which holds the opening quote).
func (d *decoder) str() (string, error) {
	d.pos++ // opening quote
	start := d.pos
	ascii := true
	for d.pos < len(d.data) {
		c := d.data[d.pos]
		switch {
		case c == '"':
			raw := d.data[start:d.pos]
			d.pos++
			if !ascii && !utf8.Valid(raw) {
				return "", &syntaxError{msg: "invalid UTF-8 in string", off: start}
			}
			return string(raw), nil
		case c == '\\':
			return d.strSlow(start)
		case c < 0x20:
			return "", d.syntax("control character in string")
		case c >= utf8.RuneSelf:
			ascii = false
		}
		d.pos++
	}
	return "", d.syntax("unterminated string")
}

// key reads an object key, interning plain keys.
func (d *decoder) key() (string, error) {
	start := d.pos + 1
	for i := start; i < len(d.data); i++ {
		c := d.data[i]
		if c == '"' {
			d.pos = i + 1
			return d.c.intern(d.data[start:i]), nil
		}
		if c == '\\' || c < 0x20 || c >= utf8.RuneSelf {
			break // the general path handles escapes, errors and UTF-8 checks
		}
	}
	return d.str()
}

func (d *decoder) strSlow(start int) (string, error) {
	buf := make([]byte, 0, d.pos-start+16)
	buf = append(buf, d.data[start:d.pos]...)
	for d.pos < len(d.data) {
		c := d.data[d.pos]
		switch {
		case c == '"':
			d.pos++
			if !utf8.Valid(buf) {
				return "", &syntaxError{msg: "invalid UTF-8 in string", off: start}
			}
			return string(buf), nil
		case c < 0x20:
			return "", d.syntax("control character in string")
		case c != '\\':
			buf = append(buf, c)
			d.pos++
			continue
		}
		d.pos++
		if d.pos >= len(d.data) {
			break
		}
		esc := d.data[d.pos]
		d.pos++
		switch esc {
		case '"', '\\', '/':
			buf = append(buf, esc)
		case 'b':
			buf = append(buf, '\b')
		case 'f':
			buf = append(buf, '\f')
		case 'n':
			buf = append(buf, '\n')
		case 'r':
			buf = append(buf, '\r')
		case 't':
			buf = append(buf, '\t')
		case 'u':
			r, err := d.hex4()
			if err != nil {
				return "", err
			}
			if utf16.IsSurrogate(r) {
				r2 := rune(-1)
				if d.pos+1 < len(d.data) && d.data[d.pos] == '\\' && d.data[d.pos+1] == 'u' {
					save := d.pos
					d.pos += 2
					if r2, err = d.hex4(); err != nil {
						return "", err
					}
					if utf16.DecodeRune(r, r2) == utf8.RuneError {
						d.pos = save
						r2 = -1
					}
				}
				if r2 < 0 {
					r = utf8.RuneError
				} else {
					r = utf16.DecodeRune(r, r2)
				}
			}
			buf = utf8.AppendRune(buf, r)
		default:
			return "", d.syntax("invalid escape '\\%c'", esc)
		}
	}
	return "", d.syntax("unterminated string")
}

func (d *decoder) hex4() (rune, error) {
	if len(d.data)-d.pos < 4 {
		return 0, d.syntax("invalid \\u escape")
	}
	var r rune
	for _, c := range d.data[d.pos : d.pos+4] {
		r <<= 4
		switch {
		case c >= '0' && c <= '9':
			r |= rune(c - '0')
		case c >= 'a' && c <= 'f':
			r |= rune(c - 'a' + 10)
		case c >= 'A' && c <= 'F':
			r |= rune(c - 'A' + 10)
		default:
			return 0, d.syntax("invalid \\u escape")
		}
	}
	d.pos += 4
	return r, nil
}

// skip validates and skips one value.
func (d *decoder) skip(depth int) error {
	if depth > maxDepth {
		return d.syntax("JSON nested more than %d levels deep", maxDepth)
	}
	d.skipWS()
	if d.pos >= len(d.data) {
		return d.syntax("unexpected end of input")
	}
	switch c := d.data[d.pos]; {
	case c == '{':
		return d.object(func(string) error { return d.skip(depth + 1) })
	case c == '[':
		return d.array(func() error { return d.skip(depth + 1) })
	case c == '"':
		// Skipping needs no string value; scan it without allocating.
		d.pos++
		for d.pos < len(d.data) {
			switch ch := d.data[d.pos]; {
			case ch == '"':
				d.pos++
				return nil
			case ch == '\\':
				d.pos += 2
				continue
			case ch < 0x20:
				return d.syntax("control character in string")
			}
			d.pos++
		}
		return d.syntax("unterminated string")
	case c == 't':
		return d.literal("true")
	case c == 'f':
		return d.literal("false")
	case c == 'n':
		return d.literal("null")
	case c == '-' || (c >= '0' && c <= '9'):
		_, _, err := d.number()
		return err
	}
	return d.syntax("invalid character '%c' looking for beginning of value", d.data[d.pos])
}

// object iterates the members of an object at pos, calling member with
// each key with pos at the member's value.
func (d *decoder) object(member func(key string) error) error {
	d.pos++ // '{'
	d.skipWS()
	if d.pos < len(d.data) && d.data[d.pos] == '}' {
		d.pos++
		return nil
	}
	for {
		d.skipWS()
		if d.pos >= len(d.data) || d.data[d.pos] != '"' {
			return d.syntax("expected a string object key")
		}
		key, err := d.key()
		if err != nil {
			return err
		}
		if err := d.expect(':'); err != nil {
			return err
		}
		d.skipWS()
		if err := member(key); err != nil {
			return err
		}
		d.skipWS()
		if d.pos >= len(d.data) {
			return d.syntax("unexpected end of input in object")
		}
		switch d.data[d.pos] {
		case ',':
			d.pos++
		case '}':
			d.pos++
			return nil
		default:
			return d.syntax("invalid character '%c' after object member", d.data[d.pos])
		}
	}
}

// array iterates the elements of an array at pos.
func (d *decoder) array(elem func() error) error {
	d.pos++ // '['
	d.skipWS()
	if d.pos < len(d.data) && d.data[d.pos] == ']' {
		d.pos++
		return nil
	}
	for {
		d.skipWS()
		if err := elem(); err != nil {
			return err
		}
		d.skipWS()
		if d.pos >= len(d.data) {
			return d.syntax("unexpected end of input in array")
		}
		switch d.data[d.pos] {
		case ',':
			d.pos++
		case ']':
			d.pos++
			return nil
		default:
			return d.syntax("invalid character '%c' after array element", d.data[d.pos])
		}
	}
}

const envelopeMessage = `JsonConverter with schemas.enable requires "schema" and "payload" fields and may not contain additional fields. If you are trying to deserialize plain JSON data, set schemas.enable=false in your converter configuration.`

// envelope finds the spans of "schema" and "payload" in a top-level
// envelope object.
func (d *decoder) envelope() (schema, payload [2]int, err error) {
	d.skipWS()
	var hasSchema, hasPayload bool
	keys := 0
	if d.pos == len(d.data) { // empty: Jackson reads a missing node, not an object
		return schema, payload, &data.Error{Msg: envelopeMessage}
	}
	if d.data[d.pos] == '{' {
		err = d.object(func(key string) error {
			start := d.pos
			if err := d.skip(1); err != nil {
				return err
			}
			switch key {
			case "schema":
				if !hasSchema {
					keys++
				}
				schema, hasSchema = [2]int{start, d.pos}, true
			case "payload":
				if !hasPayload {
					keys++
				}
				payload, hasPayload = [2]int{start, d.pos}, true
			default:
				keys++
			}
			return nil
		})
	} else {
		err = d.skip(0)
	}
	if err == nil {
		err = d.end()
	}
	if err != nil {
		return schema, payload, serializationError(err)
	}
	if !hasSchema || !hasPayload || keys != 2 {
		return schema, payload, &data.Error{Msg: envelopeMessage}
	}
	return schema, payload, nil
}

func fieldErr(name string, err error) error {
	var de *data.Error
	if errors.As(err, &de) {
		return &data.Error{Msg: `field "` + name + `": ` + de.Msg}
	}
	return err
}

// null resolves a JSON null (or an absent struct field) against schema.
func (d *decoder) null(s *data.Schema) (any, error) {
	switch {
	case s == nil:
		return nil, nil
	case s.Default != nil && d.c.replaceNull:
		return s.Default, nil
	case s.Optional:
		return nil, nil
	}
	return nil, dataError("Invalid null value for required %s field", s.Type.KafkaName())
}

// decode reads the value at pos as schema s (nil: schemaless).
func (d *decoder) decode(s *data.Schema, depth int) (any, error) {
	if depth > maxDepth {
		return nil, d.syntax("JSON nested more than %d levels deep", maxDepth)
	}
	d.skipWS()
	if d.pos >= len(d.data) {
		return nil, d.syntax("unexpected end of input")
	}
	if d.data[d.pos] == 'n' {
		if err := d.literal("null"); err != nil {
			return nil, err
		}
		return d.null(s)
	}
	if s == nil {
		return d.schemaless(depth)
	}
	if s.Name != "" {
		if v, done, err := d.logical(s); done {
			return v, err
		}
	}
	kind := d.kind()
	if kind == "INVALID" {
		return nil, d.syntax("invalid character '%c' looking for beginning of value", d.data[d.pos])
	}
	switch s.Type {
	case data.Int8, data.Int16, data.Int32, data.Int64:
		if kind != "NUMBER" {
			return nil, d.mismatch(s, kind, "a JSON number", depth)
		}
		return d.integer(s.Type)
	case data.Float32, data.Float64:
		return d.float(s, kind, depth)
	case data.Boolean:
		if kind != "BOOLEAN" {
			return nil, d.mismatch(s, kind, "true or false", depth)
		}
		if d.data[d.pos] == 't' {
			return true, d.literal("true")
		}
		return false, d.literal("false")
	case data.String:
		if kind != "STRING" {
			return nil, d.mismatch(s, kind, "a JSON string", depth)
		}
		return d.str()
	case data.Bytes:
		if kind != "STRING" {
			return nil, d.mismatch(s, kind, "a base64 JSON string", depth)
		}
		return d.bytes()
	case data.Array:
		if kind != "ARRAY" {
			return nil, d.mismatch(s, kind, "a JSON array", depth)
		}
		return d.arrayValue(s, depth)
	case data.Map:
		return d.mapValue(s, kind, depth)
	case data.Struct:
		if kind != "OBJECT" {
			if err := d.skip(depth); err != nil {
				return nil, err
			}
			return nil, dataError("Structs should be encoded as JSON objects, but found %s", kind)
		}
		return d.structValue(s, depth)
	}
	return nil, dataError("Unknown schema type: %s", s.Type)
}

// mismatch skips a value of JSON type kind that schema s does not accept
// and returns the error naming what s wants.
func (d *decoder) mismatch(s *data.Schema, kind, want string, depth int) error {
	if err := d.skip(depth); err != nil {
		return err
	}
	return dataError("Invalid value for %s field: expected %s, found %s", s.Type.KafkaName(), want, kind)
}

// float reads a float32 or float64: a JSON number, or one of the strings
// Jackson writes for non-finite numbers.
func (d *decoder) float(s *data.Schema, kind string, depth int) (any, error) {
	bits := 64
	if s.Type == data.Float32 {
		bits = 32
	}
	var f float64
	switch kind {
	case "NUMBER":
		text, _, err := d.number()
		if err != nil {
			return nil, err
		}
		f, err = strconv.ParseFloat(string(text), bits)
		if err != nil && !errors.Is(err, strconv.ErrRange) {
			return nil, d.syntax("invalid number")
		}
	case "STRING": // Jackson writes non-finite numbers as strings
		str, err := d.str()
		if err != nil {
			return nil, err
		}
		switch str {
		case "NaN":
			f = math.NaN()
		case "Infinity":
			f = math.Inf(1)
		case "-Infinity":
			f = math.Inf(-1)
		default:
			return nil, dataError("Invalid value for %s field: expected a JSON number, found STRING", s.Type.KafkaName())
		}
	default:
		return nil, d.mismatch(s, kind, "a JSON number", depth)
	}
	if bits == 32 {
		return float32(f), nil
	}
	return f, nil
}

// bytes reads a base64 string.
func (d *decoder) bytes() (any, error) {
	str, err := d.str()
	if err != nil {
		return nil, err
	}
	b, err := decodeBase64(str)
	if err != nil {
		return nil, dataError("Invalid bytes field: %v", err)
	}
	return b, nil
}

// arrayValue reads a JSON array whose elements are s.Value.
func (d *decoder) arrayValue(s *data.Schema, depth int) (any, error) {
	out := []any{}
	i := 0
	err := d.array(func() error {
		v, err := d.decode(s.Value, depth+1)
		if err != nil {
			return fieldErr(strconv.Itoa(i), err)
		}
		out = append(out, v)
		i++
		return nil
	})
	return out, err
}

func (d *decoder) integer(t data.Type) (any, error) {
	text, integral, err := d.number()
	if err != nil {
		return nil, err
	}
	bits := 64
	switch t {
	case data.Int8:
		bits = 8
	case data.Int16:
		bits = 16
	case data.Int32:
		bits = 32
	}
	var n int64
	if integral {
		n, err = strconv.ParseInt(string(text), 10, bits)
		if err != nil {
			return nil, dataError("Invalid value for %s field: %s is out of range", t.KafkaName(), text)
		}
	} else {
		// 1.0 and 1e3 are integers written as decimals; 1.5 is not.
		f, perr := strconv.ParseFloat(string(text), 64)
		if perr != nil || f != math.Trunc(f) {
			return nil, dataError("Invalid value for %s field: expected an integer, found %s", t.KafkaName(), text)
		}
		lim := math.Ldexp(1, bits-1)
		if f < -lim || f >= lim {
			return nil, dataError("Invalid value for %s field: %s is out of range", t.KafkaName(), text)
		}
		n = int64(f)
	}
	switch t {
	case data.Int8:
		return int8(n), nil
	case data.Int16:
		return int16(n), nil
	case data.Int32:
		return int32(n), nil
	}
	return n, nil
}

func (d *decoder) mapValue(s *data.Schema, kind string, depth int) (any, error) {
	if s.Key == nil || s.Value == nil {
		return nil, dataError("Map schema did not specify the key and value types")
	}
	if s.Key.Type == data.String {
		if kind != "OBJECT" {
			if err := d.skip(depth); err != nil {
				return nil, err
			}
			return nil, dataError("Maps with string fields should be encoded as JSON objects, but found %s", kind)
		}
		out := map[string]any{}
		err := d.object(func(key string) error {
			v, err := d.decode(s.Value, depth+1)
			if err != nil {
				return fieldErr(key, err)
			}
			out[key] = v
			return nil
		})
		return out, err
	}
	if kind != "ARRAY" {
		if err := d.skip(depth); err != nil {
			return nil, err
		}
		return nil, dataError("Maps with non-string fields should be encoded as JSON array of tuples, but found %s", kind)
	}
	switch s.Key.Type {
	case data.Bytes, data.Array, data.Map:
		return nil, dataError("Maps with %s keys are not supported", s.Key.Type.KafkaName())
	}
	out := map[any]any{}
	err := d.array(func() error {
		if d.kind() != "ARRAY" {
			k := d.kind()
			if err := d.skip(depth + 1); err != nil {
				return err
			}
			return dataError("Found invalid map entry instead of array tuple: %s", k)
		}
		var kv [2]any
		n := 0
		err := d.array(func() error {
			var sch *data.Schema = s.Key
			if n == 1 {
				sch = s.Value
			}
			if n >= 2 {
				n++
				return d.skip(depth + 2)
			}
			v, err := d.decode(sch, depth+2)
			if err != nil {
				return err
			}
			kv[n] = v
			n++
			return nil
		})
		if err != nil {
			return err
		}
		if n != 2 {
			return dataError("Found invalid map entry, expected length 2 but found :%d", n)
		}
		out[kv[0]] = kv[1]
		return nil
	})
	return out, err
}

func (d *decoder) structValue(s *data.Schema, depth int) (any, error) {
	idx := d.c.fieldIndex(s)
	var valsBuf [32]any
	var foundBuf [32]bool
	vals, found := valsBuf[:0], foundBuf[:0]
	if n := len(s.Fields); n > len(valsBuf) {
		vals, found = make([]any, n), make([]bool, n)
	} else {
		vals, found = valsBuf[:n], foundBuf[:n]
	}
	err := d.object(func(key string) error {
		i, ok := idx[key]
		if !ok { // Kafka ignores JSON fields the schema does not have
			return d.skip(depth + 1)
		}
		v, err := d.decode(s.Fields[i].Schema, depth+1)
		if err != nil {
			return fieldErr(key, err)
		}
		vals[i], found[i] = v, true
		return nil
	})
	if err != nil {
		return nil, err
	}
	st := data.NewStruct(s)
	for i, f := range s.Fields {
		v := vals[i]
		if !found[i] {
			if v, err = d.null(f.Schema); err != nil {
				return nil, fieldErr(f.Name, err)
			}
		}
		if err := st.PutField(f, v); err != nil {
			return nil, err
		}
	}
	return st, nil
}

func (d *decoder) schemaless(depth int) (any, error) {
	switch c := d.data[d.pos]; {
	case c == '{':
		size := 0
		if depth == 0 {
			size = d.c.topSize
		}
		out := make(map[string]any, size)
		err := d.object(func(key string) error {
			v, err := d.decode(nil, depth+1)
			out[key] = v
			return err
		})
		if depth == 0 {
			d.c.topSize = len(out)
		}
		return out, err
	case c == '[':
		out := []any{}
		err := d.array(func() error {
			v, err := d.decode(nil, depth+1)
			out = append(out, v)
			return err
		})
		return out, err
	case c == '"':
		return d.str()
	case c == 't':
		return true, d.literal("true")
	case c == 'f':
		return false, d.literal("false")
	case c == '-' || (c >= '0' && c <= '9'):
		text, integral, err := d.number()
		if err != nil {
			return nil, err
		}
		if integral {
			if n, err := strconv.ParseInt(string(text), 10, 64); err == nil {
				return n, nil
			}
			// Beyond int64: the nearest double, rather than Jackson's truncation.
		}
		f, err := strconv.ParseFloat(string(text), 64)
		if err != nil && !errors.Is(err, strconv.ErrRange) {
			return nil, d.syntax("invalid number")
		}
		return f, nil
	}
	return nil, d.syntax("invalid character '%c' looking for beginning of value", d.data[d.pos])
}

// logical decodes logical-type values; done=false when s is not logical.
func (d *decoder) logical(s *data.Schema) (v any, done bool, err error) {
	kind := d.kind()
	switch s.Name {
	case data.DecimalName:
		scale, serr := data.DecimalScale(s)
		if serr != nil {
			return nil, true, &data.Error{Msg: serr.Error()}
		}
		switch kind {
		case "NUMBER":
			text, _, err := d.number()
			if err != nil {
				return nil, true, err
			}
			dec, err := data.ParseDecimal(string(text))
			if err != nil {
				return nil, true, d.syntax("invalid number")
			}
			if dec, err = dec.Rescale(scale); err != nil {
				return nil, true, &data.Error{Msg: "Invalid value for Decimal field: " + err.Error()}
			}
			return dec, true, nil
		case "STRING":
			str, err := d.str()
			if err != nil {
				return nil, true, err
			}
			b, err := decodeBase64(str)
			if err != nil || len(b) == 0 {
				return nil, true, dataError("Invalid bytes for Decimal field")
			}
			return data.DecimalFromBytes(b, scale), true, nil
		}
		if err := d.skip(0); err != nil {
			return nil, true, err
		}
		return nil, true, dataError("Invalid type for Decimal, underlying representation should be numeric or bytes but was %s", kind)
	case data.DateName, data.TimeName, data.TimestampName:
		short := logicalShort(s.Name)
		var n int64
		ok := false
		if kind == "NUMBER" {
			text, integral, err := d.number()
			if err != nil {
				return nil, true, err
			}
			if integral {
				bits := 32
				if s.Name == data.TimestampName {
					bits = 64
				}
				n, err = strconv.ParseInt(string(text), 10, bits)
				ok = err == nil
			}
		} else if err := d.skip(0); err != nil {
			return nil, true, err
		}
		if !ok {
			if s.Name == data.TimestampName {
				return nil, true, dataError("Invalid type for Timestamp, underlying representation should be integral but was %s", kind)
			}
			return nil, true, dataError("Invalid type for %s, underlying representation should be integer but was %s", short, kind)
		}
		switch s.Name {
		case data.DateName:
			return data.DaysToDate(int32(n)), true, nil
		case data.TimeName:
			return data.MillisToTime(int32(n)), true, nil
		}
		return data.MillisToTimestamp(n), true, nil
	}
	return nil, false, nil
}

func decodeBase64(s string) ([]byte, error) {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		if b2, err2 := base64.RawStdEncoding.DecodeString(s); err2 == nil {
			return b2, nil
		}
		return nil, err
	}
	return b, nil
}

// schemaObject holds the members of a schema object as read, before they
// are checked: nested schemas and the default are spans of the input, parsed
// once the type is known.
type schemaObject struct {
	typ, name, doc, field string
	hasType, optional     bool
	version               int
	params                map[string]string
	items, keys, values   *[2]int
	fields, dflt          *[2]int
}

// schema parses a schema object (Kafka's JsonConverter.asConnectSchema) and
// the "field" name it carries when it describes a struct field: it reads
// the object's members, builds the schema of its type, then decodes and
// checks its default against it.
func (d *decoder) schema(depth int) (*data.Schema, string, error) {
	if depth > maxDepth {
		return nil, "", d.syntax("schema nested more than %d levels deep", maxDepth)
	}
	d.skipWS()
	if d.kind() != "OBJECT" {
		if err := d.skip(depth); err != nil {
			return nil, "", err
		}
		return nil, "", dataError("Schema must contain 'type' field")
	}
	var o schemaObject
	if err := d.object(func(key string) error { return d.schemaMember(&o, key, depth) }); err != nil {
		return nil, "", err
	}
	if !o.hasType {
		return nil, "", dataError("Schema must contain 'type' field")
	}
	b, err := d.schemaBuilder(&o, depth)
	if err != nil {
		return nil, "", err
	}
	if o.optional {
		b.Optional()
	}
	b.Name(o.name).Version(o.version).Doc(o.doc)
	for k, v := range o.params {
		b.Parameter(k, v)
	}
	s, err := b.Schema()
	if err != nil {
		return nil, "", &data.Error{Msg: err.Error()}
	}
	if err := d.schemaDefault(s, o.dflt, depth); err != nil {
		return nil, "", err
	}
	return s, o.field, nil
}

// schemaMember reads the value of one member of a schema object into o.
// A member of an unexpected JSON type, or an unknown one, is skipped, as
// Kafka ignores it.
func (d *decoder) schemaMember(o *schemaObject, key string, depth int) error {
	var err error
	switch key {
	case "type":
		if d.kind() == "STRING" {
			o.typ, err = d.str()
			o.hasType = true
			return err
		}
	case "optional":
		if d.kind() == "BOOLEAN" {
			o.optional = d.data[d.pos] == 't'
		}
	case "name":
		return d.schemaString(&o.name, depth)
	case "doc":
		return d.schemaString(&o.doc, depth)
	case "field":
		return d.schemaString(&o.field, depth)
	case "version":
		if d.kind() == "NUMBER" {
			return d.schemaVersion(&o.version)
		}
	case "parameters":
		if d.kind() == "OBJECT" {
			o.params, err = d.schemaParams(depth)
			return err
		}
	case "items":
		o.items, err = d.span(depth + 1)
		return err
	case "keys":
		o.keys, err = d.span(depth + 1)
		return err
	case "values":
		o.values, err = d.span(depth + 1)
		return err
	case "fields":
		o.fields, err = d.span(depth + 1)
		return err
	case "default":
		o.dflt, err = d.span(depth + 1)
		return err
	}
	return d.skip(depth + 1)
}

// schemaString reads a string member into dst; another JSON type is skipped.
func (d *decoder) schemaString(dst *string, depth int) error {
	if d.kind() != "STRING" {
		return d.skip(depth + 1)
	}
	var err error
	*dst, err = d.str()
	return err
}

// schemaVersion reads the version number: an integral int32, else ignored.
func (d *decoder) schemaVersion(dst *int) error {
	text, integral, err := d.number()
	if err != nil {
		return err
	}
	if integral {
		if n, err := strconv.ParseInt(string(text), 10, 32); err == nil {
			*dst = int(n)
		}
	}
	return nil
}

// schemaParams reads the parameters object, whose values must be strings.
func (d *decoder) schemaParams(depth int) (map[string]string, error) {
	params := map[string]string{}
	err := d.object(func(k string) error {
		if d.kind() != "STRING" {
			if err := d.skip(depth + 2); err != nil {
				return err
			}
			return dataError("Schema parameters must have string values.")
		}
		v, err := d.str()
		params[k] = v
		return err
	})
	return params, err
}

// span skips the value at pos and returns where it starts and ends.
func (d *decoder) span(depth int) (*[2]int, error) {
	start := d.pos
	if err := d.skip(depth); err != nil {
		return nil, err
	}
	return &[2]int{start, d.pos}, nil
}

// sub is a decoder of the value in span sp.
func (d *decoder) sub(sp *[2]int) *decoder {
	return &decoder{c: d.c, data: d.data[:sp[1]], pos: sp[0]}
}

// isNullSpan reports whether a member is absent or null.
func (d *decoder) isNullSpan(sp *[2]int) bool {
	return sp == nil || string(d.data[sp[0]:sp[1]]) == "null"
}

// schemaBuilder starts the schema of o's type, parsing the nested schemas
// that type needs.
func (d *decoder) schemaBuilder(o *schemaObject, depth int) (*data.Builder, error) {
	switch o.typ {
	case "boolean", "int8", "int16", "int32", "int64", "float", "double", "bytes", "string":
		return data.Build(data.Type(o.typ)), nil
	case "array":
		if d.isNullSpan(o.items) {
			return nil, dataError("Array schema did not specify the element type")
		}
		elem, _, err := d.sub(o.items).schema(depth + 1)
		if err != nil {
			return nil, err
		}
		return data.ArrayOf(elem), nil
	case "map":
		return d.mapSchema(o, depth)
	case "struct":
		return d.structSchema(o, depth)
	}
	return nil, dataError("Unknown schema type: %s", o.typ)
}

func (d *decoder) mapSchema(o *schemaObject, depth int) (*data.Builder, error) {
	if d.isNullSpan(o.keys) {
		return nil, dataError("Map schema did not specify the key type")
	}
	if d.isNullSpan(o.values) {
		return nil, dataError("Map schema did not specify the value type")
	}
	ks, _, err := d.sub(o.keys).schema(depth + 1)
	if err != nil {
		return nil, err
	}
	vs, _, err := d.sub(o.values).schema(depth + 1)
	if err != nil {
		return nil, err
	}
	return data.MapOf(ks, vs), nil
}

func (d *decoder) structSchema(o *schemaObject, depth int) (*data.Builder, error) {
	b := data.Build(data.Struct)
	if o.fields == nil || d.sub(o.fields).kind() != "ARRAY" {
		return nil, dataError(`Struct schema's "fields" argument is not an array.`)
	}
	fd := d.sub(o.fields)
	err := fd.array(func() error {
		fs, fname, err := fd.schema(depth + 1)
		if err != nil {
			return err
		}
		if fname == "" {
			return dataError("Struct schema's field name not specified properly")
		}
		b.Field(fname, fs)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return b, nil
}

// schemaDefault decodes the default value in span dflt (if any) as s, checks
// it against s and sets it.
func (d *decoder) schemaDefault(s *data.Schema, dflt *[2]int, depth int) error {
	if dflt == nil {
		return nil
	}
	v, err := d.sub(dflt).decode(s, depth+1)
	if err != nil || v == nil {
		return err
	}
	s.Default = v
	if err := data.Validate(v, s); err != nil {
		return &data.Error{Msg: "Invalid default value: " + err.Error()}
	}
	return nil
}
