package transform

import (
	"github.com/connectd/connectd/framework/configdef"
	"github.com/connectd/connectd/framework/data"
)

// ValueToKey replaces the record key with a new key made of fields of the
// value (Kafka's ValueToKey).
type ValueToKey struct {
	fields      []string
	withDefault bool
	cache       schemaCache
}

// Def implements Transformation.
func (t *ValueToKey) Def() *configdef.Def {
	return configdef.New().
		Define(configdef.Key{Name: "fields", Type: configdef.List, Required: true, Validator: configdef.NonEmptyList(),
			Importance: configdef.High, Documentation: "Field names on the record value to extract as the record key."}).
		Define(replaceNullDef())
}

// Configure implements Transformation.
func (t *ValueToKey) Configure(props map[string]string) error {
	v, err := t.Def().Parse(props)
	if err != nil {
		return err
	}
	t.fields = v.List("fields")
	t.withDefault = v.Bool("replace.null.with.default")
	return nil
}

const valueToKeyPurpose = "copying fields from value to key"

// Apply implements Transformation.
func (t *ValueToKey) Apply(r *Record) (bool, error) {
	if r.ValueSchema == nil {
		m, err := requireMap(r.Value, valueToKeyPurpose)
		if err != nil {
			return false, err
		}
		key := make(map[string]any, len(t.fields))
		for _, f := range t.fields {
			key[f] = m[f]
		}
		r.KeySchema, r.Key = nil, key
		return true, nil
	}
	st, err := requireStruct(r.Value, valueToKeyPurpose)
	if err != nil {
		return false, err
	}
	ks := t.cache.get(st.Schema())
	if ks == nil {
		b := data.Build(data.Struct)
		for _, name := range t.fields {
			f, ok := st.Schema().Field(name)
			if !ok {
				return false, dataErr("Field does not exist: %s", name)
			}
			b.Field(name, f.Schema)
		}
		if ks, err = b.Schema(); err != nil {
			return false, &data.Error{Msg: err.Error()}
		}
		t.cache.put(st.Schema(), ks)
	}
	key := data.NewStruct(ks)
	for _, f := range ks.Fields {
		of, _ := st.Schema().Field(f.Name)
		if err := key.PutField(f, fieldValue(st, of.Index, t.withDefault)); err != nil {
			return false, err
		}
	}
	r.KeySchema, r.Key = ks, key
	return true, nil
}
