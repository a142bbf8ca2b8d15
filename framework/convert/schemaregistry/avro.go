package schemaregistry

import (
	"encoding/json"
	"fmt"
	"math/big"
	"strconv"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/schemaregistry"
	"github.com/confluentinc/confluent-kafka-go/v2/schemaregistry/serde/avrov2"
	"github.com/hamba/avro/v2"

	"github.com/connectd/connectd/framework/data"
)

// Avro schema properties Confluent's AvroData uses for Connect types Avro
// lacks.
const (
	connectTypeProp   = "connect.type"
	precisionParam    = "connect.decimal.precision"
	defaultPrecision  = 64
	defaultRecordName = "io.confluent.connect.avro.ConnectDefault"
	mapEntryName      = "io.confluent.connect.avro.MapEntry"
)

// AvroConverter is Confluent's io.confluent.connect.avro.AvroConverter:
// Connect data as Avro, framed in the Confluent wire format.
//
// Connect schemas map to Avro as Confluent's AvroData maps them: optional
// is a union with null, int8/int16 are Avro int with a connect.type
// property, Decimal is bytes with logicalType decimal, Date, Time and
// Timestamp are int date, int time-millis and long timestamp-millis, maps
// with string keys are Avro maps and other maps arrays of MapEntry records.
type AvroConverter struct {
	set    settings
	isKey  bool
	client schemaregistry.Client
	ser    *avrov2.Serializer
	de     *avrov2.Deserializer

	// Caches; a converter is used by one goroutine at a time.
	toAvro   map[*data.Schema]string // Avro schema JSON by Connect schema
	fromAvro map[string]*avroEntry   // by Avro schema JSON
	record   string                  // full name of the record being written
}

type avroEntry struct {
	avro    avro.Schema
	connect *data.Schema
}

// Configure implements convert.Converter.
func (c *AvroConverter) Configure(props map[string]string, isKey bool) error {
	s, client, st, err := connect(props, isKey)
	if err != nil {
		return err
	}
	sc := avrov2.NewSerializerConfig()
	sc.AutoRegisterSchemas = s.autoRegister
	sc.UseLatestVersion = s.useLatest
	ser, err := avrov2.NewSerializer(client, st, sc)
	if err != nil {
		return fmt.Errorf("avro serializer: %w", err)
	}
	de, err := avrov2.NewDeserializer(client, st, avrov2.NewDeserializerConfig())
	if err != nil {
		return fmt.Errorf("avro deserializer: %w", err)
	}
	strategy := subjectStrategy(s.strategy, avroRecordName, &c.record)
	ser.SubjectNameStrategy, de.SubjectNameStrategy = strategy, strategy
	c.set, c.isKey, c.client, c.ser, c.de = s, isKey, client, ser, de
	c.toAvro = map[*data.Schema]string{}
	c.fromAvro = map[string]*avroEntry{}
	return nil
}

// Close releases the registry client.
func (c *AvroConverter) Close() error {
	if c.client == nil {
		return nil
	}
	return c.client.Close()
}

func avroRecordName(info schemaregistry.SchemaInfo) (string, error) {
	s, err := avro.Parse(info.Schema)
	if err != nil {
		return "", fmt.Errorf("avro schema: %w", err)
	}
	n, ok := s.(avro.NamedSchema)
	if !ok {
		return "", fmt.Errorf("RecordNameStrategy needs a named Avro schema, not %s", s.Type())
	}
	return n.FullName(), nil
}

