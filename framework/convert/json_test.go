package convert

import (
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/connectd/connectd/framework/data"
)

func jsonConv(t *testing.T, props map[string]string) *JSONConverter {
	t.Helper()
	c, err := New(JSONClass, props, false)
	if err != nil {
		t.Fatal(err)
	}
	return c.(*JSONConverter)
}

// Envelope inputs and expected Connect data, from Kafka's JsonConverter
// test suite and documented behaviour.
func TestJSONToConnect(t *testing.T) {
	c := jsonConv(t, nil)
	st := data.Build(data.Struct).Field("field1", data.PrimitiveSchema(data.Boolean)).Field("field2", data.PrimitiveSchema(data.String)).MustSchema()
	optReq := data.Build(data.Struct).Field("optional", data.OptionalSchema(data.String)).Field("required", data.PrimitiveSchema(data.String)).MustSchema()
	tests := []struct {
		in         string
		wantSchema *data.Schema
		want       any
	}{
		{`{ "schema": { "type": "boolean" }, "payload": true }`, data.PrimitiveSchema(data.Boolean), true},
		{`{ "schema": { "type": "boolean", "optional": true }, "payload": null }`, data.OptionalSchema(data.Boolean), nil},
		{`{ "schema": { "type": "boolean", "default": true }, "payload": null }`, data.Build(data.Boolean).Default(true).MustSchema(), true},
		{`{ "schema": { "type": "boolean", "optional": false, "name": "bool", "version": 2, "doc": "the documentation", "parameters": { "foo": "bar" }}, "payload": true }`,
			data.Build(data.Boolean).Name("bool").Version(2).Doc("the documentation").Parameter("foo", "bar").MustSchema(), true},
		{`{ "schema": { "type": "int8" }, "payload": 12 }`, data.PrimitiveSchema(data.Int8), int8(12)},
		{`{ "schema": { "type": "int16" }, "payload": 12 }`, data.PrimitiveSchema(data.Int16), int16(12)},
		{`{ "schema": { "type": "int32" }, "payload": 12 }`, data.PrimitiveSchema(data.Int32), int32(12)},
		{`{ "schema": { "type": "int64" }, "payload": 4398046511104 }`, data.PrimitiveSchema(data.Int64), int64(4398046511104)},
		{`{ "schema": { "type": "int8" }, "payload": 0012 }`, data.PrimitiveSchema(data.Int8), int8(12)},
		{`{ "schema": { "type": "int64" }, "payload": 00000123456789 }`, data.PrimitiveSchema(data.Int64), int64(123456789)},
		{`{ "schema": { "type": "int32" }, "payload": 1.0e2 }`, data.PrimitiveSchema(data.Int32), int32(100)},
		{`{ "schema": { "type": "float" }, "payload": 12.34 }`, data.PrimitiveSchema(data.Float32), float32(12.34)},
		{`{ "schema": { "type": "double" }, "payload": 12.34 }`, data.PrimitiveSchema(data.Float64), 12.34},
		{`{ "schema": { "type": "double" }, "payload": "-Infinity" }`, data.PrimitiveSchema(data.Float64), math.Inf(-1)},
		{`{ "schema": { "type": "bytes" }, "payload": "dGVzdC1zdHJpbmc=" }`, data.PrimitiveSchema(data.Bytes), []byte("test-string")},
		{`{ "schema": { "type": "string" }, "payload": "foo-bar-baz" }`, data.PrimitiveSchema(data.String), "foo-bar-baz"},
		{`{ "schema": { "type": "string" }, "payload": "esc\"\\\/\b\f\n\r\t\u00e9\ud83d\ude00" }`, data.PrimitiveSchema(data.String), "esc\"\\/\b\f\n\r\té😀"},
		{`{ "schema": { "type": "array", "items": { "type" : "int32" } }, "payload": [1, 2, 3] }`,
			data.ArrayOf(data.PrimitiveSchema(data.Int32)).MustSchema(), []any{int32(1), int32(2), int32(3)}},
		{`{ "schema": { "type": "map", "keys": { "type" : "string" }, "values": { "type" : "int32" } }, "payload": { "key1": 12, "key2": 15} }`,
			data.MapOf(data.PrimitiveSchema(data.String), data.PrimitiveSchema(data.Int32)).MustSchema(), map[string]any{"key1": int32(12), "key2": int32(15)}},
		{`{ "schema": { "type": "map", "keys": { "type" : "int32" }, "values": { "type" : "int32" } }, "payload": [ [1, 12], [2, 15] ] }`,
			data.MapOf(data.PrimitiveSchema(data.Int32), data.PrimitiveSchema(data.Int32)).MustSchema(), map[any]any{int32(1): int32(12), int32(2): int32(15)}},
		{`{ "schema": { "type": "struct", "fields": [{ "field": "field1", "type": "boolean" }, { "field": "field2", "type": "string" }] }, "payload": { "field1": true, "field2": "string" } }`,
			st, data.NewStruct(st).MustPut("field1", true).MustPut("field2", "string")},
		{`{ "schema": { "type": "struct", "fields": [{ "field":"optional", "type": "string", "optional": true }, {  "field": "required", "type": "string" }] }, "payload": { "required": "required", "extra": [1,{"a":null}] } }`,
			optReq, data.NewStruct(optReq).MustPut("required", "required")},
		{`{ "schema": { "type": "bytes", "name": "org.apache.kafka.connect.data.Decimal", "version": 1, "parameters": { "scale": "2" } }, "payload": "AJw=" }`,
			data.DecimalSchema(2).MustSchema(), data.NewDecimal(156, 2)},
		{`{ "schema": { "type": "bytes", "name": "org.apache.kafka.connect.data.Decimal", "version": 1, "parameters": { "scale": "2" } }, "payload": 1.56 }`,
			data.DecimalSchema(2).MustSchema(), data.NewDecimal(156, 2)},
		{`{ "schema": { "type": "bytes", "name": "org.apache.kafka.connect.data.Decimal", "version": 1, "parameters": { "scale": "2" } }, "payload": 2 }`,
			data.DecimalSchema(2).MustSchema(), data.NewDecimal(200, 2)},
		{`{ "schema": { "type": "bytes", "name": "org.apache.kafka.connect.data.Decimal", "version": 1, "default": "AJw=", "parameters": { "scale": "2" } }, "payload": null }`,
			data.DecimalSchema(2).Default(data.NewDecimal(156, 2)).MustSchema(), data.NewDecimal(156, 2)},
		{`{ "schema": { "type": "int32", "name": "org.apache.kafka.connect.data.Date", "version": 1 }, "payload": 10000 }`,
			data.DateSchema().MustSchema(), time.Date(1997, 5, 19, 0, 0, 0, 0, time.UTC)},
		{`{ "schema": { "type": "int32", "name": "org.apache.kafka.connect.data.Time", "version": 1 }, "payload": 14400000 }`,
			data.TimeSchema().MustSchema(), time.Date(1970, 1, 1, 4, 0, 0, 0, time.UTC)},
		{`{ "schema": { "type": "int64", "name": "org.apache.kafka.connect.data.Timestamp", "version": 1 }, "payload": 4000000000 }`,
			data.TimestampSchema().MustSchema(), time.UnixMilli(4000000000).UTC()},
		{`{ "schema": null, "payload": null }`, nil, nil},
		{`{ "schema": null, "payload": 12 }`, nil, int64(12)},
		{`{ "schema": null, "payload": 12.24 }`, nil, 12.24},
		{`{ "schema": null, "payload": [1, "2", 3] }`, nil, []any{int64(1), "2", int64(3)}},
		{`{ "payload": { "field1": 1, "field2": 2}, "schema": null }`, nil, map[string]any{"field1": int64(1), "field2": int64(2)}},
	}
	for _, tt := range tests {
		s, v, err := c.ToConnect("topic", []byte(tt.in))
		if err != nil {
			t.Errorf("%s: %v", tt.in, err)
			continue
		}
		if !s.Equal(tt.wantSchema) {
			t.Errorf("%s:\nschema %+v\nwant   %+v", tt.in, s, tt.wantSchema)
		}
		if !data.ValueEqual(v, tt.want) {
			t.Errorf("%s:\nvalue %#v\nwant  %#v", tt.in, v, tt.want)
		}
	}
	if s, v, err := c.ToConnect("t", nil); s != nil || v != nil || err != nil {
		t.Errorf("tombstone = %v %v %v", s, v, err)
	}
}

