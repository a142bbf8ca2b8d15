package convert

import (
	"strings"

	"github.com/connectd/connectd/framework/configdef"
	"github.com/connectd/connectd/framework/data"
)

// JsonConverter configuration keys (Kafka's JsonConverterConfig).
const (
	SchemasEnableConfig          = "schemas.enable"
	SchemasCacheSizeConfig       = "schemas.cache.size"
	DecimalFormatConfig          = "decimal.format"
	ReplaceNullWithDefaultConfig = "replace.null.with.default"
)

func jsonDef() *configdef.Def {
	return converterTypeDef().
		Define(configdef.Key{Name: SchemasEnableConfig, Type: configdef.Boolean, Default: true, Importance: configdef.High,
			Documentation: "Include schemas within each of the serialized values and keys.",
			Group:         "Schemas", OrderInGroup: 0, Width: configdef.WidthMedium, DisplayName: "Enable Schemas"}).
		Define(configdef.Key{Name: SchemasCacheSizeConfig, Type: configdef.Int, Default: 1000, Importance: configdef.High,
			Documentation: "The maximum number of schemas that can be cached in this converter instance.",
			Group:         "Schemas", OrderInGroup: 1, Width: configdef.WidthMedium, DisplayName: "Schema Cache Size"}).
		Define(configdef.Key{Name: DecimalFormatConfig, Type: configdef.String, Default: "BASE64",
			Validator: configdef.OneOfIgnoreCase("BASE64", "NUMERIC"), Importance: configdef.Low,
			Documentation: "Controls which format this converter will serialize decimals in. This value is case insensitive and can be either 'BASE64' (default) or 'NUMERIC'",
			Group:         "Serialization", OrderInGroup: 0, Width: configdef.WidthMedium, DisplayName: "Decimal Format"}).
		Define(configdef.Key{Name: ReplaceNullWithDefaultConfig, Type: configdef.Boolean, Default: true, Importance: configdef.Low,
			Documentation: "Whether to replace fields that have a default value and that are null to the default value. When set to true, the default value is used, otherwise null is used.",
			Group:         "Serialization", OrderInGroup: 1, Width: configdef.WidthMedium, DisplayName: "Replace null with default"})
}

// JSONConverter is Kafka Connect's JsonConverter
// (org.apache.kafka.connect.json.JsonConverter), byte-compatible with it.
//
// With schemas.enable=true (the default) every message is an envelope
// {"schema":…,"payload":…}; with false it is the bare JSON value, read back
// schemaless (objects become map[string]any, integers int64, other numbers
// float64). Decimals are written as base64 of the unscaled bytes or, with
// decimal.format=NUMERIC, as JSON numbers; Date, Time and Timestamp as
// their integer wire forms.
//
// Where Kafka silently coerces a JSON value of the wrong kind (a string for
// an int32 field reads as 0), this converter reports an error instead, so
// that bad input goes to the dead-letter queue rather than into the sink.
type JSONConverter struct {
	schemasEnabled  bool
	numericDecimals bool
	replaceNull     bool
	cacheSize       int

	// Caches; a converter is used by one goroutine at a time (see
	// Converter), so they need no locking.
	toJSON    map[*data.Schema][]byte // rendered schema JSON by schema
	fromJSON  map[string]*data.Schema // parsed schema by its JSON text
	structIdx map[*data.Schema]map[string]int
	keys      map[string]string // interned object keys: records of a topic repeat them
	topSize   int               // member count of the last top-level object, to size the next map
	outSize   int               // size of the last serialized value, to size the next buffer
	keyBuf    []string          // scratch space for sorting map keys
}

// Configure implements Converter.
func (c *JSONConverter) Configure(props map[string]string, isKey bool) error {
	v, err := parseConfig(jsonDef(), props, isKey)
	if err != nil {
		return err
	}
	c.schemasEnabled = v.Bool(SchemasEnableConfig)
	c.numericDecimals = strings.EqualFold(v.String(DecimalFormatConfig), "NUMERIC")
	c.replaceNull = v.Bool(ReplaceNullWithDefaultConfig)
	c.cacheSize = int(v.Int(SchemasCacheSizeConfig))
	if c.cacheSize < 1 {
		c.cacheSize = 1
	}
	c.toJSON = map[*data.Schema][]byte{}
	c.fromJSON = map[string]*data.Schema{}
	c.structIdx = map[*data.Schema]map[string]int{}
	c.keys = map[string]string{}
	return nil
}

