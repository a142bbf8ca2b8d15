package data

import (
	"bytes"
	"math"
	"math/big"
	"strings"
	"testing"
	"time"
)

func TestBuilder(t *testing.T) {
	s, err := Build(Struct).Name("com.example.User").Version(2).Doc("a user").Parameter("p", "v").
		Field("id", PrimitiveSchema(Int64)).
		Field("email", OptionalSchema(String)).
		Field("tags", ArrayOf(PrimitiveSchema(String)).Optional().MustSchema()).
		Schema()
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Fields) != 3 || s.Fields[2].Index != 2 || s.Fields[2].Schema.Type != Array || s.Name != "com.example.User" ||
		s.Version != 2 || s.Parameters["p"] != "v" {
		t.Fatalf("schema = %+v", s)
	}
	if f, ok := s.Field("email"); !ok || f.Index != 1 || !f.Schema.Optional {
		t.Errorf("Field(email) = %+v %v", f, ok)
	}
	if s.String() != "Schema{com.example.User:STRUCT}" || PrimitiveSchema(Float64).String() != "Schema{FLOAT64}" {
		t.Errorf("String() = %s", s)
	}

	errCases := map[string]*Builder{
		"duplicate field":   Build(Struct).Field("a", PrimitiveSchema(Int8)).Field("a", PrimitiveSchema(Int8)),
		"field on int":      Build(Int32).Field("a", PrimitiveSchema(Int8)),
		"bad default":       Build(Int32).Default("x"),
		"array no elements": ArrayOf(nil),
		"map no key":        MapOf(nil, PrimitiveSchema(Int8)),
		"unknown type":      Build("float128"),
	}
	for name, b := range errCases {
		if _, err := b.Schema(); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if d, err := Build(Int32).Default(int32(5)).Schema(); err != nil || d.Default != int32(5) {
		t.Errorf("default: %v %v", d, err)
	}
}

func TestSchemaEqual(t *testing.T) {
	mk := func() *Schema {
		return Build(Struct).Name("n").Field("a", PrimitiveSchema(Int32)).
			Field("m", MapOf(PrimitiveSchema(String), OptionalSchema(Bytes)).MustSchema()).MustSchema()
	}
	a, b := mk(), mk()
	if !a.Equal(b) {
		t.Error("equal schemas differ")
	}
	c := mk()
	c.Fields[1].Schema.Value.Optional = false
	if a.Equal(c) {
		t.Error("nested difference not seen")
	}
	if a.Equal(nil) || (*Schema)(nil).Equal(a) || !(*Schema)(nil).Equal(nil) {
		t.Error("nil handling")
	}
	d1 := DecimalSchema(2).MustSchema()
	d2 := DecimalSchema(3).MustSchema()
	if d1.Equal(d2) || !d1.Equal(DecimalSchema(2).MustSchema()) {
		t.Error("decimal scale parameter not compared")
	}
}

func TestStruct(t *testing.T) {
	s := Build(Struct).
		Field("id", PrimitiveSchema(Int32)).
		Field("name", Build(String).Optional().Default("anon").MustSchema()).
		Field("ts", TimestampSchema().MustSchema()).
		MustSchema()
	st := NewStruct(s)
	if err := st.Put("id", 5); err == nil || !strings.Contains(err.Error(), `with type INT32: int for field: "id"`) {
		t.Errorf("Put int into INT32: %v", err)
	}
	if err := st.Put("nope", int32(1)); err == nil || err.Error() != "nope is not a valid field name" {
		t.Errorf("unknown field: %v", err)
	}
	if err := st.Put("id", nil); err == nil || err.Error() != `Invalid value: null used for required field: "id", schema type: INT32` {
		t.Errorf("null into required: %v", err)
	}
	if err := st.Validate(); err == nil {
		t.Error("Validate accepted a struct with unset required fields")
	}
	st.MustPut("id", int32(7)).MustPut("ts", time.UnixMilli(1000))
	if err := st.Validate(); err != nil {
		t.Errorf("Validate: %v", err)
	}
	if v, _ := st.Get("name"); v != "anon" {
		t.Errorf("default not applied: %v", v)
	}
	if v, _ := st.GetWithoutDefault("name"); v != nil {
		t.Errorf("GetWithoutDefault = %v", v)
	}
	if st.String() != "Struct{id=7,ts=1970-01-01T00:00:01.000Z}" {
		t.Errorf("String() = %s", st)
	}
	other := NewStruct(Build(Struct).Field("id", PrimitiveSchema(Int32)).Field("name", Build(String).Optional().Default("anon").MustSchema()).
		Field("ts", TimestampSchema().MustSchema()).MustSchema())
	other.MustPut("id", int32(7)).MustPut("ts", time.UnixMilli(1000))
	if !st.Equal(other) {
		t.Error("equal structs differ")
	}
	other.MustPut("name", "x")
	if st.Equal(other) {
		t.Error("different structs equal")
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Error("NewStruct(int32 schema) did not panic")
			}
		}()
		NewStruct(PrimitiveSchema(Int32))
	}()
}