func TestJSONToConnectErrors(t *testing.T) {
	c := jsonConv(t, nil)
	tests := []struct{ in, want string }{
		{`{"a":1}`, envelopeMessage},
		{`{"schema":null,"payload":1,"extra":2}`, envelopeMessage},
		{`[1]`, envelopeMessage},
		{``, envelopeMessage},
		{`{"schema":`, "Converting byte[] to Kafka Connect data failed due to serialization error: unexpected end of input at offset 10"},
		{`{"schema":null,"payload":tru}`, "Converting byte[] to Kafka Connect data failed due to serialization error: invalid literal, expected true at offset 25"},
		{`{"schema":null,"payload":1} x`, "Converting byte[] to Kafka Connect data failed due to serialization error: unexpected data after the JSON value at offset 28"},
		{`{"schema":{"type":"int32"},"payload":null}`, "Invalid null value for required INT32 field"},
		{`{"schema":{"type":"int32"},"payload":"12"}`, "Invalid value for INT32 field: expected a JSON number, found STRING"},
		{`{"schema":{"type":"int8"},"payload":300}`, "Invalid value for INT8 field: 300 is out of range"},
		{`{"schema":{"type":"int32"},"payload":1.5}`, "Invalid value for INT32 field: expected an integer, found 1.5"},
		{`{"schema":{"type":"string"},"payload":5}`, "Invalid value for STRING field: expected a JSON string, found NUMBER"},
		{`{"schema":{"type":"boolean"},"payload":"true"}`, "Invalid value for BOOLEAN field: expected true or false, found STRING"},
		{`{"schema":{"type":"struct","fields":[{"field":"id","type":"int32"}]},"payload":{}}`, `field "id": Invalid null value for required INT32 field`},
		{`{"schema":{"type":"struct","fields":[{"field":"id","type":"int32"}]},"payload":[1]}`, "Structs should be encoded as JSON objects, but found ARRAY"},
		{`{"schema":{"type":"map","keys":{"type":"string"},"values":{"type":"int32"}},"payload":[]}`, "Maps with string fields should be encoded as JSON objects, but found ARRAY"},
		{`{"schema":{"type":"map","keys":{"type":"int32"},"values":{"type":"int32"}},"payload":[[1]]}`, "Found invalid map entry, expected length 2 but found :1"},
		{`{"schema":{"type":"map","keys":{"type":"int32"},"values":{"type":"int32"}},"payload":{}}`, "Maps with non-string fields should be encoded as JSON array of tuples, but found OBJECT"},
		{`{"schema":{"optional":true},"payload":1}`, "Schema must contain 'type' field"},
		{`{"schema":{"type":"uint8"},"payload":1}`, "Unknown schema type: uint8"},
		{`{"schema":{"type":"array"},"payload":[]}`, "Array schema did not specify the element type"},
		{`{"schema":{"type":"map","keys":{"type":"string"}},"payload":{}}`, "Map schema did not specify the value type"},
		{`{"schema":{"type":"struct","fields":{}},"payload":{}}`, `Struct schema's "fields" argument is not an array.`},
		{`{"schema":{"type":"struct","fields":[{"type":"int8"}]},"payload":{}}`, "Struct schema's field name not specified properly"},
		{`{"schema":{"type":"int8","parameters":{"a":1}},"payload":1}`, "Schema parameters must have string values."},
		{`{"schema":{"type":"int32","name":"org.apache.kafka.connect.data.Date"},"payload":"x"}`, "Invalid type for Date, underlying representation should be integer but was STRING"},
		{`{"schema":{"type":"int64","name":"org.apache.kafka.connect.data.Timestamp"},"payload":1.5}`, "Invalid type for Timestamp, underlying representation should be integral but was NUMBER"},
		{`{"schema":{"type":"bytes","name":"org.apache.kafka.connect.data.Decimal","parameters":{"scale":"2"}},"payload":true}`, "Invalid type for Decimal, underlying representation should be numeric or bytes but was BOOLEAN"},
		{`{"schema":{"type":"bytes","name":"org.apache.kafka.connect.data.Decimal","parameters":{"scale":"2"}},"payload":1.234}`, "Invalid value for Decimal field: decimal 1.234 cannot be represented with scale 2 without rounding"},
		{`{"schema":{"type":"string"},"payload":"a` + "\x01" + `"}`, "Converting byte[] to Kafka Connect data failed due to serialization error: control character in string at offset 40"},
	}
	for _, tt := range tests {
		_, _, err := c.ToConnect("topic", []byte(tt.in))
		if err == nil || err.Error() != tt.want {
			t.Errorf("%s:\n got %v\nwant %s", tt.in, err, tt.want)
		}
	}
}