// FromConnect implements convert.Converter.
func (c *AvroConverter) FromConnect(topic string, schema *data.Schema, value any) ([]byte, error) {
	if value == nil {
		return nil, nil
	}
	if schema == nil {
		return nil, &data.Error{Msg: "AvroConverter needs a schema; the record has none (schemaless data)"}
	}
	text, ok := c.toAvro[schema]
	if !ok {
		js, err := avroSchemaJSON(schema)
		if err != nil {
			return nil, err
		}
		text = js
		c.toAvro[schema] = text
	}
	info := schemaregistry.SchemaInfo{Schema: text}
	c.record, _ = avroRecordName(info)
	defer func() { c.record = "" }()
	if c.set.useLatest {
		info = schemaregistry.SchemaInfo{}
	}
	id, err := c.ser.GetSchemaID(avrov2.SchemaType, topic, nil, &info)
	if err != nil {
		return nil, classify(c.set.urls, "the Avro schema for topic "+topic, err)
	}
	entry, err := c.entry(info.Schema)
	if err != nil {
		return nil, err
	}
	v, err := toAvroValue(entry.avro, schema, value)
	if err != nil {
		return nil, err
	}
	// The serializer frames with the id just resolved: UseSchemaID makes it
	// fetch that schema (cached) instead of deriving one from a Go type.
	conf := c.ser.Conf
	saved := *conf
	conf.AutoRegisterSchemas, conf.UseLatestVersion, conf.UseSchemaID = false, false, id.ID
	b, err := c.ser.Serialize(topic, &v)
	*conf = saved
	if err != nil {
		return nil, classify(c.set.urls, "serializing Avro for topic "+topic, err)
	}
	return b, nil
}

// ToConnect implements convert.Converter.
func (c *AvroConverter) ToConnect(topic string, b []byte) (*data.Schema, any, error) {
	if b == nil {
		return nil, nil, nil
	}
	if err := checkFrame(b); err != nil {
		return nil, nil, err
	}
	info, err := c.de.GetSchema(topic, b)
	if err != nil {
		return nil, nil, classify(c.set.urls, fmt.Sprintf("fetching schema id %d", frameID(b)), err)
	}
	entry, err := c.entry(info.Schema)
	if err != nil {
		return nil, nil, err
	}
	var out any
	if err := c.de.DeserializeInto(topic, b, &out); err != nil {
		return nil, nil, classify(c.set.urls, fmt.Sprintf("decoding Avro with schema id %d", frameID(b)), err)
	}
	if out == nil && !entry.connect.Optional {
		// hamba/avro reports running out of bytes mid-record as a nil
		// value without an error.
		return nil, nil, &data.Error{Msg: fmt.Sprintf("decoding Avro with schema id %d: truncated payload (%d bytes)", frameID(b), len(b))}
	}
	v, err := fromAvroValue(entry.avro, entry.connect, out)
	if err != nil {
		return nil, nil, err
	}
	return entry.connect, v, nil
}

func (c *AvroConverter) entry(text string) (*avroEntry, error) {
	if e, ok := c.fromAvro[text]; ok {
		return e, nil
	}
	as, err := avro.Parse(text)
	if err != nil {
		return nil, &data.Error{Msg: fmt.Sprintf("invalid Avro schema from the registry: %v", err)}
	}
	cs, err := connectSchema(as, false)
	if err != nil {
		return nil, err
	}
	e := &avroEntry{avro: as, connect: cs}
	c.fromAvro[text] = e
	return e, nil
}

// checkFrame checks the Confluent wire format's header, so that a record
// that never went through a Schema Registry serializer gets a clear reason.
func checkFrame(b []byte) error {
	if len(b) == 0 || b[0] != 0 {
		return &data.Error{Msg: "unknown magic byte: the payload is not in the Schema Registry wire format (magic byte 0, 4-byte schema id)"}
	}
	if len(b) < 5 {
		return &data.Error{Msg: fmt.Sprintf("truncated payload: %d bytes, the wire format needs at least 5 (magic byte, schema id)", len(b))}
	}
	return nil
}

func frameID(b []byte) int {
	return int(uint32(b[1])<<24 | uint32(b[2])<<16 | uint32(b[3])<<8 | uint32(b[4]))
}

// --- Connect schema → Avro schema JSON ---

