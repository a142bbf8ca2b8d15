package schemaregistry

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/schemaregistry"
	"github.com/confluentinc/confluent-kafka-go/v2/schemaregistry/serde/jsonschema"

	"github.com/connectd/connectd/framework/data"
)

// JSONSchemaClass is Confluent's JSON Schema converter class.
const JSONSchemaClass = "io.confluent.connect.json.JsonSchemaConverter"

// JSON Schema keywords Confluent's JsonSchemaData adds for Connect types.
const (
	jsConnectType   = "connect.type"
	jsConnectIndex  = "connect.index"
	jsConnectParams = "connect.parameters"
)

// JSONSchemaConverter is Confluent's
// io.confluent.connect.json.JsonSchemaConverter: Connect data as JSON
// documents described by a JSON Schema in the registry, in the Confluent
// wire format, through confluent-kafka-go's jsonschema serde.
//
// As Confluent's JsonSchemaData: a struct is an object with its fields as
// properties (connect.index keeps their order), optional schemas are
// oneOf null and the type, integers carry connect.type (int8 … int64),
// bytes are base64 strings, logical types keep their Connect name as the
// title (Decimal as a JSON number with connect.parameters scale), maps
// with string keys are objects with connect.type map.
type JSONSchemaConverter struct {
	set    settings
	client schemaregistry.Client
	ser    *jsonschema.Serializer
	de     *jsonschema.Deserializer

	// Caches; a converter is used by one goroutine at a time.
	toJSON   map[*data.Schema]string
	fromJSON map[string]*data.Schema
	record   string // title of the document being written
}

// Configure implements convert.Converter.
func (c *JSONSchemaConverter) Configure(props map[string]string, isKey bool) error {
	s, client, st, err := connect(props, isKey)
	if err != nil {
		return err
	}
	sc := jsonschema.NewSerializerConfig()
	sc.AutoRegisterSchemas = s.autoRegister
	sc.UseLatestVersion = s.useLatest
	ser, err := jsonschema.NewSerializer(client, st, sc)
	if err != nil {
		return fmt.Errorf("json schema serializer: %w", err)
	}
	de, err := jsonschema.NewDeserializer(client, st, jsonschema.NewDeserializerConfig())
	if err != nil {
		return fmt.Errorf("json schema deserializer: %w", err)
	}
	strategy := subjectStrategy(s.strategy, jsonRecordName, &c.record)
	ser.SubjectNameStrategy, de.SubjectNameStrategy = strategy, strategy
	c.set, c.client, c.ser, c.de = s, client, ser, de
	c.toJSON = map[*data.Schema]string{}
	c.fromJSON = map[string]*data.Schema{}
	return nil
}

// Close releases the registry client.
func (c *JSONSchemaConverter) Close() error {
	if c.client == nil {
		return nil
	}
	return c.client.Close()
}

// jsonRecordName is the schema's title, the record name Confluent's
// strategies use for JSON Schema.
func jsonRecordName(info schemaregistry.SchemaInfo) (string, error) {
	var m map[string]any
	if err := json.Unmarshal([]byte(info.Schema), &m); err != nil {
		return "", fmt.Errorf("json schema: %w", err)
	}
	if t, ok := m["title"].(string); ok && t != "" {
		return t, nil
	}
	return "", fmt.Errorf("RecordNameStrategy needs a JSON schema with a title")
}