// Output must be byte-identical to Kafka's (Jackson's) serialization.
func TestJSONFromConnect(t *testing.T) {
	c := jsonConv(t, nil)
	st := data.Build(data.Struct).
		Field("field1", data.PrimitiveSchema(data.Boolean)).
		Field("field2", data.PrimitiveSchema(data.String)).
		Field("field3", data.OptionalSchema(data.String)).
		MustSchema()
	withDefault := data.Build(data.String).Optional().Default("default").MustSchema()
	dflStruct := data.Build(data.Struct).Field("field1", withDefault).MustSchema()
	tests := []struct {
		name   string
		schema *data.Schema
		value  any
		want   string
	}{
		{"boolean", data.PrimitiveSchema(data.Boolean), true, `{"schema":{"type":"boolean","optional":false},"payload":true}`},
		{"metadata", data.Build(data.Boolean).Name("bool").Version(3).Doc("the documentation").Parameter("foo", "bar").Parameter("a", "b").MustSchema(), true,
			`{"schema":{"type":"boolean","optional":false,"name":"bool","version":3,"doc":"the documentation","parameters":{"a":"b","foo":"bar"}},"payload":true}`},
		{"default", data.Build(data.Boolean).Default(true).MustSchema(), true, `{"schema":{"type":"boolean","optional":false,"default":true},"payload":true}`},
		{"int8", data.PrimitiveSchema(data.Int8), int8(12), `{"schema":{"type":"int8","optional":false},"payload":12}`},
		{"int64", data.PrimitiveSchema(data.Int64), int64(4398046511104), `{"schema":{"type":"int64","optional":false},"payload":4398046511104}`},
		{"float", data.PrimitiveSchema(data.Float32), float32(12.34), `{"schema":{"type":"float","optional":false},"payload":12.34}`},
		{"double", data.PrimitiveSchema(data.Float64), 1e10, `{"schema":{"type":"double","optional":false},"payload":1.0E10}`},
		{"double whole", data.PrimitiveSchema(data.Float64), 3.0, `{"schema":{"type":"double","optional":false},"payload":3.0}`},
		{"NaN", data.PrimitiveSchema(data.Float64), math.NaN(), `{"schema":{"type":"double","optional":false},"payload":"NaN"}`},
		{"bytes", data.PrimitiveSchema(data.Bytes), []byte("test-string"), `{"schema":{"type":"bytes","optional":false},"payload":"dGVzdC1zdHJpbmc="}`},
		{"string escapes", data.PrimitiveSchema(data.String), "a\"b\\c/d\x01\té<", `{"schema":{"type":"string","optional":false},"payload":"a\"b\\c/d\u0001\té<"}`},
		{"array", data.ArrayOf(data.PrimitiveSchema(data.Int32)).MustSchema(), []any{int32(1), int32(2), int32(3)},
			`{"schema":{"type":"array","items":{"type":"int32","optional":false},"optional":false},"payload":[1,2,3]}`},
		{"map string keys", data.MapOf(data.PrimitiveSchema(data.String), data.PrimitiveSchema(data.Int32)).MustSchema(), map[string]any{"key2": int32(15), "key1": int32(12)},
			`{"schema":{"type":"map","keys":{"type":"string","optional":false},"values":{"type":"int32","optional":false},"optional":false},"payload":{"key1":12,"key2":15}}`},
		{"map int keys", data.MapOf(data.PrimitiveSchema(data.Int32), data.PrimitiveSchema(data.Int32)).MustSchema(), map[any]any{int32(2): int32(15), int32(1): int32(12)},
			`{"schema":{"type":"map","keys":{"type":"int32","optional":false},"values":{"type":"int32","optional":false},"optional":false},"payload":[[1,12],[2,15]]}`},
		{"struct", st, data.NewStruct(st).MustPut("field1", true).MustPut("field2", "string2"),
			`{"schema":{"type":"struct","fields":[{"type":"boolean","optional":false,"field":"field1"},{"type":"string","optional":false,"field":"field2"},{"type":"string","optional":true,"field":"field3"}],"optional":false},"payload":{"field1":true,"field2":"string2","field3":null}}`},
		{"decimal base64", data.DecimalSchema(2).MustSchema(), data.NewDecimal(156, 2),
			`{"schema":{"type":"bytes","optional":false,"name":"org.apache.kafka.connect.data.Decimal","version":1,"parameters":{"scale":"2"}},"payload":"AJw="}`},
		{"date", data.DateSchema().MustSchema(), time.Date(1997, 5, 19, 0, 0, 0, 0, time.UTC),
			`{"schema":{"type":"int32","optional":false,"name":"org.apache.kafka.connect.data.Date","version":1},"payload":10000}`},
		{"time", data.TimeSchema().MustSchema(), time.Date(1970, 1, 1, 4, 0, 0, 0, time.UTC),
			`{"schema":{"type":"int32","optional":false,"name":"org.apache.kafka.connect.data.Time","version":1},"payload":14400000}`},
		{"timestamp", data.TimestampSchema().MustSchema(), time.UnixMilli(4000000000),
			`{"schema":{"type":"int64","optional":false,"name":"org.apache.kafka.connect.data.Timestamp","version":1},"payload":4000000000}`},
		{"null schema primitive", nil, true, `{"schema":null,"payload":true}`},
		{"null to default", withDefault, nil, `{"schema":{"type":"string","optional":true,"default":"default"},"payload":"default"}`},
		{"field null to default", dflStruct, data.NewStruct(dflStruct),
			`{"schema":{"type":"struct","fields":[{"type":"string","optional":true,"default":"default","field":"field1"}],"optional":false},"payload":{"field1":"default"}}`},
		{"optional null", data.OptionalSchema(data.Int32), nil, `{"schema":{"type":"int32","optional":true},"payload":null}`},
	}
	for _, tt := range tests {
		got, err := c.FromConnect("topic", tt.schema, tt.value)
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if string(got) != tt.want {
			t.Errorf("%s:\n got %s\nwant %s", tt.name, got, tt.want)
		}
		// Round trip back to the same value.
		s, v, err := c.ToConnect("topic", got)
		if err != nil {
			t.Errorf("%s: read back: %v", tt.name, err)
			continue
		}
		if tt.schema != nil && !s.Equal(tt.schema) {
			t.Errorf("%s: schema changed on round trip: %+v", tt.name, s)
		}
		want := tt.value
		if want == nil && tt.schema != nil {
			want = tt.schema.Default
		}
		if st, ok := want.(*data.StructValue); ok && tt.name == "field null to default" {
			want = data.NewStruct(st.Schema()).MustPut("field1", "default")
		}
		if tt.name == "NaN" {
			if f, ok := v.(float64); !ok || !math.IsNaN(f) {
				t.Errorf("NaN read back as %v", v)
			}
			continue
		}
		if !data.ValueEqual(v, want) {
			t.Errorf("%s: value changed on round trip: %#v", tt.name, v)
		}
	}

	if b, err := c.FromConnect("t", nil, nil); b != nil || err != nil {
		t.Errorf("tombstone = %q %v", b, err)
	}
	errTests := []struct {
		schema *data.Schema
		value  any
		want   string
	}{
		{data.PrimitiveSchema(data.Int32), nil, "Conversion error: null value for field that is required and has no default value"},
		{data.PrimitiveSchema(data.Int32), "x", "Invalid type for INT32: string"},
		{data.DecimalSchema(2).MustSchema(), data.NewDecimal(1, 3), "Decimal 0.001 has mismatching scale value for given Decimal schema (scale 2)"},
		{data.DateSchema().MustSchema(), time.Date(2000, 1, 1, 1, 0, 0, 0, time.UTC), "Kafka Connect Date type should not have any time fields set to non-zero values."},
		{data.DateSchema().MustSchema(), int32(1), "Invalid type for Date, expected time.Time but was int32"},
		{st, data.NewStruct(data.Build(data.Struct).Field("x", data.PrimitiveSchema(data.Int8)).MustSchema()), "Mismatching schema."},
		{nil, struct{}{}, "Go type struct {} does not have a corresponding schema type"},
	}
	for _, tt := range errTests {
		_, err := c.FromConnect("t", tt.schema, tt.value)
		if err == nil || err.Error() != tt.want {
			t.Errorf("FromConnect(%v, %#v) error = %v, want %s", tt.schema, tt.value, err, tt.want)
		}
	}
}

