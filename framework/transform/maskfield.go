package transform

import (
	"math/big"
	"strconv"
	"time"

	"github.com/connectd/connectd/framework/configdef"
	"github.com/connectd/connectd/framework/data"
)

// MaskField replaces fields with the null value of their type (0, false,
// "", an empty list or map, the epoch) or with a configured replacement
// (Kafka's MaskField).
type MaskField struct {
	op          operand
	fields      []string
	masked      map[string]bool
	replacement *string
	withDefault bool
}

// Def implements Transformation.
func (t *MaskField) Def() *configdef.Def {
	return configdef.New().
		Define(configdef.Key{Name: "fields", Type: configdef.List, Required: true, Validator: configdef.NonEmptyList(),
			Importance: configdef.High, Documentation: "Names of fields to mask."}).
		Define(configdef.Key{Name: "replacement", Type: configdef.String, Validator: configdef.NonEmptyString(),
			Importance:    configdef.Low,
			Documentation: "Custom value replacement, that will be applied to all 'fields' values (numeric or non-empty string values only)."}).
		Define(replaceNullDef())
}

// Configure implements Transformation.
func (t *MaskField) Configure(props map[string]string) error {
	v, err := t.Def().Parse(props)
	if err != nil {
		return err
	}
	t.fields = v.List("fields")
	t.masked = toSet(t.fields)
	if !v.IsNull("replacement") {
		r := v.String("replacement")
		t.replacement = &r
	}
	t.withDefault = v.Bool("replace.null.with.default")
	return nil
}

const maskPurpose = "mask fields"

// Apply implements Transformation.
func (t *MaskField) Apply(r *Record) (bool, error) {
	schema, value := t.op.get(r)
	if schema == nil {
		m, err := requireMap(value, maskPurpose)
		if err != nil {
			return false, err
		}
		out := copyMap(m, 0)
		for _, f := range t.fields {
			// Like Kafka, a masked field absent from the map is added as null.
			mv, err := t.mask(m[f])
			if err != nil {
				return false, err
			}
			out[f] = mv
		}
		t.op.setValue(r, out)
		return true, nil
	}
	st, err := requireStruct(value, maskPurpose)
	if err != nil {
		return false, err
	}
	out := data.NewStruct(st.Schema())
	for i, f := range st.Schema().Fields {
		v := fieldValue(st, i, t.withDefault)
		if t.masked[f.Name] {
			if v, err = t.mask(v); err != nil {
				return false, err
			}
		}
		if err := out.PutField(f, v); err != nil {
			return false, err
		}
	}
	t.op.setValue(r, out)
	return true, nil
}

func (t *MaskField) mask(v any) (any, error) {
	if v == nil {
		return nil, nil
	}
	if t.replacement != nil {
		return maskWithReplacement(v, *t.replacement)
	}
	switch x := v.(type) {
	case bool:
		return false, nil
	case int8:
		return int8(0), nil
	case int16:
		return int16(0), nil
	case int32:
		return int32(0), nil
	case int64:
		return int64(0), nil
	case float32:
		return float32(0), nil
	case float64:
		return float64(0), nil
	case string:
		return "", nil
	case data.Decimal:
		return data.Decimal{Unscaled: new(big.Int), Scale: x.Scale}, nil
	case time.Time:
		return time.UnixMilli(0).UTC(), nil
	case []any:
		return []any{}, nil
	case map[string]any:
		return map[string]any{}, nil
	case map[any]any:
		return map[any]any{}, nil
	}
	return nil, dataErr("Cannot mask value of type: %T", v)
}

func maskWithReplacement(v any, repl string) (any, error) {
	num := func(bits int) (int64, error) {
		n, err := strconv.ParseInt(repl, 10, bits)
		if err != nil {
			return 0, dataErr("Unable to convert %s (string) to number", repl)
		}
		return n, nil
	}
	switch x := v.(type) {
	case string:
		return repl, nil
	case int8:
		n, err := num(8)
		return int8(n), err
	case int16:
		n, err := num(16)
		return int16(n), err
	case int32:
		n, err := num(32)
		return int32(n), err
	case int64:
		return num(64)
	case float32:
		f, err := strconv.ParseFloat(repl, 32)
		if err != nil {
			return nil, dataErr("Unable to convert %s (string) to number", repl)
		}
		return float32(f), nil
	case float64:
		f, err := strconv.ParseFloat(repl, 64)
		if err != nil {
			return nil, dataErr("Unable to convert %s (string) to number", repl)
		}
		return f, nil
	case data.Decimal:
		d, err := data.ParseDecimal(repl)
		if err != nil {
			return nil, dataErr("Unable to convert %s (string) to number", repl)
		}
		// Keep the field's scale so the value still fits its Decimal schema.
		if r, err := d.Rescale(x.Scale); err == nil {
			d = r
		}
		return d, nil
	}
	return nil, dataErr("Cannot mask value of type %T with custom replacement.", v)
}
