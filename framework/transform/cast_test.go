package transform

import (
	"math"
	"testing"
	"time"

	"github.com/connectd/connectd/framework/data"
)

// Modeled on Kafka's CastTest.castFieldsWithSchema.
func TestCastFieldsWithSchema(t *testing.T) {
	day := time.UnixMilli(24 * 60 * 60 * 1000)
	byteArray := []byte{0xFE, 0xDC, 0xBA, 0x98, 0x76, 0x54, 0x32, 0x10}
	tr := mustTransform(t, "Cast$Value", map[string]string{"spec": "int8:int16,int16:int32,int32:int64,int64:boolean,float32:float64,float64:boolean,boolean:int8,string:int32,bigdecimal:string,date:string,optional:int32,bytes:string"})
	s := data.Build(data.Struct).
		Field("int8", data.PrimitiveSchema(data.Int8)).
		Field("int16", data.OptionalSchema(data.Int16)).
		Field("int32", data.Build(data.Int32).Default(int32(2)).MustSchema()).
		Field("int64", data.PrimitiveSchema(data.Int64)).
		Field("float32", data.PrimitiveSchema(data.Float32)).
		Field("float64", data.Build(data.Float64).Default(-1.125).MustSchema()).
		Field("boolean", data.PrimitiveSchema(data.Boolean)).
		Field("string", data.PrimitiveSchema(data.String)).
		Field("bigdecimal", data.DecimalSchema(0).MustSchema()).
		Field("date", data.DateSchema().MustSchema()).
		Field("optional", data.OptionalSchema(data.Float32)).
		Field("timestamp", data.TimestampSchema().MustSchema()).
		Field("bytes", data.PrimitiveSchema(data.Bytes)).
		MustSchema()
	v := data.NewStruct(s).
		MustPut("int8", int8(8)).MustPut("int16", int16(16)).MustPut("int32", int32(32)).MustPut("int64", int64(64)).
		MustPut("float32", float32(32)).MustPut("float64", -64.0).MustPut("boolean", true).MustPut("string", "42").
		MustPut("bigdecimal", data.NewDecimal(42, 0)).MustPut("date", day).MustPut("timestamp", time.UnixMilli(0)).
		MustPut("bytes", byteArray)
	r := apply(t, tr, &Record{Topic: "topic", ValueSchema: s, Value: v})
	out := r.Value.(*data.StructValue)
	us := r.ValueSchema
	want := map[string]struct {
		value any
		typ   data.Type
	}{
		"int8":       {int16(8), data.Int16},
		"int16":      {int32(16), data.Int32},
		"int32":      {int64(32), data.Int64},
		"int64":      {true, data.Boolean},
		"float32":    {32.0, data.Float64},
		"float64":    {true, data.Boolean},
		"boolean":    {int8(1), data.Int8},
		"string":     {int32(42), data.Int32},
		"bigdecimal": {"42", data.String},
		"date":       {"1970-01-02", data.String},
		"optional":   {nil, data.Int32},
		"timestamp":  {time.UnixMilli(0), data.Int64},
		"bytes":      {"/ty6mHZUMhA=", data.String},
	}
	for name, w := range want {
		got, _ := out.Get(name)
		if !data.ValueEqual(got, w.value) {
			t.Errorf("%s = %#v, want %#v", name, got, w.value)
		}
		f, _ := us.Field(name)
		if f.Schema.Type != w.typ {
			t.Errorf("%s type = %s, want %s", name, f.Schema.Type, w.typ)
		}
	}
	if f, _ := us.Field("int16"); !f.Schema.Optional {
		t.Error("optional lost")
	}
	if f, _ := us.Field("int32"); f.Schema.Default != int64(2) {
		t.Errorf("int32 default = %#v", f.Schema.Default)
	}
	if f, _ := us.Field("float64"); f.Schema.Default != true {
		t.Errorf("float64 default = %#v", f.Schema.Default)
	}
	if f, _ := us.Field("timestamp"); f.Schema.Name != data.TimestampName {
		t.Error("uncast field schema changed")
	}
}