func TestValidate(t *testing.T) {
	inner := Build(Struct).Field("x", PrimitiveSchema(Int8)).MustSchema()
	innerVal := NewStruct(inner).MustPut("x", int8(1))
	otherInner := Build(Struct).Field("y", PrimitiveSchema(Int8)).MustSchema()
	tests := []struct {
		name    string
		schema  *Schema
		value   any
		wantErr string
	}{
		{"int8", PrimitiveSchema(Int8), int8(1), ""},
		{"int16", PrimitiveSchema(Int16), int16(1), ""},
		{"int64 wrong", PrimitiveSchema(Int64), int32(1), "Invalid Go value for schema with type INT64: int32 for value"},
		{"float", PrimitiveSchema(Float32), float32(1), ""},
		{"double", PrimitiveSchema(Float64), float32(1), "Invalid Go value for schema with type FLOAT64: float32 for value"},
		{"bool", PrimitiveSchema(Boolean), true, ""},
		{"bytes", PrimitiveSchema(Bytes), []byte("x"), ""},
		{"string as bytes", PrimitiveSchema(Bytes), "x", "Invalid Go value for schema with type BYTES: string for value"},
		{"null optional", OptionalSchema(String), nil, ""},
		{"null required", PrimitiveSchema(String), nil, "Invalid value: null used for required value, schema type: STRING"},
		{"array", ArrayOf(PrimitiveSchema(Int32)).MustSchema(), []any{int32(1), int32(2)}, ""},
		{"array element", ArrayOf(PrimitiveSchema(Int32)).MustSchema(), []any{int32(1), "x"}, "Invalid Go value for schema with type INT32: string for element of array value"},
		{"typed slice", ArrayOf(PrimitiveSchema(String)).MustSchema(), []string{"a"}, "Invalid Go value for schema with type ARRAY: []string for value"},
		{"map string", MapOf(PrimitiveSchema(String), PrimitiveSchema(Int32)).MustSchema(), map[string]any{"a": int32(1)}, ""},
		{"map value", MapOf(PrimitiveSchema(String), PrimitiveSchema(Int32)).MustSchema(), map[string]any{"a": "b"}, "Invalid Go value for schema with type INT32: string for value of map value"},
		{"map int keys", MapOf(PrimitiveSchema(Int32), PrimitiveSchema(String)).MustSchema(), map[any]any{int32(1): "a"}, ""},
		{"map bad key", MapOf(PrimitiveSchema(Int32), PrimitiveSchema(String)).MustSchema(), map[any]any{"k": "a"}, "Invalid Go value for schema with type INT32: string for key of map value"},
		{"map string keys into int map", MapOf(PrimitiveSchema(Int32), PrimitiveSchema(String)).MustSchema(), map[string]any{"k": "a"}, "Invalid Go value for map with key type INT32: map[string]any for value"},
		{"struct", inner, innerVal, ""},
		{"struct other schema", otherInner, innerVal, "Struct schemas do not match."},
		{"decimal", DecimalSchema(2).MustSchema(), NewDecimal(105, 2), ""},
		{"decimal as bytes", DecimalSchema(2).MustSchema(), []byte{1}, `Invalid Go value for schema "org.apache.kafka.connect.data.Decimal" with type BYTES: []uint8 for value`},
		{"date", DateSchema().MustSchema(), time.Unix(0, 0), ""},
		{"timestamp as int", TimestampSchema().MustSchema(), int64(5), `Invalid Go value for schema "org.apache.kafka.connect.data.Timestamp" with type INT64: int64 for value`},
	}
	for _, tt := range tests {
		err := Validate(tt.value, tt.schema)
		if (tt.wantErr == "") != (err == nil) || (err != nil && err.Error() != tt.wantErr) {
			t.Errorf("%s: err = %v, want %q", tt.name, err, tt.wantErr)
		}
	}
}

