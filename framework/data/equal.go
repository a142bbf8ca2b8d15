package data

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/connectd/connectd/framework/internal/javafmt"
)

// ValueEqual reports whether two Connect values are equal, deeply: bytes by
// content, structs by schema and fields, decimals by value and scale, times
// by instant, floats with NaN equal to NaN (as Java's equals does), lists
// and maps element-wise.
func ValueEqual(a, b any) bool {
	switch x := a.(type) {
	case nil:
		return b == nil
	case []byte:
		y, ok := b.([]byte)
		return ok && bytes.Equal(x, y)
	case *StructValue:
		y, ok := b.(*StructValue)
		return ok && x.Equal(y)
	case Decimal:
		y, ok := b.(Decimal)
		return ok && x.Equal(y)
	case time.Time:
		y, ok := b.(time.Time)
		return ok && x.Equal(y)
	case float64:
		y, ok := b.(float64)
		return ok && (x == y || (math.IsNaN(x) && math.IsNaN(y)))
	case float32:
		y, ok := b.(float32)
		return ok && (x == y || (x != x && y != y))
	case []any:
		y, ok := b.([]any)
		return ok && listEqual(x, y)
	case map[string]any:
		y, ok := b.(map[string]any)
		return ok && mapEqual(x, y)
	case map[any]any:
		y, ok := b.(map[any]any)
		return ok && mapEqual(x, y)
	}
	return isComparable(a) && isComparable(b) && a == b
}

func listEqual(x, y []any) bool {
	if len(x) != len(y) {
		return false
	}
	for i := range x {
		if !ValueEqual(x[i], y[i]) {
			return false
		}
	}
	return true
}

func mapEqual[K comparable](x, y map[K]any) bool {
	if len(x) != len(y) {
		return false
	}
	for k, v := range x {
		w, ok := y[k]
		if !ok || !ValueEqual(v, w) {
			return false
		}
	}
	return true
}

func isComparable(v any) bool {
	switch v.(type) {
	case bool, string, int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64, float32, float64:
		return true
	}
	return false
}

// ValueString renders a value for messages and logs, like Java's toString
// of the corresponding Connect value: maps "{a=1, b=2}" (keys sorted),
// lists "[1, 2]", floats as Java prints them, bytes base64-encoded.
func ValueString(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return x
	case bool:
		return strconv.FormatBool(x)
	case float64:
		return javafmt.FormatDouble(x)
	case float32:
		return javafmt.FormatFloat(x)
	case []byte:
		return base64.StdEncoding.EncodeToString(x)
	case time.Time:
		return x.UTC().Format("2006-01-02T15:04:05.000Z")
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = ValueString(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case map[string]any:
		parts := make([]string, 0, len(x))
		for k, e := range x {
			parts = append(parts, k+"="+ValueString(e))
		}
		sort.Strings(parts)
		return "{" + strings.Join(parts, ", ") + "}"
	case map[any]any:
		parts := make([]string, 0, len(x))
		for k, e := range x {
			parts = append(parts, ValueString(k)+"="+ValueString(e))
		}
		sort.Strings(parts)
		return "{" + strings.Join(parts, ", ") + "}"
	case fmt.Stringer:
		return x.String()
	}
	return fmt.Sprint(v)
}