func TestJSONReplaceNullWithDefaultOff(t *testing.T) {
	c := jsonConv(t, map[string]string{ReplaceNullWithDefaultConfig: "false"})
	s := data.Build(data.String).Optional().Default("default").MustSchema()
	got, _ := c.FromConnect("t", s, nil)
	if string(got) != `{"schema":{"type":"string","optional":true,"default":"default"},"payload":null}` {
		t.Errorf("serialize null = %s", got)
	}
	_, v, err := c.ToConnect("t", got)
	if err != nil || v != nil {
		t.Errorf("deserialize null = %v %v", v, err)
	}
}

func TestJSONNumericDecimal(t *testing.T) {
	c := jsonConv(t, map[string]string{DecimalFormatConfig: "numeric"})
	for _, tt := range []struct {
		d    data.Decimal
		want string
	}{
		{data.NewDecimal(156, 2), "1.56"},
		{data.NewDecimal(15600, 4), "1.5600"},
		{data.NewDecimal(-5, 0), "-5"},
	} {
		got, err := c.FromConnect("t", data.DecimalSchema(tt.d.Scale).MustSchema(), tt.d)
		want := `{"schema":{"type":"bytes","optional":false,"name":"org.apache.kafka.connect.data.Decimal","version":1,"parameters":{"scale":"` +
			strconv.Itoa(int(tt.d.Scale)) + `"}},"payload":` + tt.want + `}`
		if err != nil || string(got) != want {
			t.Errorf("numeric %v = %s %v", tt.d, got, err)
		}
		_, v, err := c.ToConnect("t", got)
		if err != nil || !v.(data.Decimal).Equal(tt.d) {
			t.Errorf("numeric read back %v %v", v, err)
		}
	}
}

