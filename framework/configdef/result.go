package configdef

import "encoding/json"

// Result assembles a validation answer the way Kafka's
// AbstractHerder.generateResult does: values reported on names that no key
// defines come first (with a null definition), then every key in order with
// its value (if one was reported). ErrorCount is the number of error
// messages.
func Result(name string, keys []Key, groups []string, values []ConfigValue) ValidationResult {
	defined := make(map[string]bool, len(keys))
	for _, k := range keys {
		defined[k.Name] = true
	}
	byName := make(map[string]int, len(values))
	r := ValidationResult{Name: name, Groups: append([]string{}, groups...), Configs: []ConfigInfo{}}
	for i, v := range values {
		byName[v.Name] = i
		if !defined[v.Name] {
			r.Configs = append(r.Configs, ConfigInfo{Value: normalizeValue(v)})
			r.ErrorCount += len(v.Errors)
		}
	}
	for _, k := range keys {
		info := k.Info()
		ci := ConfigInfo{Definition: &info}
		if i, ok := byName[k.Name]; ok {
			ci.Value = normalizeValue(values[i])
			r.ErrorCount += len(values[i].Errors)
		} else {
			ci.Value = ConfigValue{Name: k.Name, RecommendedValues: []string{}, Errors: []string{}, Visible: true}
		}
		r.Configs = append(r.Configs, ci)
	}
	return r
}

// PrefixedResult is the answer for a plugin's own sub-configuration (a
// converter's key.converter.* keys), as Kafka's prefixedConfigInfos builds
// it: every name gets prefix, groups are those of the keys, and ErrorCount
// counts keys with errors. Unlike Kafka, messages are rewritten to name
// the full key ("for configuration value.converter.schemas.enable").
func PrefixedResult(keys []Key, values []ConfigValue, prefix string) ValidationResult {
	byName := make(map[string]Key, len(keys))
	for _, k := range keys {
		byName[k.Name] = k
	}
	r := ValidationResult{Groups: []string{}, Configs: []ConfigInfo{}}
	seen := map[string]bool{}
	for _, v := range values {
		ci := ConfigInfo{}
		if k, ok := byName[v.Name]; ok {
			if k.Group != "" && !seen[k.Group] {
				seen[k.Group] = true
				r.Groups = append(r.Groups, k.Group)
			}
			k.Name = prefix + k.Name
			info := k.Info()
			ci.Definition = &info
		}
		if len(v.Errors) > 0 {
			msgs := make([]string, len(v.Errors))
			for i, m := range v.Errors {
				msgs[i] = (&ConfigError{Key: v.Name, Message: m}).WithPrefix(prefix).Message
			}
			v.Errors = msgs
		}
		v.Name = prefix + v.Name
		ci.Value = normalizeValue(v)
		if len(v.Errors) > 0 {
			r.ErrorCount++
		}
		r.Configs = append(r.Configs, ci)
	}
	return r
}

// Merge appends other's configs to r, adds its error count and its groups
// (without repeating a group), as Kafka's mergeConfigInfos does.
func (r *ValidationResult) Merge(other ValidationResult) {
	r.ErrorCount += other.ErrorCount
	r.Configs = append(r.Configs, other.Configs...)
	seen := make(map[string]bool, len(r.Groups))
	for _, g := range r.Groups {
		seen[g] = true
	}
	for _, g := range other.Groups {
		if !seen[g] {
			seen[g] = true
			r.Groups = append(r.Groups, g)
		}
	}
}

// AddError records msg against the key name and counts it. A name without
// an entry gets a new one with a null definition, as Kafka does for
// connector-reported errors on undeclared keys.
func (r *ValidationResult) AddError(name, msg string) {
	r.ErrorCount++
	for i := range r.Configs {
		if r.Configs[i].Value.Name == name {
			r.Configs[i].Value.Errors = append(r.Configs[i].Value.Errors, msg)
			return
		}
	}
	r.Configs = append(r.Configs, ConfigInfo{Value: ConfigValue{
		Name: name, RecommendedValues: []string{}, Errors: []string{msg}, Visible: true,
	}})
}

// Errors returns every error message of the result, each prefixed with its
// key ("tasks.max: Invalid value ..."), in result order.
func (r ValidationResult) Errors() []string {
	var out []string
	for _, c := range r.Configs {
		for _, e := range c.Value.Errors {
			out = append(out, c.Value.Name+": "+e)
		}
	}
	return out
}

// Config returns the entry for name.
func (r ValidationResult) Config(name string) (ConfigInfo, bool) {
	for _, c := range r.Configs {
		if c.Value.Name == name {
			return c, true
		}
	}
	return ConfigInfo{}, false
}

func normalizeValue(v ConfigValue) ConfigValue {
	if v.RecommendedValues == nil {
		v.RecommendedValues = []string{}
	}
	if v.Errors == nil {
		v.Errors = []string{}
	}
	return v
}

// MarshalJSON writes Kafka's shape: lists are [] rather than null.
func (v ConfigValue) MarshalJSON() ([]byte, error) {
	type plain ConfigValue
	return json.Marshal(plain(normalizeValue(v)))
}

// MarshalJSON writes Kafka's shape: dependents is [] rather than null.
func (k KeyInfo) MarshalJSON() ([]byte, error) {
	type plain KeyInfo
	if k.Dependents == nil {
		k.Dependents = []string{}
	}
	return json.Marshal(plain(k))
}

// MarshalJSON writes Kafka's shape: groups and configs are [] rather than null.
func (r ValidationResult) MarshalJSON() ([]byte, error) {
	type plain ValidationResult
	if r.Groups == nil {
		r.Groups = []string{}
	}
	if r.Configs == nil {
		r.Configs = []ConfigInfo{}
	}
	return json.Marshal(plain(r))
}