func avroSchemaJSON(s *data.Schema) (string, error) {
	n := 0
	v, err := avroType(s, &n)
	if err != nil {
		return "", err
	}
	if s.Optional {
		v = []any{"null", v}
	}
	b, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// avroType returns the JSON of the non-null Avro type for s; n numbers
// unnamed records as Confluent does (ConnectDefault, ConnectDefault2, …).
func avroType(s *data.Schema, n *int) (any, error) {
	if t, ok, err := avroLogicalType(s); ok {
		return t, err
	}
	switch s.Type {
	case data.Int8, data.Int16:
		return map[string]any{"type": "int", connectTypeProp: string(s.Type)}, nil
	case data.Int32:
		return "int", nil
	case data.Int64:
		return "long", nil
	case data.Float32:
		return "float", nil
	case data.Float64:
		return "double", nil
	case data.Boolean:
		return "boolean", nil
	case data.String:
		return "string", nil
	case data.Bytes:
		return "bytes", nil
	case data.Array:
		it, err := avroField(s.Value, n)
		if err != nil {
			return nil, err
		}
		return map[string]any{"type": "array", "items": it}, nil
	case data.Map:
		return avroMapType(s, n)
	case data.Struct:
		return avroRecordType(s, n)
	}
	return nil, &data.Error{Msg: fmt.Sprintf("AvroConverter cannot map Connect type %s", s.Type.KafkaName())}
}

// avroLogicalType is the Avro type of the Connect logical types (Decimal,
// Date, Time, Timestamp); ok is false for any other schema.
func avroLogicalType(s *data.Schema) (t any, ok bool, err error) {
	switch s.Name {
	case data.DecimalName:
		scale, err := data.DecimalScale(s)
		if err != nil {
			return nil, true, &data.Error{Msg: err.Error()}
		}
		prec := defaultPrecision
		if p, ok := s.Parameters[precisionParam]; ok {
			if v, err := strconv.Atoi(p); err == nil {
				prec = v
			}
		}
		return map[string]any{"type": "bytes", "logicalType": "decimal", "precision": prec, "scale": scale}, true, nil
	case data.DateName:
		return map[string]any{"type": "int", "logicalType": "date"}, true, nil
	case data.TimeName:
		return map[string]any{"type": "int", "logicalType": "time-millis"}, true, nil
	case data.TimestampName:
		return map[string]any{"type": "long", "logicalType": "timestamp-millis"}, true, nil
	}
	return nil, false, nil
}

// avroMapType is an Avro map for string keys, else an array of MapEntry
// records.
func avroMapType(s *data.Schema, n *int) (any, error) {
	vt, err := avroField(s.Value, n)
	if err != nil {
		return nil, err
	}
	if s.Key.Type == data.String && s.Key.Name == "" {
		return map[string]any{"type": "map", "values": vt}, nil
	}
	kt, err := avroField(s.Key, n)
	if err != nil {
		return nil, err
	}
	return map[string]any{"type": "array", "items": map[string]any{
		"type": "record", "name": mapEntryName + suffix(n),
		"fields": []any{map[string]any{"name": "key", "type": kt}, map[string]any{"name": "value", "type": vt}},
	}}, nil
}

// avroRecordType is the Avro record for a Connect struct.
func avroRecordType(s *data.Schema, n *int) (any, error) {
	name := s.Name
	if name == "" {
		name = defaultRecordName + suffix(n)
	}
	fields := make([]any, 0, len(s.Fields))
	for _, f := range s.Fields {
		af, err := avroRecordField(f, n)
		if err != nil {
			return nil, err
		}
		fields = append(fields, af)
	}
	rec := map[string]any{"type": "record", "name": name, "fields": fields}
	if s.Doc != "" {
		rec["doc"] = s.Doc
	}
	return rec, nil
}

// avroRecordField is one field of an Avro record: name, type, default, doc.
func avroRecordField(f data.Field, n *int) (map[string]any, error) {
	ft, err := avroField(f.Schema, n)
	if err != nil {
		return nil, err
	}
	af := map[string]any{"name": f.Name, "type": ft}
	if f.Schema.Optional && f.Schema.Default == nil {
		af["default"] = nil
	} else if f.Schema.Default != nil {
		d, err := avroDefault(f.Schema, f.Schema.Default)
		if err != nil {
			return nil, err
		}
		af["default"] = d
	}
	if f.Schema.Doc != "" {
		af["doc"] = f.Schema.Doc
	}
	return af, nil
}

// suffix numbers the second and later generated record names.
func suffix(n *int) string {
	*n++
	if *n == 1 {
		return ""
	}
	return strconv.Itoa(*n)
}

// avroField is the type of a field, array item or map value: optional
// schemas are unions with null, null first unless a non-null default must
// come first (Avro takes a union's default from its first branch).
func avroField(s *data.Schema, n *int) (any, error) {
	t, err := avroType(s, n)
	if err != nil {
		return nil, err
	}
	if !s.Optional {
		return t, nil
	}
	if s.Default != nil {
		return []any{t, "null"}, nil
	}
	return []any{"null", t}, nil
}

// avroDefault renders a Connect default as the JSON Avro expects.
func avroDefault(s *data.Schema, v any) (any, error) {
	switch s.Name {
	case data.DecimalName:
		d := v.(data.Decimal)
		return bytesJSON(d.UnscaledBytes()), nil
	case data.DateName:
		days, err := data.DateToDays(v.(time.Time))
		return days, err
	case data.TimeName:
		ms, err := data.TimeToMillis(v.(time.Time))
		return ms, err
	case data.TimestampName:
		return data.TimestampToMillis(v.(time.Time)), nil
	}
	switch x := v.(type) {
	case []byte:
		return bytesJSON(x), nil
	case int8, int16, int32, int64, float32, float64, bool, string:
		return x, nil
	}
	return nil, &data.Error{Msg: fmt.Sprintf("AvroConverter cannot map a default of type %T", v)}
}

// bytesJSON is Avro's JSON form of bytes: one code point per byte.
func bytesJSON(b []byte) string {
	r := make([]rune, len(b))
	for i, c := range b {
		r[i] = rune(c)
	}
	return string(r)
}

// --- Avro schema → Connect schema ---

func connectSchema(s avro.Schema, optional bool) (*data.Schema, error) {
	var b *data.Builder
	switch t := s.(type) {
	case *avro.UnionSchema:
		types := t.Types()
		if len(types) == 2 && (types[0].Type() == avro.Null || types[1].Type() == avro.Null) {
			inner := types[1]
			if types[1].Type() == avro.Null {
				inner = types[0]
			}
			return connectSchema(inner, true)
		}
		return nil, &data.Error{Msg: "AvroConverter supports unions only of null and one type, got " + s.String()}
	case *avro.PrimitiveSchema:
		b = primitiveBuilder(t)
		if b == nil {
			return nil, &data.Error{Msg: "AvroConverter cannot map Avro type " + s.String()}
		}
	case *avro.FixedSchema:
		if d, ok := t.Logical().(*avro.DecimalLogicalSchema); ok {
			b = data.DecimalSchema(int32(d.Scale())).Parameter(precisionParam, strconv.Itoa(d.Precision()))
		} else {
			b = data.Build(data.Bytes)
		}
	case *avro.EnumSchema:
		b = data.Build(data.String)
	case *avro.ArraySchema:
		if rec, ok := t.Items().(*avro.RecordSchema); ok && isMapEntry(rec) {
			k, err := connectSchema(rec.Fields()[0].Type(), false)
			if err != nil {
				return nil, err
			}
			v, err := connectSchema(rec.Fields()[1].Type(), false)
			if err != nil {
				return nil, err
			}
			b = data.MapOf(k, v)
			break
		}
		e, err := connectSchema(t.Items(), false)
		if err != nil {
			return nil, err
		}
		b = data.ArrayOf(e)
	case *avro.MapSchema:
		v, err := connectSchema(t.Values(), false)
		if err != nil {
			return nil, err
		}
		b = data.MapOf(data.PrimitiveSchema(data.String), v)
	case *avro.RecordSchema:
		b = data.Build(data.Struct)
		if n := t.FullName(); n != defaultRecordName {
			b.Name(n)
		}
		if t.Doc() != "" {
			b.Doc(t.Doc())
		}
		for _, f := range t.Fields() {
			fs, err := connectSchema(f.Type(), false)
			if err != nil {
				return nil, err
			}
			if f.HasDefault() && f.Default() != nil {
				d, err := fromAvroValue(f.Type(), fs, unionDefault(f.Type(), f.Default()))
				if err != nil {
					return nil, &data.Error{Msg: fmt.Sprintf("default of field %s: %v", f.Name(), err)}
				}
				fs = withDefault(fs, d)
			}
			b.Field(f.Name(), fs)
		}
	default:
		return nil, &data.Error{Msg: "AvroConverter cannot map Avro type " + s.String()}
	}
	if optional {
		b.Optional()
	}
	out, err := b.Schema()
	if err != nil {
		return nil, &data.Error{Msg: err.Error()}
	}
	return out, nil
}

func withDefault(s *data.Schema, d any) *data.Schema {
	c := *s
	c.Default = d
	return &c
}

// unionDefault wraps a union field's default as the decoder would present
// it, so that fromAvroValue treats defaults and decoded values alike.
func unionDefault(s avro.Schema, d any) any {
	u, ok := s.(*avro.UnionSchema)
	if !ok || d == nil {
		return d
	}
	return map[string]any{unionName(u.Types()[0]): d}
}

func isMapEntry(r *avro.RecordSchema) bool {
	f := r.Fields()
	return len(f) == 2 && f[0].Name() == "key" && f[1].Name() == "value" &&
		len(r.FullName()) >= len(mapEntryName) && r.FullName()[:len(mapEntryName)] == mapEntryName
}

func primitiveBuilder(p *avro.PrimitiveSchema) *data.Builder {
	logical := ""
	if l := p.Logical(); l != nil {
		logical = string(l.Type())
	}
	switch p.Type() {
	case avro.Int:
		switch logical {
		case "date":
			return data.DateSchema()
		case "time-millis":
			return data.TimeSchema()
		}
		switch p.Prop(connectTypeProp) {
		case "int8":
			return data.Build(data.Int8)
		case "int16":
			return data.Build(data.Int16)
		}
		return data.Build(data.Int32)
	case avro.Long:
		if logical == "timestamp-millis" {
			return data.TimestampSchema()
		}
		return data.Build(data.Int64)
	case avro.Float:
		return data.Build(data.Float32)
	case avro.Double:
		return data.Build(data.Float64)
	case avro.Boolean:
		return data.Build(data.Boolean)
	case avro.String:
		return data.Build(data.String)
	case avro.Bytes:
		if d, ok := p.Logical().(*avro.DecimalLogicalSchema); ok {
			return data.DecimalSchema(int32(d.Scale())).Parameter(precisionParam, strconv.Itoa(d.Precision()))
		}
		return data.Build(data.Bytes)
	}
	return nil
}

// unionName is the name hamba/avro uses for a union branch in generic
// data: a named type's full name, else the type with its logical type.
func unionName(s avro.Schema) string {
	if n, ok := s.(avro.NamedSchema); ok {
		return n.FullName()
	}
	name := string(s.Type())
	if l, ok := s.(avro.LogicalTypeSchema); ok && l.Logical() != nil {
		name += "." + string(l.Logical().Type())
	}
	return name
}

// --- values ---

// toAvroValue turns a Connect value into hamba/avro's generic form for the
// Avro schema as (which, with use.latest.version, is the registry's).
func toAvroValue(as avro.Schema, cs *data.Schema, v any) (any, error) {
	if v == nil {
		return nil, nil
	}
	if u, ok := as.(*avro.UnionSchema); ok {
		for _, t := range u.Types() {
			if t.Type() != avro.Null {
				inner, err := toAvroValue(t, cs, v)
				if err != nil {
					return nil, err
				}
				return map[string]any{unionName(t): inner}, nil
			}
		}
	}
	switch x := v.(type) {
	case int8:
		return int32(x), nil
	case int16:
		return int32(x), nil
	case data.Decimal:
		return toAvroDecimal(as, x)
	case time.Time:
		return toAvroTime(cs, x)
	case *data.StructValue:
		return toAvroRecord(as, x)
	case []any:
		return toAvroArray(as, cs, x)
	case map[string]any:
		return mapToAvro(as, cs, func(yield func(k, v any) error) error {
			for k, e := range x {
				if err := yield(k, e); err != nil {
					return err
				}
			}
			return nil
		})
	case map[any]any:
		return mapToAvro(as, cs, func(yield func(k, v any) error) error {
			for k, e := range x {
				if err := yield(k, e); err != nil {
					return err
				}
			}
			return nil
		})
	}
	return v, nil
}

// toAvroDecimal is a decimal's unscaled bytes at the scale of the Avro
// schema's decimal logical type (else its own scale).
func toAvroDecimal(as avro.Schema, x data.Decimal) (any, error) {
	scale := x.Scale
	if d, ok := logicalOf(as).(*avro.DecimalLogicalSchema); ok {
		scale = int32(d.Scale())
	}
	r, err := x.Rescale(scale)
	if err != nil {
		return nil, &data.Error{Msg: fmt.Sprintf("decimal %s does not fit scale %d: %v", x, scale, err)}
	}
	return r.UnscaledBytes(), nil
}

// toAvroTime is a Time as a duration since midnight, a Date in UTC and
// any other time (Timestamp) as it is.
func toAvroTime(cs *data.Schema, x time.Time) (any, error) {
	if cs != nil && cs.Name == data.TimeName {
		ms, err := data.TimeToMillis(x)
		if err != nil {
			return nil, &data.Error{Msg: err.Error()}
		}
		return time.Duration(ms) * time.Millisecond, nil
	}
	if cs != nil && cs.Name == data.DateName {
		return x.UTC(), nil
	}
	return x, nil
}

// toAvroRecord fills the fields of the Avro record as from the struct x;
// a field x lacks may be left out only if the record gives it a default.
func toAvroRecord(as avro.Schema, x *data.StructValue) (any, error) {
	rec, ok := as.(*avro.RecordSchema)
	if !ok {
		return nil, &data.Error{Msg: fmt.Sprintf("a struct does not fit Avro %s", as.Type())}
	}
	out := make(map[string]any, len(rec.Fields()))
	for _, f := range rec.Fields() {
		cf, ok := x.Schema().Field(f.Name())
		if !ok {
			if f.HasDefault() {
				continue
			}
			return nil, &data.Error{Msg: fmt.Sprintf("the record has no field %q, which the registry's schema requires", f.Name())}
		}
		fv, err := x.Get(f.Name())
		if err != nil {
			return nil, &data.Error{Msg: err.Error()}
		}
		av, err := toAvroValue(f.Type(), cf.Schema, fv)
		if err != nil {
			return nil, err
		}
		out[f.Name()] = av
	}
	return out, nil
}

func toAvroArray(as avro.Schema, cs *data.Schema, x []any) (any, error) {
	arr, ok := as.(*avro.ArraySchema)
	if !ok {
		return nil, &data.Error{Msg: fmt.Sprintf("an array does not fit Avro %s", as.Type())}
	}
	out := make([]any, len(x))
	for i, e := range x {
		av, err := toAvroValue(arr.Items(), elemSchema(cs), e)
		if err != nil {
			return nil, err
		}
		out[i] = av
	}
	return out, nil
}

func elemSchema(cs *data.Schema) *data.Schema {
	if cs == nil {
		return nil
	}
	return cs.Value
}

func mapToAvro(as avro.Schema, cs *data.Schema, each func(func(k, v any) error) error) (any, error) {
	var ks, vs *data.Schema
	if cs != nil {
		ks, vs = cs.Key, cs.Value
	}
	switch t := as.(type) {
	case *avro.MapSchema:
		out := map[string]any{}
		err := each(func(k, v any) error {
			s, ok := k.(string)
			if !ok {
				return &data.Error{Msg: fmt.Sprintf("Avro map keys are strings, got %T", k)}
			}
			av, err := toAvroValue(t.Values(), vs, v)
			out[s] = av
			return err
		})
		return out, err
	case *avro.ArraySchema:
		rec, ok := t.Items().(*avro.RecordSchema)
		if !ok || !isMapEntry(rec) {
			break
		}
		var out []any
		err := each(func(k, v any) error {
			ak, err := toAvroValue(rec.Fields()[0].Type(), ks, k)
			if err != nil {
				return err
			}
			av, err := toAvroValue(rec.Fields()[1].Type(), vs, v)
			out = append(out, map[string]any{"key": ak, "value": av})
			return err
		})
		return out, err
	}
	return nil, &data.Error{Msg: fmt.Sprintf("a map does not fit Avro %s", as.Type())}
}

func logicalOf(s avro.Schema) avro.LogicalSchema {
	if l, ok := s.(avro.LogicalTypeSchema); ok {
		return l.Logical()
	}
	return nil
}

// fromAvroValue turns hamba/avro's generic decoding into a Connect value of
// schema cs (derived from as by connectSchema).
func fromAvroValue(as avro.Schema, cs *data.Schema, v any) (any, error) {
	if v == nil {
		return nil, nil
	}
	if u, ok := as.(*avro.UnionSchema); ok {
		if t, inner, ok := avroUnionBranch(u, v); ok {
			return fromAvroValue(t, cs, inner)
		}
	}
	// A logical value in a form it does not take falls through to its
	// underlying type.
	if out, ok, err := fromAvroLogical(cs, v); ok {
		return out, err
	}
	var (
		out any
		ok  bool
		err error
	)
	switch cs.Type {
	case data.Array:
		out, ok, err = fromAvroArray(as, cs, v)
	case data.Map:
		out, ok, err = fromAvroMap(as, cs, v)
	case data.Struct:
		out, ok, err = fromAvroStruct(as, cs, v)
	default:
		out, ok = fromAvroScalar(cs.Type, v)
	}
	if ok || err != nil {
		return out, err
	}
	return nil, &data.Error{Msg: fmt.Sprintf("Avro value of Go type %T does not fit %s", v, cs)}
}

// avroUnionBranch picks the branch of union u that v was decoded with: the
// one its single-key map names, else the first non-null one.
func avroUnionBranch(u *avro.UnionSchema, v any) (avro.Schema, any, bool) {
	if m, ok := v.(map[string]any); ok && len(m) == 1 {
		for name, inner := range m {
			for _, t := range u.Types() {
				if unionName(t) == name {
					return t, inner, true
				}
			}
		}
	}
	for _, t := range u.Types() {
		if t.Type() != avro.Null {
			return t, v, true
		}
	}
	return nil, nil, false
}

// fromAvroLogical decodes the Connect logical types (Decimal, Date, Time,
// Timestamp); ok is false for other schemas and for values in a form the
// logical type does not take.
func fromAvroLogical(cs *data.Schema, v any) (out any, ok bool, err error) {
	switch cs.Name {
	case data.DecimalName:
		return fromAvroDecimal(cs, v)
	case data.DateName:
		if x, ok := v.(time.Time); ok {
			return x.UTC(), true, nil
		}
		if n, ok := asInt64(v); ok {
			return data.DaysToDate(int32(n)), true, nil
		}
	case data.TimeName:
		if x, ok := v.(time.Duration); ok {
			return data.MillisToTime(int32(x.Milliseconds())), true, nil
		}
		if n, ok := asInt64(v); ok {
			return data.MillisToTime(int32(n)), true, nil
		}
	case data.TimestampName:
		if x, ok := v.(time.Time); ok {
			return x.UTC(), true, nil
		}
		if n, ok := asInt64(v); ok {
			return data.MillisToTimestamp(n), true, nil
		}
	}
	return nil, false, nil
}

// fromAvroDecimal decodes a decimal from hamba's *big.Rat, its unscaled
// bytes, or a JSON default's code points.
func fromAvroDecimal(cs *data.Schema, v any) (any, bool, error) {
	scale, _ := data.DecimalScale(cs)
	switch x := v.(type) {
	case *big.Rat:
		m := new(big.Rat).Mul(x, new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(scale)), nil)))
		if !m.IsInt() {
			return nil, true, &data.Error{Msg: fmt.Sprintf("decimal %s has more digits than scale %d", x.RatString(), scale)}
		}
		return data.Decimal{Unscaled: new(big.Int).Set(m.Num()), Scale: scale}, true, nil
	case []byte:
		return data.DecimalFromBytes(x, scale), true, nil
	case string:
		return data.DecimalFromBytes(latin1(x), scale), true, nil
	}
	return nil, false, nil
}