// The envelope example from Confluent's "Kafka Connect Deep Dive –
// Converters and Serialization Explained": reading and writing it again
// yields the same bytes.
func TestJSONGoldenEnvelope(t *testing.T) {
	golden := `{"schema":{"type":"struct","fields":[{"type":"int64","optional":false,"field":"registertime"},{"type":"string","optional":false,"field":"userid"},{"type":"string","optional":false,"field":"regionid"},{"type":"string","optional":false,"field":"gender"}],"optional":false,"name":"ksql.users"},"payload":{"registertime":1493819497170,"userid":"User_1","regionid":"Region_5","gender":"MALE"}}`
	c := jsonConv(t, nil)
	s, v, err := c.ToConnect("users", []byte(golden))
	if err != nil {
		t.Fatal(err)
	}
	st := v.(*data.StructValue)
	if got, _ := st.Get("userid"); got != "User_1" {
		t.Errorf("userid = %v", got)
	}
	out, err := c.FromConnect("users", s, v)
	if err != nil || string(out) != golden {
		t.Errorf("re-serialized:\n%s\nwant\n%s (%v)", out, golden, err)
	}
	// The parsed schema is cached: the same text yields the same *Schema.
	s2, _, _ := c.ToConnect("users", []byte(golden))
	if s2 != s {
		t.Error("schema not cached by its JSON text")
	}
}

