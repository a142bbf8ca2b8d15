package transform

import (
	"strings"

	"github.com/connectd/connectd/framework/configdef"
	"github.com/connectd/connectd/framework/data"
)

// ExtractField replaces the key or value with one of its fields (Kafka's
// ExtractField). With field.syntax.version=V2 the field may be a dotted
// path into nested structs or maps, with backticks around names that
// contain dots. Null keys or values pass through.
type ExtractField struct {
	op          operand
	path        []string
	original    string
	withDefault bool
}

// Def implements Transformation.
func (t *ExtractField) Def() *configdef.Def {
	return configdef.New().
		Define(configdef.Key{Name: "field", Type: configdef.String, Required: true, Importance: configdef.Medium,
			Documentation: "Field name to extract."}).
		Define(replaceNullDef()).
		Define(fieldSyntaxKey())
}

func fieldSyntaxKey() configdef.Key {
	return configdef.Key{Name: "field.syntax.version", Type: configdef.String, Default: "V1",
		Validator: configdef.OneOfIgnoreCase("V1", "V2"), Importance: configdef.High,
		Documentation: "Defines the version of the syntax to access fields. If set to `V1`, then the field paths are limited to access the elements at the root level of the struct or map. " +
			"If set to `V2`, the syntax will support accessing nested elements. To access nested elements, dotted notation is used. " +
			"If dots are already included in the field name, then backtick pairs can be used to wrap field names containing dots. " +
			"E.g. to access the subfield `baz` from a field named \"foo.bar\" in a struct/map the following format can be used to access its elements: \"`foo.bar`.baz\"."}
}

// Configure implements Transformation.
func (t *ExtractField) Configure(props map[string]string) error {
	v, err := t.Def().Parse(props)
	if err != nil {
		return err
	}
	t.original = v.String("field")
	t.withDefault = v.Bool("replace.null.with.default")
	if strings.EqualFold(v.String("field.syntax.version"), "V2") {
		if t.path, err = parseFieldPathV2(t.original); err != nil {
			return configdef.Invalid("field", t.original, err.Error())
		}
	} else {
		t.path = []string{t.original}
	}
	return nil
}

const extractPurpose = "field extraction"

// Apply implements Transformation.
func (t *ExtractField) Apply(r *Record) (bool, error) {
	schema, value := t.op.get(r)
	if schema == nil {
		if value == nil {
			t.op.set(r, nil, nil)
			return true, nil
		}
		m, err := requireMap(value, extractPurpose)
		if err != nil {
			return false, err
		}
		var cur any = m
		for _, step := range t.path {
			if cur == nil {
				break
			}
			mm, err := requireMap(cur, "nested field access")
			if err != nil {
				return false, err
			}
			cur = mm[step]
		}
		t.op.set(r, nil, cur)
		return true, nil
	}
	var st *data.StructValue
	if value != nil {
		var err error
		if st, err = requireStruct(value, extractPurpose); err != nil {
			return false, err
		}
	}
	// Resolve the field schema along the path.
	cur := schema
	var field data.Field
	for i, step := range t.path {
		f, ok := cur.Field(step)
		if cur.Type != data.Struct || !ok {
			return false, dataErr("Unknown field: %s", t.original)
		}
		field = f
		if i < len(t.path)-1 {
			cur = f.Schema
		}
	}
	var out any
	for i := 0; st != nil && i < len(t.path); i++ {
		f, _ := st.Schema().Field(t.path[i])
		v := fieldValue(st, f.Index, t.withDefault || i < len(t.path)-1)
		if i == len(t.path)-1 {
			out = v
			break
		}
		if v == nil {
			break
		}
		next, err := requireStruct(v, "nested field access")
		if err != nil {
			return false, err
		}
		st = next
	}
	t.op.set(r, field.Schema, out)
	return true, nil
}

// parseFieldPathV2 splits a KIP-821 field path: dots separate steps;
// `back.ticked` steps may contain dots; \` escapes a backtick inside one.
func parseFieldPathV2(path string) ([]string, error) {
	var steps []string
	for i := 0; i < len(path); {
		if path[i] != '`' {
			j := strings.IndexByte(path[i:], '.')
			if j < 0 {
				steps = append(steps, path[i:])
				break
			}
			steps = append(steps, path[i:i+j])
			i += j + 1
			continue
		}
		step, next, err := backtickStep(path, i)
		if err != nil {
			return nil, err
		}
		steps = append(steps, step)
		i = next
	}
	if path != "" && path[len(path)-1] == '.' {
		steps = append(steps, "")
	}
	return steps, nil
}

// backtickStep reads the step that starts with the backtick at open and
// returns it with the index after its closing backtick (and dot).
func backtickStep(path string, open int) (string, int, error) {
	var b strings.Builder
	i := open + 1
	start := i
	for {
		j := strings.IndexByte(path[i:], '`')
		if j < 0 {
			return "", 0, incompleteBacktick(path, open)
		}
		i += j
		escaped := path[i-1] == '\\'
		if i >= len(path)-1 { // the closing backtick ends the path
			if escaped {
				return "", 0, incompleteBacktick(path, open)
			}
			b.WriteString(path[start:i])
			return b.String(), i + 1, nil
		}
		if path[i+1] != '.' { // a backtick inside the name
			i++
			continue
		}
		if escaped {
			b.WriteString(path[start : i-1])
			b.WriteByte('`')
			i++
			start = i
			continue
		}
		b.WriteString(path[start:i])
		return b.String(), i + 2, nil // past the backtick and the dot
	}
}

func incompleteBacktick(path string, at int) error {
	return dataErr("Incomplete backtick pair in path: [%s], consider adding a backslash before backtick at position %d to escape it", path, at)
}
