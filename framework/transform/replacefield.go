package transform

import (
	"strings"

	"github.com/connectd/connectd/framework/configdef"
	"github.com/connectd/connectd/framework/data"
)

// ReplaceField filters and renames fields of the key or value (Kafka's
// ReplaceField). The pre-3.0 names whitelist and blacklist are accepted for
// include and exclude. Tombstones pass through unchanged.
type ReplaceField struct {
	op             operand
	exclude        map[string]bool
	include        map[string]bool
	renames        map[string]string
	reverseRenames map[string]string
	withDefault    bool
	cache          schemaCache
}

// Def implements Transformation.
func (t *ReplaceField) Def() *configdef.Def {
	return configdef.New().
		Define(configdef.Key{Name: "exclude", Type: configdef.List, Default: "", Importance: configdef.Medium,
			Documentation: "Fields to exclude. This takes precedence over the fields to include."}).
		Define(configdef.Key{Name: "include", Type: configdef.List, Default: "", Importance: configdef.Medium,
			Documentation: "Fields to include. If specified, only these fields will be used."}).
		Define(configdef.Key{Name: "renames", Type: configdef.List, Default: "", Importance: configdef.Medium,
			Validator: configdef.Func("list of colon-delimited pairs, e.g. <code>foo:bar,abc:xyz</code>", func(key string, v any) error {
				_, err := parseRenames(key, v.([]string))
				return err
			}),
			Documentation: "Field rename mappings."}).
		Define(replaceNullDef()).
		Define(configdef.Key{Name: "blacklist", Type: configdef.List, Importance: configdef.Low,
			Documentation: "Deprecated. Use exclude instead."}).
		Define(configdef.Key{Name: "whitelist", Type: configdef.List, Importance: configdef.Low,
			Documentation: "Deprecated. Use include instead."})
}

func parseRenames(key string, mappings []string) (map[string]string, error) {
	m := map[string]string{}
	for _, mapping := range mappings {
		parts := strings.Split(mapping, ":")
		if len(parts) != 2 {
			return nil, configdef.Invalid(key, mappings, "Invalid rename mapping: "+mapping)
		}
		m[parts[0]] = parts[1]
	}
	return m, nil
}

func toSet(l []string) map[string]bool {
	m := make(map[string]bool, len(l))
	for _, s := range l {
		m[s] = true
	}
	return m
}

// Configure implements Transformation.
func (t *ReplaceField) Configure(props map[string]string) error {
	v, err := t.Def().Parse(props)
	if err != nil {
		return err
	}
	exclude, include := v.List("exclude"), v.List("include")
	if !v.IsSet("exclude") && !v.IsNull("blacklist") {
		exclude = v.List("blacklist")
	}
	if !v.IsSet("include") && !v.IsNull("whitelist") {
		include = v.List("whitelist")
	}
	t.exclude, t.include = toSet(exclude), toSet(include)
	t.renames, _ = parseRenames("renames", v.List("renames"))
	t.reverseRenames = make(map[string]string, len(t.renames))
	for k, to := range t.renames {
		t.reverseRenames[to] = k
	}
	t.withDefault = v.Bool("replace.null.with.default")
	return nil
}

func (t *ReplaceField) keep(name string) bool {
	return !t.exclude[name] && (len(t.include) == 0 || t.include[name])
}

func (t *ReplaceField) renamed(name string) string {
	if to, ok := t.renames[name]; ok {
		return to
	}
	return name
}

const replacePurpose = "field replacement"

// Apply implements Transformation.
func (t *ReplaceField) Apply(r *Record) (bool, error) {
	schema, value := t.op.get(r)
	if value == nil {
		return true, nil
	}
	if schema == nil {
		m, err := requireMap(value, replacePurpose)
		if err != nil {
			return false, err
		}
		out := make(map[string]any, len(m))
		for k, v := range m {
			if t.keep(k) {
				out[t.renamed(k)] = v
			}
		}
		t.op.set(r, nil, out)
		return true, nil
	}
	st, err := requireStruct(value, replacePurpose)
	if err != nil {
		return false, err
	}
	updated := t.cache.get(st.Schema())
	if updated == nil {
		b := data.Build(data.Struct).CopyBasics(st.Schema())
		for _, f := range st.Schema().Fields {
			if t.keep(f.Name) {
				b.Field(t.renamed(f.Name), f.Schema)
			}
		}
		if updated, err = b.Schema(); err != nil {
			return false, &data.Error{Msg: err.Error()}
		}
		t.cache.put(st.Schema(), updated)
	}
	out := data.NewStruct(updated)
	for _, f := range updated.Fields {
		orig := f.Name
		if from, ok := t.reverseRenames[f.Name]; ok {
			orig = from
		}
		of, _ := st.Schema().Field(orig)
		if err := out.PutField(f, fieldValue(st, of.Index, t.withDefault)); err != nil {
			return false, err
		}
	}
	t.op.set(r, updated, out)
	return true, nil
}