func TestDecimal(t *testing.T) {
	// Java BigDecimal.toString examples from its javadoc.
	strs := []struct {
		unscaled int64
		scale    int32
		want     string
		plain    string
	}{
		{123, 0, "123", "123"},
		{-123, 0, "-123", "-123"},
		{123, -1, "1.23E+3", "1230"},
		{123, -3, "1.23E+5", "123000"},
		{123, 1, "12.3", "12.3"},
		{123, 5, "0.00123", "0.00123"},
		{123, 10, "1.23E-8", "0.0000000123"},
		{-123, 12, "-1.23E-10", "-0.000000000123"},
		{0, 0, "0", "0"},
		{0, 2, "0.00", "0.00"},
		{0, -2, "0E+2", "0"},
		{5, 7, "5E-7", "0.0000005"},
		{1050, 2, "10.50", "10.50"},
	}
	for _, tt := range strs {
		d := NewDecimal(tt.unscaled, tt.scale)
		if got := d.String(); got != tt.want {
			t.Errorf("String(%d, %d) = %q, want %q", tt.unscaled, tt.scale, got, tt.want)
		}
		if got := d.PlainString(); got != tt.plain {
			t.Errorf("PlainString(%d, %d) = %q, want %q", tt.unscaled, tt.scale, got, tt.plain)
		}
		back, err := ParseDecimal(tt.want)
		if err != nil || !back.Equal(d) {
			t.Errorf("ParseDecimal(%q) = %v (%d,%d), %v", tt.want, back, back.Unscaled, back.Scale, err)
		}
	}
	for _, bad := range []string{"", "-", "1.2.3", "1e", "abc", "1-2", "1.-2"} {
		if _, err := ParseDecimal(bad); err == nil {
			t.Errorf("ParseDecimal(%q) accepted", bad)
		}
	}

	// BigInteger.toByteArray vectors.
	bytesCases := []struct {
		v    int64
		want []byte
	}{
		{0, []byte{0}}, {1, []byte{1}}, {127, []byte{0x7f}}, {128, []byte{0, 0x80}}, {255, []byte{0, 0xff}},
		{-1, []byte{0xff}}, {-128, []byte{0x80}}, {-129, []byte{0xff, 0x7f}}, {-256, []byte{0xff, 0x00}},
		{-32768, []byte{0x80, 0x00}}, {-32769, []byte{0xff, 0x7f, 0xff}}, {math.MinInt64, []byte{0x80, 0, 0, 0, 0, 0, 0, 0}},
	}
	for _, tt := range bytesCases {
		d := NewDecimal(tt.v, 2)
		got := d.UnscaledBytes()
		if !bytes.Equal(got, tt.want) {
			t.Errorf("UnscaledBytes(%d) = %x, want %x", tt.v, got, tt.want)
		}
		if back := DecimalFromBytes(got, 2); back.Unscaled.Int64() != tt.v || back.Scale != 2 {
			t.Errorf("DecimalFromBytes(%x) = %v", got, back)
		}
	}
	huge, _ := new(big.Int).SetString("-123456789012345678901234567890", 10)
	hd := Decimal{Unscaled: huge, Scale: 4}
	if back := DecimalFromBytes(hd.UnscaledBytes(), 4); !back.Equal(hd) {
		t.Errorf("big round trip = %v", back)
	}

	one := NewDecimal(10, 1)
	if r, err := one.Rescale(3); err != nil || r.String() != "1.000" {
		t.Errorf("Rescale up = %v %v", r, err)
	}
	if r, err := NewDecimal(1500, 3).Rescale(1); err != nil || r.String() != "1.5" {
		t.Errorf("Rescale down = %v %v", r, err)
	}
	if _, err := NewDecimal(1501, 3).Rescale(1); err == nil {
		t.Error("lossy rescale allowed")
	}
	if one.Cmp(NewDecimal(100, 2)) != 0 || one.Equal(NewDecimal(100, 2)) {
		t.Error("Cmp ignores scale, Equal does not")
	}
	if NewDecimal(-25, 1).Float64() != -2.5 {
		t.Error("Float64")
	}
	if s, err := DecimalScale(DecimalSchema(7).MustSchema()); err != nil || s != 7 {
		t.Errorf("DecimalScale = %d %v", s, err)
	}
}