// fromAvroScalar converts a decoded primitive to Connect type t; ok is
// false if v does not fit it.
func fromAvroScalar(t data.Type, v any) (any, bool) {
	switch t {
	case data.Int8, data.Int16, data.Int32, data.Int64:
		return fromAvroInt(t, v)
	case data.Float32:
		switch x := v.(type) {
		case float32:
			return x, true
		case float64:
			return float32(x), true
		}
	case data.Float64:
		switch x := v.(type) {
		case float64:
			return x, true
		case float32:
			return float64(x), true
		}
	case data.Boolean, data.String:
		return v, true
	case data.Bytes:
		return fromAvroBytes(v)
	}
	return nil, false
}

func fromAvroInt(t data.Type, v any) (any, bool) {
	n, ok := asInt64(v)
	if !ok {
		return nil, false
	}
	switch t {
	case data.Int8:
		return int8(n), true
	case data.Int16:
		return int16(n), true
	case data.Int32:
		return int32(n), true
	}
	return n, true
}

func fromAvroBytes(v any) (any, bool) {
	switch x := v.(type) {
	case []byte:
		return x, true
	case string:
		return latin1(x), true
	case [16]byte:
		return x[:], true
	}
	if b, ok := fixedBytes(v); ok {
		return b, true
	}
	return nil, false
}