// FromConnect implements convert.Converter.
func (c *JSONSchemaConverter) FromConnect(topic string, schema *data.Schema, value any) ([]byte, error) {
	if value == nil {
		return nil, nil
	}
	if schema == nil {
		return nil, &data.Error{Msg: "JsonSchemaConverter needs a schema; the record has none (schemaless data)"}
	}
	text, ok := c.toJSON[schema]
	if !ok {
		js, err := json.Marshal(jsonSchemaOf(schema, true))
		if err != nil {
			return nil, &data.Error{Msg: err.Error()}
		}
		text = string(js)
		c.toJSON[schema] = text
	}
	info := schemaregistry.SchemaInfo{Schema: text, SchemaType: "JSON"}
	c.record = schema.Name
	defer func() { c.record = "" }()
	if c.set.useLatest {
		info = schemaregistry.SchemaInfo{}
	}
	id, err := c.ser.GetSchemaID("JSON", topic, nil, &info)
	if err != nil {
		return nil, classify(c.set.urls, "the JSON schema for topic "+topic, err)
	}
	v, err := toJSONValue(schema, value)
	if err != nil {
		return nil, err
	}
	conf := c.ser.Conf
	saved := *conf
	conf.AutoRegisterSchemas, conf.UseLatestVersion, conf.UseSchemaID = false, false, id.ID
	b, err := c.ser.Serialize(topic, v)
	*conf = saved
	if err != nil {
		return nil, classify(c.set.urls, "serializing JSON for topic "+topic, err)
	}
	return b, nil
}

// ToConnect implements convert.Converter.
func (c *JSONSchemaConverter) ToConnect(topic string, b []byte) (*data.Schema, any, error) {
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
	schema, ok := c.fromJSON[info.Schema]
	if !ok {
		var js map[string]any
		if err := json.Unmarshal([]byte(info.Schema), &js); err != nil {
			return nil, nil, &data.Error{Msg: fmt.Sprintf("JSON schema id %d: %v", frameID(b), err)}
		}
		if schema, err = connectFromJSONSchema(js, false); err != nil {
			return nil, nil, err
		}
		c.fromJSON[info.Schema] = schema
	}
	var raw json.RawMessage
	if err := c.de.DeserializeInto(topic, b, &raw); err != nil {
		return nil, nil, classify(c.set.urls, fmt.Sprintf("decoding JSON with schema id %d", frameID(b)), err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return nil, nil, &data.Error{Msg: fmt.Sprintf("decoding JSON with schema id %d: %v", frameID(b), err)}
	}
	v, err := fromJSONValue(schema, doc)
	if err != nil {
		return nil, nil, err
	}
	return schema, v, nil
}

// --- Connect schema → JSON Schema ---

func jsonSchemaOf(s *data.Schema, top bool) map[string]any {
	var out map[string]any
	switch s.Name {
	case data.DecimalName:
		scale, _ := data.DecimalScale(s)
		out = map[string]any{"type": "number", "title": data.DecimalName, jsConnectParams: map[string]string{data.DecimalScaleParam: strconv.Itoa(int(scale))}}
	case data.DateName, data.TimeName, data.TimestampName:
		out = map[string]any{"type": "integer", "title": s.Name}
	}
	if out == nil {
		switch s.Type {
		case data.Int8, data.Int16, data.Int32, data.Int64:
			out = map[string]any{"type": "integer", jsConnectType: string(s.Type)}
		case data.Float32:
			out = map[string]any{"type": "number", jsConnectType: "float32"}
		case data.Float64:
			out = map[string]any{"type": "number", jsConnectType: "float64"}
		case data.Boolean:
			out = map[string]any{"type": "boolean"}
		case data.String:
			out = map[string]any{"type": "string"}
		case data.Bytes:
			out = map[string]any{"type": "string", jsConnectType: "bytes"}
		case data.Array:
			out = map[string]any{"type": "array", "items": jsonSchemaOf(s.Value, false)}
		case data.Map:
			if s.Key.Type == data.String {
				out = map[string]any{"type": "object", jsConnectType: "map", "additionalProperties": jsonSchemaOf(s.Value, false)}
			} else {
				out = map[string]any{"type": "array", jsConnectType: "map", "items": map[string]any{"type": "object",
					"properties": map[string]any{"key": jsonSchemaOf(s.Key, false), "value": jsonSchemaOf(s.Value, false)}}}
			}
		case data.Struct:
			props := map[string]any{}
			for i, f := range s.Fields {
				p := jsonSchemaOf(f.Schema, false)
				p[jsConnectIndex] = i
				props[f.Name] = p
			}
			// A closed content model, as Confluent's JsonSchemaData writes:
			// adding an optional field is then a BACKWARD-compatible change.
			out = map[string]any{"type": "object", "properties": props, "additionalProperties": false}
			if s.Name != "" {
				out["title"] = s.Name
			}
		}
	}
	if s.Default != nil {
		if d, err := toJSONValue(s, s.Default); err == nil {
			out["default"] = d
		}
	}
	if s.Doc != "" {
		out["description"] = s.Doc
	}
	if s.Optional && !top {
		idx, hasIdx := out[jsConnectIndex]
		delete(out, jsConnectIndex)
		wrapped := map[string]any{"oneOf": []any{map[string]any{"type": "null"}, out}}
		if hasIdx {
			wrapped[jsConnectIndex] = idx
		}
		return wrapped
	}
	return out
}

// --- values ---

func toJSONValue(s *data.Schema, v any) (any, error) {
	if v == nil {
		return nil, nil
	}
	switch x := v.(type) {
	case data.Decimal:
		if scale, err := data.DecimalScale(s); err == nil {
			r, err := x.Rescale(scale)
			if err != nil {
				return nil, &data.Error{Msg: fmt.Sprintf("decimal %s does not fit scale %d", x, scale)}
			}
			x = r
		}
		return json.Number(x.PlainString()), nil
	case time.Time:
		switch s.Name {
		case data.DateName:
			d, err := data.DateToDays(x)
			if err != nil {
				return nil, &data.Error{Msg: err.Error()}
			}
			return d, nil
		case data.TimeName:
			ms, err := data.TimeToMillis(x)
			if err != nil {
				return nil, &data.Error{Msg: err.Error()}
			}
			return ms, nil
		}
		return data.TimestampToMillis(x), nil
	case []byte:
		return base64.StdEncoding.EncodeToString(x), nil
	case *data.StructValue:
		out := make(map[string]any, len(s.Fields))
		for _, f := range s.Fields {
			fv, err := x.Get(f.Name)
			if err != nil {
				return nil, &data.Error{Msg: err.Error()}
			}
			if fv == nil {
				continue
			}
			jv, err := toJSONValue(f.Schema, fv)
			if err != nil {
				return nil, err
			}
			out[f.Name] = jv
		}
		return out, nil
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			jv, err := toJSONValue(s.Value, e)
			if err != nil {
				return nil, err
			}
			out[i] = jv
		}
		return out, nil
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			jv, err := toJSONValue(s.Value, e)
			if err != nil {
				return nil, err
			}
			out[k] = jv
		}
		return out, nil
	case map[any]any:
		out := make([]any, 0, len(x))
		for k, e := range x {
			jk, err := toJSONValue(s.Key, k)
			if err != nil {
				return nil, err
			}
			jv, err := toJSONValue(s.Value, e)
			if err != nil {
				return nil, err
			}
			out = append(out, map[string]any{"key": jk, "value": jv})
		}
		return out, nil
	}
	return v, nil
}

