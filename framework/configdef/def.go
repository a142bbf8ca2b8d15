package configdef

import (
	"fmt"
	"maps"
)

// Def is an ordered set of key definitions.
type Def struct {
	keys  []Key
	index map[string]int
}

// New returns an empty definition set.
func New() *Def { return &Def{index: map[string]int{}} }

// Define adds a key and returns d for chaining.
//
// Defaults may be given either typed (bool, string, int16, int32, int64,
// float64, []string, Secret; Go ints of any width are converted when they
// fit) or, as in Kafka, as a string in the key's textual form ("1", "true",
// "a,b"), which is parsed here. The default is checked against the key's
// validator.
//
// Defining the same name twice, a key without a name or type, or a default
// that does not fit the type or fails the validator is a programming error
// and panics.
func (d *Def) Define(k Key) *Def {
	if k.Name == "" || k.Type == "" {
		panic(fmt.Sprintf("configdef: key %q needs a name and a type", k.Name))
	}
	if !k.Type.valid() {
		panic(fmt.Sprintf("configdef: key %q has unknown type %q", k.Name, k.Type))
	}
	if _, dup := d.index[k.Name]; dup {
		panic(fmt.Sprintf("configdef: key %q defined twice", k.Name))
	}
	if k.Required {
		k.Default = nil
	} else if k.Default != nil {
		v, err := normalizeDefault(k.Name, k.Type, k.Default)
		if err != nil {
			panic(fmt.Sprintf("configdef: default of key %q: %v", k.Name, err))
		}
		k.Default = v
		if k.Validator != nil {
			if err := k.Validator.Validate(k.Name, v); err != nil {
				panic(fmt.Sprintf("configdef: default of key %q fails its validator: %v", k.Name, err))
			}
		}
	}
	if k.Width == "" {
		k.Width = WidthNone
	}
	if k.Importance == "" {
		k.Importance = Medium
	}
	if k.DisplayName == "" {
		k.DisplayName = k.Name
	}
	k.Dependents = append([]string(nil), k.Dependents...)
	d.index[k.Name] = len(d.keys)
	d.keys = append(d.keys, k)
	return d
}

// Keys returns the definitions in the order they were defined.
func (d *Def) Keys() []Key { return append([]Key(nil), d.keys...) }

// Key returns the definition of name.
func (d *Def) Key(name string) (Key, bool) {
	i, ok := d.index[name]
	if !ok {
		return Key{}, false
	}
	return d.keys[i], true
}

// Len is the number of keys.
func (d *Def) Len() int { return len(d.keys) }

// Clone returns an independent copy of d, to which more keys can be added.
func (d *Def) Clone() *Def {
	return &Def{keys: append([]Key(nil), d.keys...), index: maps.Clone(d.index)}
}

// Groups returns the groups of the keys in the order they first appear, as
// Kafka's ConfigDef.groups() does.
func (d *Def) Groups() []string { return groupsOf(d.keys) }

func groupsOf(keys []Key) []string {
	seen := map[string]bool{}
	var out []string
	for _, k := range keys {
		if k.Group != "" && !seen[k.Group] {
			seen[k.Group] = true
			out = append(out, k.Group)
		}
	}
	return out
}

// Embed defines every key of child in d under prefix (like Kafka's
// ConfigDef.embed): names and dependents get the prefix, all keys move to
// group with orders startOrder, startOrder+1, ... Recommenders see the
// child's own key names. Validators receive the full (prefixed) name so that
// their messages name the key the user wrote.
func (d *Def) Embed(prefix, group string, startOrder int, child *Def) *Def {
	for i, k := range child.keys {
		// Like Kafka, the display name stays the child's own (unprefixed).
		k.Name = prefix + k.Name
		k.Group = group
		k.OrderInGroup = startOrder + i
		deps := make([]string, len(k.Dependents))
		for j, dep := range k.Dependents {
			deps[j] = prefix + dep
		}
		k.Dependents = deps
		if k.Recommender != nil {
			k.Recommender = prefixedRecommender{prefix: prefix, base: k.Recommender}
		}
		d.Define(k)
	}
	return d
}

type prefixedRecommender struct {
	prefix string
	base   Recommender
}

func (r prefixedRecommender) strip(parsed map[string]any) map[string]any {
	out := make(map[string]any, len(parsed))
	for k, v := range parsed {
		if len(k) > len(r.prefix) && k[:len(r.prefix)] == r.prefix {
			out[k[len(r.prefix):]] = v
		}
	}
	return out
}

func (r prefixedRecommender) ValidValues(key string, parsed map[string]any) []any {
	return r.base.ValidValues(key[len(r.prefix):], r.strip(parsed))
}

func (r prefixedRecommender) Visible(key string, parsed map[string]any) bool {
	return r.base.Visible(key[len(r.prefix):], r.strip(parsed))
}

// undefinedDependents lists dependents that name no key, in definition order.
func (d *Def) undefinedDependents() []string {
	var out []string
	seen := map[string]bool{}
	for _, k := range d.keys {
		for _, dep := range k.Dependents {
			if _, ok := d.index[dep]; !ok && !seen[dep] {
				seen[dep] = true
				out = append(out, dep)
			}
		}
	}
	return out
}

// Info renders k as the REST API shows it (Kafka's ConfigKeyInfo).
func (k Key) Info() KeyInfo {
	info := KeyInfo{
		Name:          k.Name,
		Type:          k.Type,
		Required:      k.Required,
		Importance:    k.Importance,
		Documentation: k.Documentation,
		Order:         k.OrderInGroup,
		Width:         k.Width,
		DisplayName:   k.DisplayName,
		Dependents:    append([]string{}, k.Dependents...),
	}
	if !k.Required {
		info.DefaultValue = FormatValue(k.Default, k.Type)
	}
	if k.Group != "" {
		g := k.Group
		info.Group = &g
	}
	if k.Validator != nil {
		info.ValidValues = k.Validator.String()
	}
	return info
}

// Infos renders every key, in definition order.
func (d *Def) Infos() []KeyInfo {
	out := make([]KeyInfo, len(d.keys))
	for i, k := range d.keys {
		out[i] = k.Info()
	}
	return out
}
