package wire

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"
)

// TestAppendJSONObjectMatchesEncodingJSON: whichever path it takes, the
// bytes are json.Marshal's (offsets are compared and stored as bytes).
func TestAppendJSONObjectMatchesEncodingJSON(t *testing.T) {
	cases := []map[string]any{
		nil,
		{},
		{"p": "0"},
		{"i": 42},
		{"b": "x", "a": 1, "c": true, "d": nil},
		{"file": "/var/log/app.log", "line": int64(-7), "pos": uint64(math.MaxUint64)},
		{"f": 1.5, "g": 0.0, "h": math.Copysign(0, -1), "i": 1e20, "j": 1e21, "k": 1e-6, "l": 1e-7, "m": 123456789.125},
		{"esc": "a<b>&c", "q": `"quoted"`, "bs": `a\b`, "nl": "a\nb", "u": "é", "ctl": "\x01", "ls": "\u2028"},
		{"<key>": 1},
		{"nested": map[string]any{"a": 1}},
		{"list": []any{1, "2"}},
		{"i32": int32(-3), "u32": uint32(3), "i8": int8(1), "f32": float32(0.1)},
		{"a": 1, "b": 2, "c": 3, "d": 4, "e": 5, "f": 6, "g": 7, "h": 8, "i": 9}, // more than the direct path takes
		{"Z": 1, "a": 2, "_": 3, "0": 4, "": 5},
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		m := map[string]any{}
		for range r.IntN(6) {
			m[randString(r)] = randValue(r)
		}
		cases = append(cases, m)
	}
	// Runs of maps with the same keys take the encoder's lookup path.
	for i := range 500 {
		cases = append(cases, map[string]any{"i": i}, map[string]any{"i": i, "p": "x"}, map[string]any{"p": "x", "i": i})
		if i%7 == 0 {
			cases = append(cases, map[string]any{"i": "a\nb"}, map[string]any{"j": i}, map[string]any{"i": []int{i}})
		}
	}
	var enc ObjectEncoder
	for _, m := range cases {
		want, werr := json.Marshal(m)
		got, gerr := AppendJSONObject([]byte("prefix"), m)
		if (werr == nil) != (gerr == nil) {
			t.Fatalf("%#v: error %v, json.Marshal's %v", m, gerr, werr)
		}
		if werr == nil && string(got) != "prefix"+string(want) {
			t.Fatalf("%#v:\n got %s\nwant prefix%s", m, got, want)
		}
		got, gerr = enc.Append([]byte("prefix"), m)
		if (werr == nil) != (gerr == nil) {
			t.Fatalf("encoder: %#v: error %v, json.Marshal's %v", m, gerr, werr)
		}
		if werr == nil && string(got) != "prefix"+string(want) {
			t.Fatalf("encoder: %#v:\n got %s\nwant prefix%s", m, got, want)
		}
	}
}

func randString(r *rand.Rand) string {
	const alphabet = "abcXYZ019 _-./:<>&\"\\\n\x7fé"
	runes := []rune(alphabet)
	b := make([]rune, r.IntN(5))
	for i := range b {
		if r.IntN(4) == 0 {
			b[i] = runes[r.IntN(len(runes))]
		} else {
			b[i] = rune('a' + r.IntN(26))
		}
	}
	return string(b)
}

func randValue(r *rand.Rand) any {
	switch r.IntN(9) {
	case 0:
		return nil
	case 1:
		return randString(r)
	case 2:
		return r.IntN(2) == 0
	case 3:
		return r.Int64() - r.Int64()
	case 4:
		return r.Int()
	case 5:
		return r.NormFloat64() * math.Pow(10, float64(r.IntN(50)-25))
	case 6:
		return float64(r.IntN(1 << 20))
	case 7:
		return uint64(r.Uint64())
	}
	return map[string]any{"x": r.IntN(9)}
}

func BenchmarkAppendJSONObject(b *testing.B) {
	m := map[string]any{"p": "0", "i": 12345}
	var buf []byte
	b.Run("direct", func(b *testing.B) {
		for b.Loop() {
			buf, _ = AppendJSONObject(buf[:0], m)
		}
	})
	b.Run("encoder", func(b *testing.B) {
		var enc ObjectEncoder
		for b.Loop() {
			buf, _ = enc.Append(buf[:0], m)
		}
	})
	b.Run("encoding/json", func(b *testing.B) {
		for b.Loop() {
			buf, _ = json.Marshal(m)
		}
	})
}