// --- JSON Schema → Connect schema ---

func connectFromJSONSchema(js map[string]any, optional bool) (*data.Schema, error) {
	return fromJSONSchemaAt(js, js, optional, 0)
}

// resolveRef follows a local "$ref" (#/$defs/… or #/definitions/…), as
// the schemas confluent-kafka-go derives from Go types use.
func resolveRef(root map[string]any, ref string) (map[string]any, error) {
	if !strings.HasPrefix(ref, "#/") {
		return nil, &data.Error{Msg: fmt.Sprintf("JsonSchemaConverter resolves only local $ref, not %q", ref)}
	}
	var cur any = root
	for _, part := range strings.Split(ref[2:], "/") {
		cur = asMap(cur)[strings.ReplaceAll(strings.ReplaceAll(part, "~1", "/"), "~0", "~")]
	}
	m := asMap(cur)
	if m == nil {
		return nil, &data.Error{Msg: fmt.Sprintf("$ref %q not found in the schema", ref)}
	}
	return m, nil
}

func fromJSONSchemaAt(root, js map[string]any, optional bool, depth int) (*data.Schema, error) {
	if depth > 64 {
		return nil, &data.Error{Msg: "JsonSchemaConverter: schema nests deeper than 64 levels (a recursive $ref?)"}
	}
	if ref, ok := js["$ref"].(string); ok {
		target, err := resolveRef(root, ref)
		if err != nil {
			return nil, err
		}
		return fromJSONSchemaAt(root, target, optional, depth+1)
	}
	if alts, ok := js["oneOf"].([]any); ok {
		inner, hasNull, err := jsonOneOf(alts)
		if err != nil {
			return nil, err
		}
		return fromJSONSchemaAt(root, inner, optional || hasNull, depth+1)
	}
	typ, hasNull := jsonType(js["type"])
	b, err := jsonSchemaBuilder(root, js, typ, depth)
	if err != nil {
		return nil, err
	}
	if optional || hasNull {
		b.Optional()
	}
	if d, ok := js["default"]; ok && d != nil {
		s, err := b.Schema()
		if err == nil {
			if cv, err := fromJSONValue(s, jsonNumbers(d)); err == nil {
				b.Default(cv)
			}
		}
	}
	s, err := b.Schema()
	if err != nil {
		return nil, &data.Error{Msg: err.Error()}
	}
	return s, nil
}

