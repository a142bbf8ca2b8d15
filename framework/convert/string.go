package convert

import (
	"fmt"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/connectd/connectd/framework/configdef"
	"github.com/connectd/connectd/framework/data"
)

// EncodingConfig is StringConverter's character set key.
const EncodingConfig = "converter.encoding"

func stringDef() *configdef.Def {
	return converterTypeDef().Define(configdef.Key{
		Name: EncodingConfig, Type: configdef.String, Default: "UTF-8",
		Validator: configdef.Func("one of UTF-8, UTF-16, UTF-16BE, UTF-16LE, ISO-8859-1, US-ASCII (Java names and aliases, any case)",
			func(key string, v any) error {
				if _, ok := lookupCharset(v.(string)); !ok {
					return configdef.Invalid(key, v, "Unsupported character set; supported: UTF-8, UTF-16, UTF-16BE, UTF-16LE, ISO-8859-1, US-ASCII")
				}
				return nil
			}),
		Importance:    configdef.High,
		Documentation: "The name of the Java character set to use for encoding strings as byte arrays.",
		Width:         configdef.WidthMedium, DisplayName: "Encoding",
	})
}

// StringConverter converts strings to and from bytes in a character set
// (Kafka's org.apache.kafka.connect.storage.StringConverter). Other values
// are written as their text form.
type StringConverter struct {
	cs     charset
	schema *data.Schema
}

// Configure implements Converter.
func (c *StringConverter) Configure(props map[string]string, isKey bool) error {
	v, err := parseConfig(stringDef(), props, isKey)
	if err != nil {
		return err
	}
	c.cs, _ = lookupCharset(v.String(EncodingConfig))
	c.schema = data.OptionalSchema(data.String)
	return nil
}

// FromConnect writes the value's text (strings as they are; other values
// as Kafka's toString would) in the configured character set.
func (c *StringConverter) FromConnect(_ string, _ *data.Schema, value any) ([]byte, error) {
	if value == nil {
		return nil, nil
	}
	s, ok := value.(string)
	if !ok {
		s = data.ValueString(value)
	}
	return c.cs.encode(s)
}

// ToConnect decodes the bytes with an optional STRING schema.
func (c *StringConverter) ToConnect(_ string, b []byte) (*data.Schema, any, error) {
	if c.schema == nil {
		c.schema = data.OptionalSchema(data.String)
	}
	if b == nil {
		return c.schema, nil, nil
	}
	s, err := c.cs.decode(b)
	if err != nil {
		return nil, nil, err
	}
	return c.schema, s, nil
}

type charset int

const (
	utf8CS charset = iota
	utf16CS
	utf16BE
	utf16LE
	latin1
	usASCII
)

func lookupCharset(name string) (charset, bool) {
	switch strings.ToUpper(strings.TrimSpace(name)) {
	case "UTF-8", "UTF8", "UNICODE-1-1-UTF-8":
		return utf8CS, true
	case "UTF-16", "UTF16", "UTF_16":
		return utf16CS, true
	case "UTF-16BE", "UTF_16BE", "X-UTF-16BE", "UNICODEBIGUNMARKED":
		return utf16BE, true
	case "UTF-16LE", "UTF_16LE", "X-UTF-16LE", "UNICODELITTLEUNMARKED":
		return utf16LE, true
	case "ISO-8859-1", "ISO8859_1", "ISO_8859_1", "LATIN1", "L1", "ISO-LATIN-1", "8859_1", "CP819", "IBM819":
		return latin1, true
	case "US-ASCII", "ASCII", "ASCII7", "646", "ISO646-US", "DEFAULT":
		return usASCII, true
	}
	return 0, false
}

func (cs charset) encode(s string) ([]byte, error) {
	switch cs {
	case utf8CS:
		if !utf8.ValidString(s) {
			s = strings.ToValidUTF8(s, "\uFFFD")
		}
		return []byte(s), nil
	case utf16CS, utf16BE, utf16LE:
		units := utf16.Encode([]rune(s))
		out := make([]byte, 0, 2*len(units)+2)
		if cs == utf16CS { // Java's UTF-16 encoder writes a big-endian BOM
			out = append(out, 0xFE, 0xFF)
		}
		for _, u := range units {
			if cs == utf16LE {
				out = append(out, byte(u), byte(u>>8))
			} else {
				out = append(out, byte(u>>8), byte(u))
			}
		}
		return out, nil
	case latin1, usASCII:
		max := rune(0xFF)
		if cs == usASCII {
			max = 0x7F
		}
		out := make([]byte, 0, len(s))
		for _, r := range s {
			if r > max {
				out = append(out, '?') // Java replaces unmappable characters
				continue
			}
			out = append(out, byte(r))
		}
		return out, nil
	}
	return nil, fmt.Errorf("unknown charset %d", cs)
}

func (cs charset) decode(b []byte) (string, error) {
	switch cs {
	case utf8CS:
		if utf8.Valid(b) {
			return string(b), nil
		}
		return strings.ToValidUTF8(string(b), "\uFFFD"), nil
	case utf16CS, utf16BE, utf16LE:
		le := cs == utf16LE
		if cs == utf16CS && len(b) >= 2 {
			switch {
			case b[0] == 0xFE && b[1] == 0xFF:
				b = b[2:]
			case b[0] == 0xFF && b[1] == 0xFE:
				b, le = b[2:], true
			}
		}
		units := make([]uint16, 0, len(b)/2)
		for i := 0; i+1 < len(b); i += 2 {
			if le {
				units = append(units, uint16(b[i])|uint16(b[i+1])<<8)
			} else {
				units = append(units, uint16(b[i])<<8|uint16(b[i+1]))
			}
		}
		s := string(utf16.Decode(units))
		if len(b)%2 == 1 {
			s += "\uFFFD"
		}
		return s, nil
	case latin1, usASCII:
		var sb strings.Builder
		sb.Grow(len(b))
		for _, c := range b {
			if cs == usASCII && c > 0x7F {
				sb.WriteRune('\uFFFD')
				continue
			}
			sb.WriteRune(rune(c))
		}
		return sb.String(), nil
	}
	return "", fmt.Errorf("unknown charset %d", cs)
}