func fromAvroArray(as avro.Schema, cs *data.Schema, v any) (any, bool, error) {
	arr, ok := v.([]any)
	if !ok {
		return nil, false, nil
	}
	at := as.(*avro.ArraySchema)
	out := make([]any, len(arr))
	for i, e := range arr {
		cv, err := fromAvroValue(at.Items(), cs.Value, e)
		if err != nil {
			return nil, true, err
		}
		out[i] = cv
	}
	return out, true, nil
}

// fromAvroMap decodes a Connect map from an Avro map (string keys) or an
// array of MapEntry records (other keys).
func fromAvroMap(as avro.Schema, cs *data.Schema, v any) (any, bool, error) {
	switch t := as.(type) {
	case *avro.MapSchema:
		m, ok := v.(map[string]any)
		if !ok {
			return nil, false, nil
		}
		out := make(map[string]any, len(m))
		for k, e := range m {
			cv, err := fromAvroValue(t.Values(), cs.Value, e)
			if err != nil {
				return nil, true, err
			}
			out[k] = cv
		}
		return out, true, nil
	case *avro.ArraySchema:
		arr, ok := v.([]any)
		if !ok {
			return nil, false, nil
		}
		return fromAvroMapEntries(t.Items().(*avro.RecordSchema), cs, arr)
	}
	return nil, false, nil
}