// jsonOneOf splits a oneOf into its one non-null schema and whether null
// is among the alternatives.
func jsonOneOf(alts []any) (inner map[string]any, hasNull bool, err error) {
	for _, a := range alts {
		m, _ := a.(map[string]any)
		if m["type"] == "null" {
			hasNull = true
		} else if inner == nil {
			inner = m
		} else {
			return nil, false, &data.Error{Msg: "JsonSchemaConverter supports oneOf only of null and one schema"}
		}
	}
	if inner == nil {
		return nil, false, &data.Error{Msg: "oneOf without a non-null schema"}
	}
	return inner, hasNull, nil
}

// jsonType reads a "type" keyword; a list such as ["null", "string"] gives
// its non-null type and hasNull.
func jsonType(typ any) (t any, hasNull bool) {
	ts, ok := typ.([]any)
	if !ok {
		return typ, false
	}
	for _, e := range ts {
		if e == "null" {
			hasNull = true
		} else {
			t = e
		}
	}
	return t, hasNull
}

// jsonSchemaBuilder builds the Connect schema of JSON Schema type typ,
// narrowed by the title (logical types) and connect.type of js.
func jsonSchemaBuilder(root, js map[string]any, typ any, depth int) (*data.Builder, error) {
	title, _ := js["title"].(string)
	ctype, _ := js[jsConnectType].(string)
	switch typ {
	case "integer":
		return jsonIntegerBuilder(title, ctype), nil
	case "number":
		return jsonNumberBuilder(js, title, ctype), nil
	case "boolean":
		return data.Build(data.Boolean), nil
	case "string":
		if ctype == "bytes" {
			return data.Build(data.Bytes), nil
		}
		return data.Build(data.String), nil
	case "array":
		return jsonArrayBuilder(root, js, ctype, depth)
	case "object":
		return jsonObjectBuilder(root, js, title, ctype, depth)
	}
	return nil, &data.Error{Msg: fmt.Sprintf("JsonSchemaConverter cannot map JSON schema type %v", js["type"])}
}

func jsonIntegerBuilder(title, ctype string) *data.Builder {
	switch {
	case title == data.DateName:
		return data.DateSchema()
	case title == data.TimeName:
		return data.TimeSchema()
	case title == data.TimestampName:
		return data.TimestampSchema()
	case ctype == "int8":
		return data.Build(data.Int8)
	case ctype == "int16":
		return data.Build(data.Int16)
	case ctype == "int32":
		return data.Build(data.Int32)
	}
	return data.Build(data.Int64)
}

func jsonNumberBuilder(js map[string]any, title, ctype string) *data.Builder {
	switch {
	case title == data.DecimalName:
		scale := 0
		if p, ok := js[jsConnectParams].(map[string]any); ok {
			if s, ok := p[data.DecimalScaleParam].(string); ok {
				scale, _ = strconv.Atoi(s)
			}
		}
		return data.DecimalSchema(int32(scale))
	case ctype == "float32":
		return data.Build(data.Float32)
	}
	return data.Build(data.Float64)
}