func TestTemporal(t *testing.T) {
	d := time.Date(2024, 2, 29, 0, 0, 0, 0, time.UTC)
	days, err := DateToDays(d)
	if err != nil || days != 19782 || !DaysToDate(days).Equal(d) {
		t.Errorf("DateToDays = %d %v", days, err)
	}
	if days, err := DateToDays(time.Date(1969, 12, 31, 0, 0, 0, 0, time.UTC)); err != nil || days != -1 {
		t.Errorf("pre-epoch = %d %v", days, err)
	}
	if _, err := DateToDays(d.Add(time.Hour)); err == nil || err.Error() != "Kafka Connect Date type should not have any time fields set to non-zero values." {
		t.Errorf("Date with time: %v", err)
	}
	tm := time.Date(1970, 1, 1, 13, 5, 7, 250*int(time.Millisecond), time.UTC)
	ms, err := TimeToMillis(tm)
	if err != nil || ms != 47107250 || !MillisToTime(ms).Equal(tm) {
		t.Errorf("TimeToMillis = %d %v", ms, err)
	}
	if _, err := TimeToMillis(d); err == nil {
		t.Error("Time with date accepted")
	}
	ts := time.Date(2024, 1, 2, 3, 4, 5, 678_900_000, time.UTC)
	if got := TimestampToMillis(ts); got != 1704164645678 || !MillisToTimestamp(got).Equal(ts.Truncate(time.Millisecond)) {
		t.Errorf("TimestampToMillis = %d", got)
	}
	if got := TimestampToMillis(time.Unix(0, -1)); got != -1 {
		t.Errorf("sub-ms before epoch = %d, want -1 (floor)", got)
	}
}

func TestValueEqualAndString(t *testing.T) {
	eq := [][2]any{
		{nil, nil}, {[]byte("a"), []byte("a")}, {math.NaN(), math.NaN()}, {int32(1), int32(1)},
		{[]any{int64(1), "x"}, []any{int64(1), "x"}}, {map[string]any{"a": []byte{1}}, map[string]any{"a": []byte{1}}},
		{map[any]any{int32(1): "a"}, map[any]any{int32(1): "a"}}, {NewDecimal(1, 1), NewDecimal(1, 1)},
		{time.Unix(5, 0), time.Unix(5, 0).In(time.FixedZone("x", 3600))},
	}
	for _, p := range eq {
		if !ValueEqual(p[0], p[1]) {
			t.Errorf("ValueEqual(%v, %v) = false", p[0], p[1])
		}
	}
	ne := [][2]any{
		{nil, int32(0)}, {int32(1), int64(1)}, {[]byte("a"), "a"}, {[]any{1}, []any{2}},
		{map[string]any{"a": 1}, map[string]any{"b": 1}}, {NewDecimal(10, 1), NewDecimal(100, 2)}, {[]any{}, nil},
	}
	for _, p := range ne {
		if ValueEqual(p[0], p[1]) {
			t.Errorf("ValueEqual(%v, %v) = true", p[0], p[1])
		}
	}
	if s := ValueString(map[string]any{"b": 2.0, "a": []any{int32(1), nil}}); s != "{a=[1, null], b=2.0}" {
		t.Errorf("ValueString = %s", s)
	}
}