func fromAvroMapEntries(rec *avro.RecordSchema, cs *data.Schema, arr []any) (any, bool, error) {
	out := make(map[any]any, len(arr))
	for _, e := range arr {
		m, _ := e.(map[string]any)
		k, err := fromAvroValue(rec.Fields()[0].Type(), cs.Key, m["key"])
		if err != nil {
			return nil, true, err
		}
		cv, err := fromAvroValue(rec.Fields()[1].Type(), cs.Value, m["value"])
		if err != nil {
			return nil, true, err
		}
		out[k] = cv
	}
	return out, true, nil
}

func fromAvroStruct(as avro.Schema, cs *data.Schema, v any) (any, bool, error) {
	m, ok := v.(map[string]any)
	rec, rok := as.(*avro.RecordSchema)
	if !ok || !rok {
		return nil, false, nil
	}
	st := data.NewStruct(cs)
	for i, f := range rec.Fields() {
		cv, err := fromAvroValue(f.Type(), cs.Fields[i].Schema, m[f.Name()])
		if err != nil {
			return nil, true, err
		}
		if err := st.PutField(cs.Fields[i], cv); err != nil {
			return nil, true, &data.Error{Msg: err.Error()}
		}
	}
	return st, true, nil
}

func asInt64(v any) (int64, bool) {
	switch x := v.(type) {
	case int:
		return int64(x), true
	case int32:
		return int64(x), true
	case int64:
		return x, true
	case float64: // JSON defaults
		return int64(x), float64(int64(x)) == x
	}
	return 0, false
}

func fixedBytes(v any) ([]byte, bool) {
	// hamba decodes fixed into a byte array of the fixed size.
	rv := []byte(nil)
	switch x := v.(type) {
	case []byte:
		rv = x
	default:
		return nil, false
	}
	return rv, true
}

// latin1 reverses bytesJSON: Avro JSON defaults carry bytes as code points.
func latin1(s string) []byte {
	out := make([]byte, 0, len(s))
	for _, r := range s {
		out = append(out, byte(r))
	}
	return out
}