// jsonArrayBuilder maps an array: of key/value objects if connect.type
// says map, else of its items.
func jsonArrayBuilder(root, js map[string]any, ctype string, depth int) (*data.Builder, error) {
	items, _ := js["items"].(map[string]any)
	if ctype == "map" {
		props, _ := items["properties"].(map[string]any)
		k, err := fromJSONSchemaAt(root, asMap(props["key"]), false, depth+1)
		if err != nil {
			return nil, err
		}
		v, err := fromJSONSchemaAt(root, asMap(props["value"]), false, depth+1)
		if err != nil {
			return nil, err
		}
		return data.MapOf(k, v), nil
	}
	e, err := fromJSONSchemaAt(root, items, false, depth+1)
	if err != nil {
		return nil, err
	}
	return data.ArrayOf(e), nil
}

// jsonObjectBuilder maps an object: a string-keyed map if it has
// additionalProperties and is a map (connect.type, or no properties),
// else a struct.
func jsonObjectBuilder(root, js map[string]any, title, ctype string, depth int) (*data.Builder, error) {
	if ap, ok := js["additionalProperties"].(map[string]any); ok && (ctype == "map" || js["properties"] == nil) {
		v, err := fromJSONSchemaAt(root, ap, false, depth+1)
		if err != nil {
			return nil, err
		}
		return data.MapOf(data.PrimitiveSchema(data.String), v), nil
	}
	props, _ := js["properties"].(map[string]any)
	// With a "required" list, the properties it leaves out may be
	// absent: optional in Connect. (Schemas the converter writes have
	// no list; their optional fields say so with oneOf null.)
	rs, hasRequired := js["required"].([]any)
	required := map[string]bool{}
	if hasRequired {
		for _, r := range rs {
			if s, ok := r.(string); ok {
				required[s] = true
			}
		}
	}
	b := data.Build(data.Struct)
	if title != "" {
		b.Name(title)
	}
	for _, n := range jsonPropertyOrder(props) {
		fs, err := fromJSONSchemaAt(root, asMap(props[n]), hasRequired && !required[n], depth+1)
		if err != nil {
			return nil, err
		}
		b.Field(n, fs)
	}
	return b, nil
}

// jsonPropertyOrder is the field order of an object's properties: by
// connect.index, then by name.
func jsonPropertyOrder(props map[string]any) []string {
	names := make([]string, 0, len(props))
	for n := range props {
		names = append(names, n)
	}
	index := func(n string) float64 {
		if i, ok := asMap(props[n])[jsConnectIndex].(float64); ok {
			return i
		}
		return 1e9
	}
	slices.SortFunc(names, func(a, b string) int {
		if ia, ib := index(a), index(b); ia != ib {
			if ia < ib {
				return -1
			}
			return 1
		}
		if a < b {
			return -1
		}
		return 1
	})
	return names
}

