package aerospike

import (
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/connectd/connectd/framework/data"
	"github.com/connectd/connectd/framework/sdk"
)

func testMapper(t *testing.T, kv ...string) *mapper {
	t.Helper()
	props := map[string]string{KeyHosts: "127.0.0.1:3000", KeyNamespace: "test", KeySet: "${topic}"}
	for i := 0; i+1 < len(kv); i += 2 {
		props[kv[i]] = kv[i+1]
	}
	cfg, errs := parseConfig(props)
	if len(errs) > 0 {
		t.Fatalf("config: %v", errs)
	}
	return newMapper(cfg)
}

func TestMapKeys(t *testing.T) {
	withHeader := func(r *sdk.SinkRecord, k, v string) *sdk.SinkRecord {
		r.Headers = append(r.Headers, sdk.Header{Key: k, Value: []byte(v)})
		return r
	}
	tests := []struct {
		name    string
		config  []string
		rec     *sdk.SinkRecord
		wantKey any    // user key value
		wantErr string // substring; "" = ok
	}{
		{name: "string record key", rec: rec("t", 0, 0, "abc", map[string]any{}), wantKey: "abc"},
		{name: "integer record key", rec: rec("t", 0, 0, int32(42), map[string]any{}), wantKey: int64(42)},
		{name: "bytes record key", rec: rec("t", 0, 0, []byte{1, 2}, map[string]any{}), wantKey: []byte{1, 2}},
		{name: "integer key as string", config: []string{KeyKeyType, "string"}, rec: rec("t", 0, 0, int64(7), map[string]any{}), wantKey: "7"},
		{name: "string key as integer", config: []string{KeyKeyType, "integer"}, rec: rec("t", 0, 0, " 12 ", map[string]any{}), wantKey: int64(12)},
		{name: "string key as bytes", config: []string{KeyKeyType, "bytes"}, rec: rec("t", 0, 0, "ab", map[string]any{}), wantKey: []byte("ab")},
		{name: "non-integer string as integer", config: []string{KeyKeyType, "integer"}, rec: rec("t", 0, 0, "x1", map[string]any{}), wantErr: "not an integer"},
		{name: "null record key", rec: rec("t", 0, 0, nil, map[string]any{}), wantErr: "record key is null"},
		{name: "empty record key", rec: rec("t", 0, 0, "", map[string]any{}), wantErr: "record key is empty"},
		{name: "empty bytes key", rec: rec("t", 0, 0, []byte{}, map[string]any{}), wantErr: "empty"},
		{name: "float key", rec: rec("t", 0, 0, 1.5, map[string]any{}), wantErr: "keys must be strings, integers or bytes"},
		{name: "map key", rec: rec("t", 0, 0, map[string]any{"a": 1}, map[string]any{}), wantErr: "keys must be"},
		{name: "uint64 key too big", rec: rec("t", 0, 0, uint64(math.MaxUint64), map[string]any{}), wantErr: "keys must be"},
		{name: "value field", config: []string{KeyKeySource, "value_field", KeyKeyField, "id"}, rec: rec("t", 0, 0, nil, map[string]any{"id": "u1"}), wantKey: "u1"},
		{name: "nested value field", config: []string{KeyKeySource, "value_field", KeyKeyField, "user.id"}, rec: rec("t", 0, 0, nil, map[string]any{"user": map[string]any{"id": int64(9)}}), wantKey: int64(9)},
		{name: "value field missing", config: []string{KeyKeySource, "value_field", KeyKeyField, "id"}, rec: rec("t", 0, 0, "k", map[string]any{"x": 1}), wantErr: "value field id is missing"},
		{name: "value field empty", config: []string{KeyKeySource, "value_field", KeyKeyField, "id"}, rec: rec("t", 0, 0, "k", map[string]any{"id": ""}), wantErr: "is empty"},
		{name: "value field of tombstone", config: []string{KeyKeySource, "value_field", KeyKeyField, "id"}, rec: rec("t", 0, 0, "k", nil), wantErr: "tombstone"},
		{name: "header", config: []string{KeyKeySource, "header", KeyKeyHeader, "id"}, rec: withHeader(withHeader(rec("t", 0, 0, nil, map[string]any{}), "id", "old"), "id", "h1"), wantKey: "h1"},
		{name: "header missing", config: []string{KeyKeySource, "header", KeyKeyHeader, "id"}, rec: rec("t", 0, 0, "k", map[string]any{}), wantErr: `header "id" is missing`},
		{name: "header empty", config: []string{KeyKeySource, "header", KeyKeyHeader, "id"}, rec: withHeader(rec("t", 0, 0, "k", map[string]any{}), "id", ""), wantErr: "is empty"},
		{name: "json number key", rec: rec("t", 0, 0, json.Number("5"), map[string]any{}), wantKey: int64(5)},
		{name: "set too long from topic", rec: rec(strings.Repeat("t", 64), 0, 0, "k", map[string]any{}), wantErr: "at most 63 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := testMapper(t, tt.config...)
			got, err := mapOne(m, tt.rec)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !errors.Is(err, ErrMapping) {
					t.Fatalf("err = %v, want ErrMapping containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if v := got.key.Value().GetObject(); !reflect.DeepEqual(v, tt.wantKey) {
				t.Fatalf("key = %#v, want %#v", v, tt.wantKey)
			}
			if got.key.SetName() != tt.rec.Topic || got.key.Namespace() != "test" {
				t.Fatalf("key %v: wrong namespace or set", got.key)
			}
		})
	}
}