func TestJSONSchemaless(t *testing.T) {
	c := jsonConv(t, map[string]string{SchemasEnableConfig: "false"})
	tests := []struct {
		in   string
		want any
	}{
		{`true`, true},
		{`{ "a": "", "b": null}`, map[string]any{"a": "", "b": nil}},
		{`[1, 2.5, "x", {"k": [false]}]`, []any{int64(1), 2.5, "x", map[string]any{"k": []any{false}}}},
		{`123456789012345678901234567890`, 1.2345678901234568e29},
		{`  `, nil},
		{``, nil},
		{`{"schema":{"type":"int32"},"payload":1}`, map[string]any{"schema": map[string]any{"type": "int32"}, "payload": int64(1)}},
	}
	for _, tt := range tests {
		s, v, err := c.ToConnect("t", []byte(tt.in))
		if err != nil || s != nil || !data.ValueEqual(v, tt.want) {
			t.Errorf("%q = %v %#v %v", tt.in, s, v, err)
		}
	}
	if _, _, err := c.ToConnect("t", []byte(`{"a":}`)); err == nil || !strings.HasPrefix(err.Error(), "Converting byte[] to Kafka Connect data failed due to serialization error: ") {
		t.Errorf("bad JSON error = %v", err)
	}

	outTests := []struct {
		value any
		want  string
	}{
		{map[string]any{"b": int64(2), "a": "x", "c": []any{1.5, nil, true}}, `{"a":"x","b":2,"c":[1.5,null,true]}`},
		{map[string]any{"n": 42, "u": uint64(7), "s": []string{"p", "q"}, "m": map[string]int{"z": 1}}, `{"m":{"z":1},"n":42,"s":["p","q"],"u":7}`},
		{"plain", `"plain"`},
		{map[any]any{int64(2): "b", int64(1): "a"}, `[[1,"a"],[2,"b"]]`},
		{[]byte{1, 2, 3}, `"AQID"`},
	}
	for _, tt := range outTests {
		got, err := c.FromConnect("t", nil, tt.value)
		if err != nil || string(got) != tt.want {
			t.Errorf("FromConnect(%#v) = %s %v, want %s", tt.value, got, err, tt.want)
		}
	}
	// schemas.enable=false with a schema: the bare payload.
	st := data.Build(data.Struct).Field("id", data.PrimitiveSchema(data.Int32)).MustSchema()
	got, err := c.FromConnect("t", st, data.NewStruct(st).MustPut("id", int32(3)))
	if err != nil || string(got) != `{"id":3}` {
		t.Errorf("struct without envelope = %s %v", got, err)
	}
}

func TestJSONDeepNesting(t *testing.T) {
	c := jsonConv(t, map[string]string{SchemasEnableConfig: "false"})
	deep := strings.Repeat("[", 2000) + strings.Repeat("]", 2000)
	if _, _, err := c.ToConnect("t", []byte(deep)); err == nil || !strings.Contains(err.Error(), "nested more than 1000 levels") {
		t.Errorf("deep nesting error = %v", err)
	}
}