func asMap(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

// jsonNumbers turns float64 (as encoding/json decodes schema defaults)
// into json.Number, the form documents are decoded in.
func jsonNumbers(v any) any {
	if f, ok := v.(float64); ok {
		return json.Number(strconv.FormatFloat(f, 'f', -1, 64))
	}
	return v
}

func fromJSONValue(s *data.Schema, v any) (any, error) {
	if v == nil {
		if s.Optional {
			return nil, nil
		}
		if s.Default != nil {
			return s.Default, nil
		}
		return nil, &data.Error{Msg: fmt.Sprintf("null for the required %s", s)}
	}
	if s.Name == data.DecimalName {
		return fromJSONDecimal(s, v)
	}
	switch s.Type {
	case data.Int8, data.Int16, data.Int32, data.Int64:
		return fromJSONInt(s, v)
	case data.Float32, data.Float64:
		return fromJSONFloat(s, v)
	case data.Boolean:
		if b, ok := v.(bool); ok {
			return b, nil
		}
	case data.String:
		if x, ok := v.(string); ok {
			return x, nil
		}
	case data.Bytes:
		if x, ok := v.(string); ok {
			b, err := base64.StdEncoding.DecodeString(x)
			if err != nil {
				return nil, &data.Error{Msg: fmt.Sprintf("bytes: %v", err)}
			}
			return b, nil
		}
	case data.Array:
		return fromJSONArray(s, v)
	case data.Map:
		return fromJSONMap(s, v)
	case data.Struct:
		return fromJSONStruct(s, v)
	}
	return nil, jsonMismatch(s, v)
}

// jsonMismatch is the error for a JSON value v that does not fit s.
func jsonMismatch(s *data.Schema, v any) error {
	return &data.Error{Msg: fmt.Sprintf("JSON value %v (%T) does not fit %s", v, v, s)}
}

func fromJSONDecimal(s *data.Schema, v any) (any, error) {
	n, ok := v.(json.Number)
	if !ok {
		return nil, jsonMismatch(s, v)
	}
	d, err := data.ParseDecimal(n.String())
	if err != nil {
		return nil, &data.Error{Msg: err.Error()}
	}
	if scale, err := data.DecimalScale(s); err == nil {
		if d, err = d.Rescale(scale); err != nil {
			return nil, &data.Error{Msg: fmt.Sprintf("decimal %s does not fit scale %d", n, scale)}
		}
	}
	return d, nil
}

// fromJSONInt reads an integer, or the Date, Time or Timestamp it encodes.
func fromJSONInt(s *data.Schema, v any) (any, error) {
	n, ok := v.(json.Number)
	if !ok {
		return nil, jsonMismatch(s, v)
	}
	i, err := n.Int64()
	if err != nil {
		return nil, jsonMismatch(s, v)
	}
	switch s.Name {
	case data.DateName:
		return data.DaysToDate(int32(i)), nil
	case data.TimeName:
		return data.MillisToTime(int32(i)), nil
	case data.TimestampName:
		return data.MillisToTimestamp(i), nil
	}
	switch s.Type {
	case data.Int8:
		return int8(i), nil
	case data.Int16:
		return int16(i), nil
	case data.Int32:
		return int32(i), nil
	}
	return i, nil
}

func fromJSONFloat(s *data.Schema, v any) (any, error) {
	n, ok := v.(json.Number)
	if !ok {
		return nil, jsonMismatch(s, v)
	}
	f, err := n.Float64()
	if err != nil {
		return nil, jsonMismatch(s, v)
	}
	if s.Type == data.Float32 {
		return float32(f), nil
	}
	return f, nil
}

func fromJSONArray(s *data.Schema, v any) (any, error) {
	arr, ok := v.([]any)
	if !ok {
		return nil, jsonMismatch(s, v)
	}
	out := make([]any, len(arr))
	for i, e := range arr {
		cv, err := fromJSONValue(s.Value, e)
		if err != nil {
			return nil, err
		}
		out[i] = cv
	}
	return out, nil
}

// fromJSONMap reads a map from an object (string keys) or an array of
// key/value objects (other keys).
func fromJSONMap(s *data.Schema, v any) (any, error) {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			cv, err := fromJSONValue(s.Value, e)
			if err != nil {
				return nil, err
			}
			out[k] = cv
		}
		return out, nil
	case []any:
		out := make(map[any]any, len(x))
		for _, e := range x {
			m := asMap(e)
			k, err := fromJSONValue(s.Key, m["key"])
			if err != nil {
				return nil, err
			}
			cv, err := fromJSONValue(s.Value, m["value"])
			if err != nil {
				return nil, err
			}
			out[k] = cv
		}
		return out, nil
	}
	return nil, jsonMismatch(s, v)
}

// fromJSONStruct reads a struct from an object; a property may be absent
// if its field is optional or has a default.
func fromJSONStruct(s *data.Schema, v any) (any, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, jsonMismatch(s, v)
	}
	st := data.NewStruct(s)
	for _, f := range s.Fields {
		fv, present := m[f.Name]
		if !present && (f.Schema.Optional || f.Schema.Default != nil) {
			continue
		}
		cv, err := fromJSONValue(f.Schema, fv)
		if err != nil {
			return nil, &data.Error{Msg: fmt.Sprintf("field %s: %v", f.Name, err)}
		}
		if err := st.PutField(f, cv); err != nil {
			return nil, &data.Error{Msg: err.Error()}
		}
	}
	return st, nil
}
