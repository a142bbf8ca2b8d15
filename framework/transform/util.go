package transform

import (
	"fmt"
	"maps"
	"regexp"
	"strconv"
	"strings"

	"github.com/connectd/connectd/framework/configdef"
	"github.com/connectd/connectd/framework/data"
)

// operand selects the record key or value, for the $Key/$Value classes.
type operand int

const (
	opKey operand = iota
	opValue
)

func (o operand) get(r *Record) (*data.Schema, any) {
	if o == opKey {
		return r.KeySchema, r.Key
	}
	return r.ValueSchema, r.Value
}

func (o operand) set(r *Record, s *data.Schema, v any) {
	if o == opKey {
		r.KeySchema, r.Key = s, v
	} else {
		r.ValueSchema, r.Value = s, v
	}
}

func (o operand) setValue(r *Record, v any) {
	if o == opKey {
		r.Key = v
	} else {
		r.Value = v
	}
}

// typeName names a value's type in messages ("null" for nil).
func typeName(v any) string {
	if v == nil {
		return "null"
	}
	return fmt.Sprintf("%T", v)
}

func dataErr(format string, args ...any) error { return &data.Error{Msg: fmt.Sprintf(format, args...)} }

func requireMap(v any, purpose string) (map[string]any, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, dataErr("Only Map objects supported in absence of schema for [%s], found: %s", purpose, typeName(v))
	}
	return m, nil
}

func requireStruct(v any, purpose string) (*data.StructValue, error) {
	s, ok := v.(*data.StructValue)
	if !ok || s == nil {
		return nil, dataErr("Only Struct objects supported for [%s], found: %s", purpose, typeName(v))
	}
	return s, nil
}

func requireSink(r *Record, purpose string) error {
	if !r.Sink {
		return dataErr("Only SinkRecord supported for [%s], found: SourceRecord", purpose)
	}
	return nil
}

// schemaCache remembers derived schemas per input schema, like Kafka's
// 16-entry LRU caches, so that a stream of records with one schema derives
// it once and every output record shares one *Schema.
type schemaCache struct {
	m map[*data.Schema]*data.Schema
}

func (c *schemaCache) get(s *data.Schema) *data.Schema { return c.m[s] }

func (c *schemaCache) put(s, derived *data.Schema) {
	if c.m == nil || len(c.m) >= 16 {
		c.m = make(map[*data.Schema]*data.Schema, 16)
	}
	c.m[s] = derived
}

// fieldValue reads a struct field with or without its default, per the
// transform's replace.null.with.default setting.
func fieldValue(st *data.StructValue, i int, withDefault bool) any {
	if withDefault {
		return st.At(i)
	}
	return st.RawAt(i)
}

// copyMap returns a shallow copy of m with room for extra entries.
func copyMap(m map[string]any, extra int) map[string]any {
	out := make(map[string]any, len(m)+extra)
	maps.Copy(out, m)
	return out
}

// replaceNullDef is the replace.null.with.default key that several SMTs share.
func replaceNullDef() configdef.Key {
	return configdef.Key{Name: "replace.null.with.default", Type: configdef.Boolean, Default: true, Importance: configdef.Medium,
		Documentation: "Whether to replace fields that have a default value and that are null to the default value. When set to true, the default value is used, otherwise null is used."}
}

// fullMatch compiles expr so that it must match the whole input, like
// Java's Matcher.matches().
func fullMatch(expr string) (*regexp.Regexp, error) {
	if _, err := regexp.Compile(expr); err != nil {
		return nil, err
	}
	return regexp.Compile(`^(?:` + expr + `)$`)
}

// javaReplacement translates a java.util.regex replacement string ($1,
// ${name}, \x escapes) into a regexp.Expand template for re, with Java's
// rules for multi-digit group references ($12 is group 12 only if it
// exists, else group 1 followed by "2").
func javaReplacement(repl string, re *regexp.Regexp) (string, error) {
	var b strings.Builder
	groups := re.NumSubexp()
	for i := 0; i < len(repl); {
		c := repl[i]
		switch c {
		case '\\':
			i++
			if i >= len(repl) {
				return "", fmt.Errorf("character to be escaped is missing")
			}
			if repl[i] == '$' {
				b.WriteString("$$")
			} else {
				b.WriteByte(repl[i])
			}
			i++
		case '$':
			i++
			if i >= len(repl) {
				return "", fmt.Errorf("illegal group reference: group index is missing")
			}
			if repl[i] == '{' {
				end := strings.IndexByte(repl[i:], '}')
				if end < 0 {
					return "", fmt.Errorf("named capturing group is missing trailing '}'")
				}
				name := repl[i+1 : i+end]
				if name == "" || re.SubexpIndex(name) < 0 {
					return "", fmt.Errorf("no group with name {%s}", name)
				}
				b.WriteString("${" + name + "}")
				i += end + 1
				continue
			}
			if repl[i] < '0' || repl[i] > '9' {
				return "", fmt.Errorf("illegal group reference")
			}
			ref := int(repl[i] - '0')
			if ref > groups {
				return "", fmt.Errorf("no group %d", ref)
			}
			i++
			for i < len(repl) && repl[i] >= '0' && repl[i] <= '9' {
				next := ref*10 + int(repl[i]-'0')
				if next > groups {
					break
				}
				ref = next
				i++
			}
			b.WriteString("${" + strconv.Itoa(ref) + "}")
		default:
			b.WriteByte(c)
			i++
		}
	}
	return b.String(), nil
}
