package transform

import (
	"encoding/base64"
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/connectd/connectd/framework/configdef"
	"github.com/connectd/connectd/framework/data"
	"github.com/connectd/connectd/framework/internal/javafmt"
)

// Cast casts fields, or the whole key or value, to another primitive type
// (Kafka's Cast): spec "f1:int32,f2:string" or a single type ("int64") for
// the whole value. Integer, floating-point, boolean and string values cast
// to any of int8 int16 int32 int64 float32 float64 boolean string, with
// Java's conversion rules (narrowing keeps the low bits, floats truncate
// towards zero, a string parses); bytes cast only to string (base64);
// Date/Time/Timestamp cast to their integer forms or ISO-8601 text.
type Cast struct {
	op          operand
	casts       map[string]data.Type
	order       []string
	whole       data.Type // "" unless the spec casts the whole value
	withDefault bool
	cache       schemaCache
}

var castOutputs = []data.Type{data.Int8, data.Int16, data.Int32, data.Int64, data.Float32, data.Float64, data.Boolean, data.String}

func typeList(ts []data.Type) string {
	names := make([]string, len(ts))
	for i, t := range ts {
		names[i] = t.KafkaName()
	}
	return "[" + strings.Join(names, ", ") + "]"
}

// Def implements Transformation.
func (t *Cast) Def() *configdef.Def {
	return configdef.New().
		Define(configdef.Key{Name: "spec", Type: configdef.List, Required: true,
			Validator: configdef.Func("list of colon-delimited pairs, e.g. <code>foo:bar,abc:xyz</code>", func(key string, v any) error {
				_, _, err := parseCastSpec(key, v.([]string))
				return err
			}),
			Importance: configdef.High,
			Documentation: "List of fields and the type to cast them to of the form field1:type,field2:type to cast fields of Maps or Structs. " +
				"A single type to cast the entire value. Valid types are int8, int16, int32, int64, float32, float64, boolean, and string. " +
				"Note that binary fields can only be cast to string."}).
		Define(replaceNullDef())
}

func parseCastSpec(key string, mappings []string) (map[string]data.Type, []string, error) {
	if len(mappings) == 0 || (len(mappings) == 1 && mappings[0] == "") {
		return nil, nil, configdef.Invalid(key, mappings, "Must specify at least one field to cast.")
	}
	out := map[string]data.Type{}
	var order []string
	whole := false
	parseType := func(s string) (data.Type, error) {
		s = strings.TrimSpace(s)
		t, ok := data.TypeFromKafkaName(s)
		if !ok {
			return "", configdef.Invalid(key, mappings, "Invalid type found in casting spec: "+s)
		}
		for _, o := range castOutputs {
			if o == t {
				return t, nil
			}
		}
		return "", configdef.Invalid(key, mappings, "Cast transformation does not support casting to "+t.KafkaName()+"; supported types are "+typeList(castOutputs))
	}
	for _, m := range mappings {
		parts := strings.Split(m, ":")
		switch len(parts) {
		case 1:
			t, err := parseType(parts[0])
			if err != nil {
				return nil, nil, err
			}
			out[""] = t
			whole = true
		case 2:
			t, err := parseType(parts[1])
			if err != nil {
				return nil, nil, err
			}
			f := strings.TrimSpace(parts[0])
			if _, dup := out[f]; !dup {
				order = append(order, f)
			}
			out[f] = t
		default:
			return nil, nil, configdef.Invalid(key, mappings, "Invalid cast mapping: "+m)
		}
	}
	if whole && len(mappings) > 1 {
		return nil, nil, configdef.Invalid(key, mappings, "Cast transformations that specify a type to cast the entire value to may only specify a single cast in their spec")
	}
	return out, order, nil
}

// Configure implements Transformation.
func (t *Cast) Configure(props map[string]string) error {
	v, err := t.Def().Parse(props)
	if err != nil {
		return err
	}
	t.casts, t.order, _ = parseCastSpec("spec", v.List("spec"))
	t.whole = t.casts[""]
	t.withDefault = v.Bool("replace.null.with.default")
	return nil
}

const castPurpose = "cast types"

// Apply implements Transformation.
func (t *Cast) Apply(r *Record) (bool, error) {
	schema, value := t.op.get(r)
	if value == nil {
		return true, nil
	}
	if schema == nil {
		if t.whole != "" {
			v, err := castValue(nil, value, t.whole)
			if err != nil {
				return false, err
			}
			t.op.set(r, nil, v)
			return true, nil
		}
		m, err := requireMap(value, castPurpose)
		if err != nil {
			return false, err
		}
		out := copyMap(m, 0)
		for _, f := range t.order {
			v, err := castValue(nil, m[f], t.casts[f])
			if err != nil {
				return false, err
			}
			out[f] = v // like Kafka, a cast field absent from the map is added as null
		}
		t.op.set(r, nil, out)
		return true, nil
	}
	updated, err := t.updatedSchema(schema)
	if err != nil {
		return false, err
	}
	if t.whole != "" {
		v, err := castValue(schema, value, t.whole)
		if err != nil {
			return false, err
		}
		t.op.set(r, updated, v)
		return true, nil
	}
	st, err := requireStruct(value, castPurpose)
	if err != nil {
		return false, err
	}
	out := data.NewStruct(updated)
	for i, f := range st.Schema().Fields {
		v := fieldValue(st, i, t.withDefault)
		if target, ok := t.casts[f.Name]; ok {
			if v, err = castValue(f.Schema, v, target); err != nil {
				return false, err
			}
		}
		if err := out.PutField(updated.Fields[i], v); err != nil {
			return false, err
		}
	}
	t.op.set(r, updated, out)
	return true, nil
}

