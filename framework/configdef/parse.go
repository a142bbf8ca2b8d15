package configdef

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/connectd/connectd/framework/internal/javafmt"
)

var commaWithWhitespace = regexp.MustCompile(`\s*,\s*`)

// ParseValue parses one raw property value into the Go type of t, with
// Kafka's rules: surrounding whitespace is trimmed; BOOLEAN accepts
// true/false in any case; INT, SHORT and LONG must be decimal integers that
// fit 32, 16 and 64 bits; DOUBLE is a decimal or scientific number; LIST
// splits on commas and trims each element (an empty string is the empty
// list); STRING and CLASS are the trimmed text; PASSWORD becomes a Secret.
//
// The error is a *ConfigError in Kafka's wording, naming key and the
// expected form.
func ParseValue(key string, t Type, raw string) (any, error) {
	trimmed := strings.TrimSpace(raw)
	switch t {
	case Boolean:
		switch {
		case strings.EqualFold(trimmed, "true"):
			return true, nil
		case strings.EqualFold(trimmed, "false"):
			return false, nil
		}
		return nil, Invalid(key, raw, "Expected value to be either true or false")
	case String, Class:
		return trimmed, nil
	case Password:
		return NewSecret(trimmed), nil
	case Int:
		n, err := strconv.ParseInt(trimmed, 10, 32)
		if err != nil {
			return nil, Invalid(key, raw, "Not a number of type INT")
		}
		return int32(n), nil
	case Short:
		n, err := strconv.ParseInt(trimmed, 10, 16)
		if err != nil {
			return nil, Invalid(key, raw, "Not a number of type SHORT")
		}
		return int16(n), nil
	case Long:
		n, err := strconv.ParseInt(trimmed, 10, 64)
		if err != nil {
			return nil, Invalid(key, raw, "Not a number of type LONG")
		}
		return n, nil
	case Double:
		f, ok := parseJavaDouble(trimmed)
		if !ok {
			return nil, Invalid(key, raw, "Not a number of type DOUBLE")
		}
		return f, nil
	case List:
		if trimmed == "" {
			return []string{}, nil
		}
		return commaWithWhitespace.Split(trimmed, -1), nil
	}
	return nil, fmt.Errorf("configdef: unknown type %q of key %q", t, key)
}

// parseJavaDouble accepts what Double.parseDouble accepts for ordinary
// input, including the optional d/D/f/F suffix and "NaN"/"Infinity".
func parseJavaDouble(s string) (float64, bool) {
	switch s {
	case "NaN", "+NaN", "-NaN":
		return math.NaN(), true
	case "Infinity", "+Infinity":
		return math.Inf(1), true
	case "-Infinity":
		return math.Inf(-1), true
	}
	if n := len(s); n > 1 {
		switch s[n-1] {
		case 'd', 'D', 'f', 'F':
			s = s[:n-1]
		}
	}
	if s == "" || strings.ContainsAny(s, "_nNiI") { // no Go-only forms (1_000, inf, nan)
		return 0, false
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, false
	}
	return f, true
}

// normalizeDefault turns a default given in Define into the canonical Go
// type of t.
func normalizeDefault(key string, t Type, v any) (any, error) {
	if s, ok := v.(string); ok && t != String && t != Class {
		if t == Password {
			return NewSecret(s), nil
		}
		return ParseValue(key, t, s)
	}
	switch t {
	case Boolean:
		if b, ok := v.(bool); ok {
			return b, nil
		}
	case String, Class:
		if s, ok := v.(string); ok {
			return s, nil
		}
	case Password:
		if s, ok := v.(Secret); ok {
			return s, nil
		}
	case Int, Short, Long:
		n, ok := toInt64(v)
		if !ok {
			break
		}
		switch t {
		case Int:
			if n < math.MinInt32 || n > math.MaxInt32 {
				return nil, fmt.Errorf("%d does not fit INT", n)
			}
			return int32(n), nil
		case Short:
			if n < math.MinInt16 || n > math.MaxInt16 {
				return nil, fmt.Errorf("%d does not fit SHORT", n)
			}
			return int16(n), nil
		}
		return n, nil
	case Double:
		switch f := v.(type) {
		case float64:
			return f, nil
		case float32:
			return float64(f), nil
		}
		if n, ok := toInt64(v); ok {
			return float64(n), nil
		}
	case List:
		if l, ok := v.([]string); ok {
			return append([]string{}, l...), nil
		}
	}
	return nil, fmt.Errorf("a %T cannot be the default of a %s key", v, t)
}

func toInt64(v any) (int64, bool) {
	switch n := v.(type) {
	case int:
		return int64(n), true
	case int8:
		return int64(n), true
	case int16:
		return int64(n), true
	case int32:
		return int64(n), true
	case int64:
		return n, true
	case uint8:
		return int64(n), true
	case uint16:
		return int64(n), true
	case uint32:
		return int64(n), true
	}
	return 0, false
}

// FormatValue renders a parsed value as the REST API shows it (Kafka's
// ConfigDef.convertToString): nil stays nil, LIST elements are joined with
// ",", PASSWORD is "[hidden]", DOUBLE is Java's Double.toString.
func FormatValue(v any, t Type) *string {
	if v == nil {
		return nil
	}
	var s string
	switch x := v.(type) {
	case []string:
		s = strings.Join(x, ",")
	case Secret:
		s = Hidden
	default:
		if t == Password {
			s = Hidden
		} else {
			s = javaString(v)
		}
	}
	return &s
}

// javaString renders v as Java's toString would, for messages: lists as
// "[a, b]", null as "null", secrets hidden.
func javaString(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return x
	case Secret:
		return Hidden
	case bool:
		return strconv.FormatBool(x)
	case float64:
		return javafmt.FormatDouble(x)
	case float32:
		return javafmt.FormatFloat(x)
	case []string:
		return "[" + strings.Join(x, ", ") + "]"
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = javaString(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case fmt.Stringer:
		return x.String()
	}
	if n, ok := toInt64(v); ok {
		return strconv.FormatInt(n, 10)
	}
	return fmt.Sprint(v)
}