func TestMapBins(t *testing.T) {
	schema := data.Build(data.Struct).
		Field("id", data.Build(data.Int64).MustSchema()).
		Field("price", data.DecimalSchema(2).MustSchema()).
		Field("at", data.TimestampSchema().MustSchema()).
		MustSchema()
	st := data.NewStruct(schema).
		MustPut("id", int64(3)).
		MustPut("price", data.NewDecimal(1234, 2)).
		MustPut("at", time.UnixMilli(1700000000123).UTC())
	tests := []struct {
		name    string
		config  []string
		value   any
		want    map[string]any
		wantErr string
	}{
		{name: "all fields", value: map[string]any{"b": "x", "a": int32(1), "c": 2.5, "d": true, "e": []byte{7}},
			want: map[string]any{"a": int64(1), "b": "x", "c": 2.5, "d": true, "e": []byte{7}}},
		{name: "nested map and list", value: map[string]any{"m": map[string]any{"x": int8(1), "l": []any{"a", uint16(2)}}},
			want: map[string]any{"m": map[string]any{"x": int64(1), "l": []any{"a", int64(2)}}}},
		{name: "null field", value: map[string]any{"a": nil}, want: map[string]any{"a": nil}},
		{name: "include", config: []string{KeyBinsInclude, "a,c"}, value: map[string]any{"a": "1", "b": "2", "c": "3"}, want: map[string]any{"a": "1", "c": "3"}},
		{name: "exclude", config: []string{KeyBinsExclude, "b"}, value: map[string]any{"a": "1", "b": "2"}, want: map[string]any{"a": "1"}},
		{name: "rename", config: []string{KeyBinsRename, "a_field_name_too_long:short"}, value: map[string]any{"a_field_name_too_long": "1"}, want: map[string]any{"short": "1"}},
		{name: "struct with logical types", value: st, want: map[string]any{"id": int64(3), "price": "12.34", "at": int64(1700000000123)}},
		{name: "json numbers", value: map[string]any{"i": json.Number("12"), "f": json.Number("1.5")}, want: map[string]any{"i": int64(12), "f": 1.5}},
		{name: "field name too long", value: map[string]any{"a_field_name_too_long": 1}, wantErr: `bin "a_field_name_too_long" of 21 bytes`},
		{name: "field onto positions bin", value: map[string]any{"kafka_pos": 1}, wantErr: "positions.bin"},
		{name: "rename collides", config: []string{KeyBinsRename, "a:b"}, value: map[string]any{"a": 1, "b": 2}, wantErr: `two fields map to bin "b"`},
		{name: "empty field name", value: map[string]any{"": 1}, wantErr: "empty name"},
		{name: "string value", value: "not an object", wantErr: "not an object or struct"},
		{name: "bytes value", value: []byte(`{"a":1}`), wantErr: "check value.converter"},
		{name: "unsigned overflow", value: map[string]any{"u": uint64(math.MaxUint64)}, wantErr: "exceeds the int64 range"},
		{name: "unsupported type", value: map[string]any{"c": complex(1, 2)}, wantErr: "unsupported value type complex128"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := testMapper(t, tt.config...)
			got, err := mapOne(m, rec("t", 1, 5, "k", tt.value))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			bins := map[string]any{}
			for _, b := range got.bins {
				bins[b.name] = b.value
			}
			if !reflect.DeepEqual(bins, tt.want) {
				t.Fatalf("bins = %#v, want %#v", bins, tt.want)
			}
			if got.pos != "t-1" || got.offset != 5 {
				t.Fatalf("position = %s@%d", got.pos, got.offset)
			}
		})
	}
}

// Positions and offsets come from the Original* fields, so a transform
// that renames the topic (RegexRouter) changes the set but not the
// idempotence key.
func TestMapUsesOriginalPosition(t *testing.T) {
	m := testMapper(t)
	r := rec("orders", 2, 40, "k", map[string]any{})
	r.Topic, r.Partition, r.Offset = "renamed", 0, 0
	got, err := mapOne(m, r)
	if err != nil {
		t.Fatal(err)
	}
	if got.pos != "orders-2" || got.offset != 40 || got.key.SetName() != "renamed" {
		t.Fatalf("mapped %s@%d into set %s", got.pos, got.offset, got.key.SetName())
	}
	if !got.tombstone == (r.Value == nil) {
		t.Fatal("tombstone flag wrong")
	}
}

func mapOne(m *mapper, r *sdk.SinkRecord) (*mapped, error) {
	var out mapped
	var arena []bin
	if err := m.mapRecord(r, 0, &out, &arena); err != nil {
		return nil, err
	}
	return &out, nil
}

// The key cache returns the same key for the same user key and stays
// bounded.
func TestKeyCacheBounded(t *testing.T) {
	m := testMapper(t)
	a, err := m.key("test", "s", "x")
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := m.key("test", "s", "x"); b != a {
		t.Fatal("cached key not reused")
	}
	if c, _ := m.key("test", "other", "x"); c == a || string(c.Digest()) == string(a.Digest()) {
		t.Fatal("a key of another set came from the cache")
	}
	if e, _ := m.key("bar", "s", "x"); e == a || e.Namespace() != "bar" {
		t.Fatal("a key of another namespace came from the cache")
	}
	if d, _ := m.key("test", "s", int64(7)); d.Value().GetObject() != int64(7) {
		t.Fatal("integer key wrong")
	}
	for i := range keyCacheSize + 10 {
		if _, err := m.key("test", "s", int64(i)); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(m.keys); n > keyCacheSize {
		t.Fatalf("key cache holds %d keys, limit %d", n, keyCacheSize)
	}
}