func (t *Cast) updatedSchema(s *data.Schema) (*data.Schema, error) {
	if u := t.cache.get(s); u != nil {
		return u, nil
	}
	var b *data.Builder
	if t.whole != "" {
		b = data.Build(t.whole)
		if !isLogical(s.Name) {
			// Kafka copies the name even from a logical type; a string
			// schema named ...data.Timestamp would then break converters,
			// so logical names are dropped.
			b.CopyBasics(s)
		} else {
			b.Version(s.Version).Doc(s.Doc)
		}
	} else {
		if s.Type != data.Struct {
			return nil, dataErr("Only Struct objects supported for [%s], found: %s", castPurpose, s.Type.KafkaName())
		}
		b = data.Build(data.Struct).CopyBasics(s)
		for _, f := range s.Fields {
			target, ok := t.casts[f.Name]
			if !ok {
				b.Field(f.Name, f.Schema)
				continue
			}
			fb := data.Build(target)
			if f.Schema.Optional {
				fb.Optional()
			}
			if f.Schema.Default != nil {
				dv, err := castValue(f.Schema, f.Schema.Default, target)
				if err != nil {
					return nil, err
				}
				fb.Default(dv)
			}
			fs, err := fb.Schema()
			if err != nil {
				return nil, &data.Error{Msg: err.Error()}
			}
			b.Field(f.Name, fs)
		}
	}
	if s.Optional {
		b.Optional()
	}
	if s.Default != nil {
		target := t.whole
		if target == "" {
			target = data.Struct
		}
		if target != data.Struct {
			dv, err := castValue(s, s.Default, target)
			if err != nil {
				return nil, err
			}
			b.Default(dv)
		}
	}
	u, err := b.Schema()
	if err != nil {
		return nil, &data.Error{Msg: err.Error()}
	}
	t.cache.put(s, u)
	return u, nil
}

func isLogical(name string) bool {
	switch name {
	case data.DecimalName, data.DateName, data.TimeName, data.TimestampName:
		return true
	}
	return false
}

var castInputs = []data.Type{data.Int8, data.Int16, data.Int32, data.Int64, data.Float32, data.Float64, data.Boolean, data.String, data.Bytes}

func castValue(s *data.Schema, v any, target data.Type) (any, error) {
	if v == nil {
		return nil, nil
	}
	var in data.Type
	if s != nil {
		in = s.Type
	} else {
		var ok bool
		if in, ok = data.InferType(v); !ok {
			return nil, dataErr("Cast transformation was passed a value of type %T which is not supported by Connect's data API", v)
		}
	}
	supported := false
	for _, t := range castInputs {
		supported = supported || t == in
	}
	if !supported {
		return nil, dataErr("Cast transformation does not support casting from %s; supported types are %s", in.KafkaName(), typeList(castInputs))
	}
	if s != nil && target != data.String {
		// Logical values cast through their integer wire forms.
		if tm, ok := v.(time.Time); ok {
			switch s.Name {
			case data.DateName:
				n, err := data.DateToDays(tm)
				if err != nil {
					return nil, &data.Error{Msg: err.Error()}
				}
				v = n
			case data.TimeName:
				n, err := data.TimeToMillis(tm)
				if err != nil {
					return nil, &data.Error{Msg: err.Error()}
				}
				v = n
			case data.TimestampName:
				v = data.TimestampToMillis(tm)
			}
		}
	}
	out, err := castTo(v, target)
	if err != nil {
		return nil, err
	}
	return out, nil
}

// number classifies a value as Java's Number would see it.
func number(v any) (i int64, f float64, isFloat, ok bool) {
	switch x := v.(type) {
	case int8:
		return int64(x), float64(x), false, true
	case int16:
		return int64(x), float64(x), false, true
	case int32:
		return int64(x), float64(x), false, true
	case int64:
		return x, float64(x), false, true
	case float32:
		return 0, float64(x), true, true
	case float64:
		return 0, x, true, true
	case data.Decimal:
		// BigDecimal.longValue: the low 64 bits of the integer part.
		q := new(big.Int).Quo(x.Rat().Num(), x.Rat().Denom())
		lo := new(big.Int).And(q, new(big.Int).SetUint64(math.MaxUint64))
		return int64(lo.Uint64()), x.Float64(), false, true
	}
	return 0, 0, false, false
}