// FromConnect implements Converter.
func (c *JSONConverter) FromConnect(_ string, schema *data.Schema, value any) ([]byte, error) {
	if schema == nil && value == nil {
		return nil, nil
	}
	if c.toJSON == nil {
		if err := c.Configure(nil, false); err != nil {
			return nil, err
		}
	}
	e := encoder{c: c, buf: make([]byte, 0, max(64, c.outSize+c.outSize/8))}
	var err error
	if c.schemasEnabled {
		e.buf = append(e.buf, `{"schema":`...)
		if schema == nil {
			e.buf = append(e.buf, "null"...)
		} else {
			var sj []byte
			sj, err = c.schemaJSON(schema)
			if err != nil {
				return nil, err
			}
			e.buf = append(e.buf, sj...)
		}
		e.buf = append(e.buf, `,"payload":`...)
		err = e.value(schema, value)
		e.buf = append(e.buf, '}')
	} else {
		err = e.value(schema, value)
	}
	if err != nil {
		return nil, err
	}
	c.outSize = len(e.buf)
	return e.buf, nil
}

// ToConnect implements Converter.
func (c *JSONConverter) ToConnect(_ string, b []byte) (*data.Schema, any, error) {
	if b == nil {
		return nil, nil, nil
	}
	if c.toJSON == nil {
		if err := c.Configure(nil, false); err != nil {
			return nil, nil, err
		}
	}
	d := decoder{c: c, data: b}
	if !c.schemasEnabled {
		d.skipWS()
		if d.pos == len(b) { // empty data reads as null, as in Kafka
			return nil, nil, nil
		}
		v, err := d.decode(nil, 0)
		if err == nil {
			err = d.end()
		}
		if err != nil {
			return nil, nil, serializationError(err)
		}
		return nil, v, nil
	}
	schemaSpan, payloadSpan, err := d.envelope()
	if err != nil {
		return nil, nil, err
	}
	var schema *data.Schema
	if raw := b[schemaSpan[0]:schemaSpan[1]]; string(raw) != "null" {
		if schema, err = c.parseSchemaCached(raw); err != nil {
			return nil, nil, err
		}
	}
	pd := decoder{c: c, data: b[:payloadSpan[1]], pos: payloadSpan[0]}
	v, err := pd.decode(schema, 0)
	if err != nil {
		return nil, nil, err
	}
	return schema, v, nil
}

// schemaJSON returns the cached JSON rendering of schema.
func (c *JSONConverter) schemaJSON(s *data.Schema) ([]byte, error) {
	if sj, ok := c.toJSON[s]; ok {
		return sj, nil
	}
	e := encoder{c: c}
	if err := e.schema(s); err != nil {
		return nil, err
	}
	if len(c.toJSON) >= c.cacheSize {
		clear(c.toJSON)
	}
	c.toJSON[s] = e.buf
	return e.buf, nil
}

func (c *JSONConverter) parseSchemaCached(raw []byte) (*data.Schema, error) {
	if s, ok := c.fromJSON[string(raw)]; ok {
		return s, nil
	}
	d := decoder{c: c, data: raw}
	s, _, err := d.schema(0)
	if err == nil {
		err = d.end()
	}
	if err != nil {
		return nil, err
	}
	if len(c.fromJSON) >= c.cacheSize {
		clear(c.fromJSON)
		clear(c.structIdx)
	}
	c.fromJSON[string(raw)] = s
	return s, nil
}

// fieldIndex maps a struct schema's field names to indexes (cached).
func (c *JSONConverter) fieldIndex(s *data.Schema) map[string]int {
	if idx, ok := c.structIdx[s]; ok {
		return idx
	}
	idx := make(map[string]int, len(s.Fields))
	for i, f := range s.Fields {
		idx[f.Name] = i
	}
	if len(c.structIdx) >= c.cacheSize {
		clear(c.structIdx)
	}
	c.structIdx[s] = idx
	return idx
}

// intern returns a shared string for an object key, so that the keys of a
// stream of similar records are allocated once.
func (c *JSONConverter) intern(b []byte) string {
	if len(b) > 128 {
		return string(b)
	}
	if s, ok := c.keys[string(b)]; ok {
		return s
	}
	s := string(b)
	if len(c.keys) >= 4096 {
		clear(c.keys)
	}
	c.keys[s] = s
	return s
}
