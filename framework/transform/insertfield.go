package transform

import (
	"strings"

	"github.com/connectd/connectd/framework/configdef"
	"github.com/connectd/connectd/framework/data"
)

const optionalityDoc = "Suffix with <code>!</code> to make this a required field, or <code>?</code> to keep it optional (the default)."

// InsertField inserts record metadata (topic, partition, offset, timestamp)
// or a static value as fields of the key or value (Kafka's InsertField).
// Tombstones pass through unchanged.
type InsertField struct {
	op                                        operand
	topic, partition, offset, timestamp, stat *insertSpec
	staticValue                               string
	withDefault                               bool
	cache                                     schemaCache
}

type insertSpec struct {
	name     string
	optional bool
}

func parseInsertSpec(v *configdef.Values, key string) *insertSpec {
	if v.IsNull(key) {
		return nil
	}
	s := v.String(key)
	switch {
	case strings.HasSuffix(s, "?"):
		return &insertSpec{name: s[:len(s)-1], optional: true}
	case strings.HasSuffix(s, "!"):
		return &insertSpec{name: s[:len(s)-1]}
	}
	return &insertSpec{name: s, optional: true}
}

// Def implements Transformation.
func (t *InsertField) Def() *configdef.Def {
	str := func(name, doc string) configdef.Key {
		return configdef.Key{Name: name, Type: configdef.String, Importance: configdef.Medium, Documentation: doc}
	}
	return configdef.New().
		Define(str("topic.field", "Field name for Kafka topic. "+optionalityDoc)).
		Define(str("partition.field", "Field name for Kafka partition. "+optionalityDoc)).
		Define(str("offset.field", "Field name for Kafka offset - only applicable to sink connectors.<br/>"+optionalityDoc)).
		Define(str("timestamp.field", "Field name for record timestamp. "+optionalityDoc)).
		Define(str("static.field", "Field name for static data field. "+optionalityDoc)).
		Define(str("static.value", "Static field value, if field name configured.")).
		Define(replaceNullDef())
}

// Configure implements Transformation.
func (t *InsertField) Configure(props map[string]string) error {
	v, err := t.Def().Parse(props)
	if err != nil {
		return err
	}
	t.topic = parseInsertSpec(v, "topic.field")
	t.partition = parseInsertSpec(v, "partition.field")
	t.offset = parseInsertSpec(v, "offset.field")
	t.timestamp = parseInsertSpec(v, "timestamp.field")
	t.stat = parseInsertSpec(v, "static.field")
	t.withDefault = v.Bool("replace.null.with.default")
	if t.topic == nil && t.partition == nil && t.offset == nil && t.timestamp == nil && t.stat == nil {
		return &configdef.ConfigError{Key: "topic.field", Message: "No field insertion configured: set at least one of topic.field, partition.field, offset.field, timestamp.field, static.field"}
	}
	if t.stat != nil {
		if v.IsNull("static.value") {
			return configdef.Invalid("static.value", nil, "No value specified for static field: "+t.stat.name)
		}
		t.staticValue = v.String("static.value")
	}
	return nil
}

const insertPurpose = "field insertion"

// Apply implements Transformation.
func (t *InsertField) Apply(r *Record) (bool, error) {
	schema, value := t.op.get(r)
	if value == nil {
		return true, nil
	}
	if t.offset != nil {
		if err := requireSink(r, insertPurpose); err != nil {
			return false, err
		}
	}
	if schema == nil {
		m, err := requireMap(value, insertPurpose)
		if err != nil {
			return false, err
		}
		out := copyMap(m, 5)
		if t.topic != nil {
			out[t.topic.name] = r.Topic
		}
		if t.partition != nil && r.Partition >= 0 {
			out[t.partition.name] = r.Partition
		}
		if t.offset != nil {
			out[t.offset.name] = r.Offset
		}
		if t.timestamp != nil && !r.Timestamp.IsZero() {
			out[t.timestamp.name] = r.Timestamp.UnixMilli() // Kafka inserts the long in schemaless mode
		}
		if t.stat != nil {
			out[t.stat.name] = t.staticValue
		}
		t.op.set(r, nil, out)
		return true, nil
	}
	st, err := requireStruct(value, insertPurpose)
	if err != nil {
		return false, err
	}
	updated := t.cache.get(st.Schema())
	if updated == nil {
		if updated, err = t.updatedSchema(st.Schema()); err != nil {
			return false, err
		}
		t.cache.put(st.Schema(), updated)
	}
	out := data.NewStruct(updated)
	for i := range st.Schema().Fields {
		if err := out.PutField(updated.Fields[i], fieldValue(st, i, t.withDefault)); err != nil {
			return false, err
		}
	}
	put := func(spec *insertSpec, v any) error {
		f, _ := updated.Field(spec.name)
		return out.PutField(f, v)
	}
	if t.topic != nil {
		if err := put(t.topic, r.Topic); err != nil {
			return false, err
		}
	}
	if t.partition != nil && r.Partition >= 0 {
		if err := put(t.partition, r.Partition); err != nil {
			return false, err
		}
	}
	if t.offset != nil {
		if err := put(t.offset, r.Offset); err != nil {
			return false, err
		}
	}
	if t.timestamp != nil && !r.Timestamp.IsZero() {
		if err := put(t.timestamp, r.Timestamp); err != nil {
			return false, err
		}
	}
	if t.stat != nil {
		if err := put(t.stat, t.staticValue); err != nil {
			return false, err
		}
	}
	t.op.set(r, updated, out)
	return true, nil
}

func (t *InsertField) updatedSchema(s *data.Schema) (*data.Schema, error) {
	b := data.Build(data.Struct).CopyBasics(s)
	for _, f := range s.Fields {
		b.Field(f.Name, f.Schema)
	}
	prim := func(spec *insertSpec, typ data.Type) {
		if spec.optional {
			b.Field(spec.name, data.OptionalSchema(typ))
		} else {
			b.Field(spec.name, data.PrimitiveSchema(typ))
		}
	}
	if t.topic != nil {
		prim(t.topic, data.String)
	}
	if t.partition != nil {
		prim(t.partition, data.Int32)
	}
	if t.offset != nil {
		prim(t.offset, data.Int64)
	}
	if t.timestamp != nil {
		tb := data.TimestampSchema()
		if t.timestamp.optional {
			tb.Optional()
		}
		b.Field(t.timestamp.name, tb.MustSchema())
	}
	if t.stat != nil {
		prim(t.stat, data.String)
	}
	s2, err := b.Schema()
	if err != nil {
		return nil, &data.Error{Msg: err.Error()}
	}
	return s2, nil
}