// javaLong converts a double to long as Java's (long) cast does:
// saturating, NaN to 0.
func javaLong(f float64) int64 {
	switch {
	case math.IsNaN(f):
		return 0
	case f >= math.MaxInt64:
		return math.MaxInt64
	case f <= math.MinInt64:
		return math.MinInt64
	}
	return int64(f)
}

// javaInt converts a double to int as Java's (int) cast does.
func javaInt(f float64) int32 {
	switch {
	case math.IsNaN(f):
		return 0
	case f >= math.MaxInt32:
		return math.MaxInt32
	case f <= math.MinInt32:
		return math.MinInt32
	}
	return int32(f)
}

// castTo converts v to the primitive type target as Kafka's Cast does.
func castTo(v any, target data.Type) (any, error) {
	switch target {
	case data.Int8, data.Int16, data.Int32, data.Int64:
		return castToInt(v, target)
	case data.Float32, data.Float64:
		return castToFloat(v, target)
	case data.Boolean:
		return castToBool(v)
	case data.String:
		return castToString(v), nil
	}
	return nil, dataErr("%s is not supported in the Cast transformation.", target.KafkaName())
}

func castOutOfRange(v any) error {
	return dataErr("Value (%s) was out of range for requested data type", data.ValueString(v))
}

func castUnexpected(v any) error { return dataErr("Unexpected type in Cast transformation: %T", v) }

// boolInt is a boolean as Kafka's Cast counts it: 1 or 0.
func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

func castToInt(v any, target data.Type) (any, error) {
	i, f, isFloat, isNum := number(v)
	var n int64
	switch x := v.(type) {
	case bool:
		n = boolInt(x)
	case string:
		p, err := strconv.ParseInt(x, 10, intBits(target))
		if err != nil {
			return nil, castOutOfRange(v)
		}
		n = p
	default:
		switch {
		case isNum && isFloat && target == data.Int64:
			n = javaLong(f)
		case isNum && isFloat:
			n = int64(javaInt(f)) // Java narrows double via int
		case isNum:
			n = i
		default:
			return nil, castUnexpected(v)
		}
	}
	switch target {
	case data.Int8:
		return int8(n), nil
	case data.Int16:
		return int16(n), nil
	case data.Int32:
		return int32(n), nil
	}
	return n, nil
}

func castToFloat(v any, target data.Type) (any, error) {
	i, f, isFloat, isNum := number(v)
	var x float64
	switch y := v.(type) {
	case bool:
		x = float64(boolInt(y))
	case string:
		p, err := parseJavaFloat(y)
		if err != nil {
			return nil, castOutOfRange(v)
		}
		x = p
	case data.Decimal:
		x = y.Float64()
	default:
		switch {
		case isNum && isFloat:
			x = f
		case isNum:
			x = float64(i)
		default:
			return nil, castUnexpected(v)
		}
	}
	if target == data.Float32 {
		return float32(x), nil
	}
	return x, nil
}

func castToBool(v any) (any, error) {
	i, f, isFloat, isNum := number(v)
	switch x := v.(type) {
	case bool:
		return x, nil
	case string:
		return strings.EqualFold(x, "true"), nil
	}
	switch {
	case isNum && isFloat:
		return javaLong(f) != 0, nil
	case isNum:
		return i != 0, nil
	}
	return nil, castUnexpected(v)
}

func castToString(v any) string {
	switch x := v.(type) {
	case time.Time:
		return isoString(x)
	case []byte:
		return base64.StdEncoding.EncodeToString(x)
	case float32:
		return javafmt.FormatFloat(x)
	case float64:
		return javafmt.FormatDouble(x)
	case string:
		return x
	case bool:
		return strconv.FormatBool(x)
	case data.Decimal:
		return x.String()
	}
	if i, _, _, isNum := number(v); isNum {
		return strconv.FormatInt(i, 10)
	}
	return data.ValueString(v)
}

// isoString formats a Date/Time/Timestamp value as Kafka's
// Values.dateFormatFor does: a time of day, a date, or a full timestamp.
func isoString(t time.Time) string {
	ms := t.UnixMilli()
	t = t.UTC()
	switch {
	case ms < 24*60*60*1000:
		return t.Format("15:04:05.000Z")
	case ms%(24*60*60*1000) == 0:
		return t.Format("2006-01-02")
	}
	return t.Format("2006-01-02T15:04:05.000Z")
}

func parseJavaFloat(s string) (float64, error) {
	t := strings.TrimSpace(s)
	switch t {
	case "NaN":
		return math.NaN(), nil
	case "Infinity", "+Infinity":
		return math.Inf(1), nil
	case "-Infinity":
		return math.Inf(-1), nil
	}
	if n := len(t); n > 1 && strings.ContainsRune("dDfF", rune(t[n-1])) {
		t = t[:n-1]
	}
	if strings.ContainsAny(t, "_iInN") {
		return 0, strconv.ErrSyntax
	}
	return strconv.ParseFloat(t, 64)
}

func intBits(t data.Type) int {
	switch t {
	case data.Int8:
		return 8
	case data.Int16:
		return 16
	case data.Int32:
		return 32
	}
	return 64
}