func TestCastWholeAndSchemaless(t *testing.T) {
	tests := []struct {
		spec  string
		in    any
		want  any
		isErr string
	}{
		{"int8", int32(42), int8(42), ""},
		{"int8", int32(300), int8(44), ""}, // narrowing keeps the low bits, like Java
		{"int16", 1.9e10, int16(-1), ""},   // double → int (saturates) → short
		{"int64", math.NaN(), int64(0), ""},
		{"boolean", int32(42), true, ""},
		{"boolean", int32(0), false, ""},
		{"boolean", 0.5, false, ""}, // Java: longValue() != 0
		{"boolean", "TRUE", true, ""},
		{"boolean", "yes", false, ""},
		{"float32", int64(1), float32(1), ""},
		{"float64", "1.5", 1.5, ""},
		{"string", float32(1.1), "1.1", ""},
		{"string", 100.0, "100.0", ""},
		{"string", int64(7), "7", ""},
		{"string", []byte("hi"), "aGk=", ""},
		{"int32", "x", nil, "Value (x) was out of range for requested data type"},
		{"int32", []byte{1}, nil, "Unexpected type in Cast transformation: []uint8"},
		{"int32", []any{1}, nil, "Cast transformation does not support casting from ARRAY; supported types are [INT8, INT16, INT32, INT64, FLOAT32, FLOAT64, BOOLEAN, STRING, BYTES]"},
		{"int32", 5, nil, "Cast transformation was passed a value of type int which is not supported by Connect's data API"},
	}
	for _, tt := range tests {
		tr := mustTransform(t, "Cast$Value", map[string]string{"spec": tt.spec})
		r := &Record{Value: tt.in}
		_, err := tr.Apply(r)
		if tt.isErr != "" {
			if err == nil || err.Error() != tt.isErr {
				t.Errorf("%s(%#v): err %v, want %s", tt.spec, tt.in, err, tt.isErr)
			}
			continue
		}
		if err != nil || !data.ValueEqual(r.Value, tt.want) {
			t.Errorf("%s(%#v) = %#v %v, want %#v", tt.spec, tt.in, r.Value, err, tt.want)
		}
	}

	// Whole key with schema (Kafka's castWholeRecordKeyWithSchema).
	tr := mustTransform(t, "Cast$Key", map[string]string{"spec": "int8"})
	r := apply(t, tr, &Record{KeySchema: data.PrimitiveSchema(data.Int32), Key: int32(42), Value: "v"})
	if r.Key != int8(42) || r.KeySchema.Type != data.Int8 || r.Value != "v" {
		t.Errorf("key cast = %#v %v", r.Key, r.KeySchema)
	}
	// Timestamp to int64 through its wire form.
	tr = mustTransform(t, "Cast$Value", map[string]string{"spec": "int64"})
	r = apply(t, tr, &Record{ValueSchema: data.TimestampSchema().Optional().MustSchema(), Value: time.UnixMilli(1234)})
	if r.Value != int64(1234) || r.ValueSchema.Name != "" || !r.ValueSchema.Optional {
		t.Errorf("timestamp cast = %#v %+v", r.Value, r.ValueSchema)
	}

	// Schemaless map fields (Kafka's castFieldsSchemaless).
	tr = mustTransform(t, "Cast$Value", map[string]string{"spec": "int8:int16,int16:int32,string:int32,missing:int8"})
	in := map[string]any{"int8": int8(8), "int16": int16(16), "string": "42", "other": "x"}
	r = apply(t, tr, &Record{Value: in})
	want := map[string]any{"int8": int16(8), "int16": int32(16), "string": int32(42), "other": "x", "missing": nil}
	if !data.ValueEqual(r.Value, want) {
		t.Errorf("schemaless = %v", r.Value)
	}

	for spec, msg := range map[string]string{
		"":          "Invalid value [] for configuration spec: Must specify at least one field to cast.",
		"a:int8,b":  "Invalid value [a:int8, b] for configuration spec: Invalid type found in casting spec: b",
		"int8,int8": "Invalid value [int8, int8] for configuration spec: Cast transformations that specify a type to cast the entire value to may only specify a single cast in their spec",
		"a:b:c":     "Invalid value [a:b:c] for configuration spec: Invalid cast mapping: a:b:c",
		"a:array":   "Invalid value [a:array] for configuration spec: Cast transformation does not support casting to ARRAY; supported types are [INT8, INT16, INT32, INT64, FLOAT32, FLOAT64, BOOLEAN, STRING]",
	} {
		err := (&Cast{}).Configure(map[string]string{"spec": spec})
		if err == nil || err.Error() != msg {
			t.Errorf("spec %q: %v\nwant %s", spec, err, msg)
		}
	}
}
