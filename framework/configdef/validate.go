package configdef

// Validate checks props against d the way Kafka's ConfigDef.validate does,
// for the validate endpoint: instead of stopping at a problem it returns one
// ConfigValue per key, in definition order, carrying the rendered value, the
// error messages (missing required key, type error, validator error), the
// recommended values and the visibility computed by the key's recommender.
// Dependents that name no defined key get an entry of their own with an
// error, after the defined keys.
//
// Validators are not run on null values (an absent key with a null
// default, or a value that failed to parse), so a type error is reported
// once, not followed by a "must be non-null".
func (d *Def) Validate(props map[string]string) []ConfigValue {
	parsed := make(map[string]any, len(d.keys))
	out := make([]ConfigValue, 0, len(d.keys))
	for _, k := range d.keys {
		cv := ConfigValue{Name: k.Name, RecommendedValues: []string{}, Errors: []string{}, Visible: true}
		val, err := parseForValidate(k, props)
		if err != nil {
			cv.Errors = append(cv.Errors, err.Message)
		}
		parsed[k.Name] = val
		out = append(out, cv)
	}
	for i, k := range d.keys {
		cv := &out[i]
		cv.Value = FormatValue(parsed[k.Name], k.Type)
		if k.Recommender == nil {
			continue
		}
		recType := k.Type
		if recType == List {
			recType = String
		}
		for _, rv := range k.Recommender.ValidValues(k.Name, parsed) {
			if s := FormatValue(rv, recType); s != nil {
				cv.RecommendedValues = append(cv.RecommendedValues, *s)
			}
		}
		cv.Visible = k.Recommender.Visible(k.Name, parsed)
	}
	for _, dep := range d.undefinedDependents() {
		out = append(out, ConfigValue{
			Name:              dep,
			RecommendedValues: []string{},
			Errors:            []string{dep + " is referred in the dependents, but not defined."},
			Visible:           false,
		})
	}
	return out
}

func parseForValidate(k Key, props map[string]string) (any, *ConfigError) {
	raw, present := props[k.Name]
	var val any
	switch {
	case present:
		p, err := ParseValue(k.Name, k.Type, raw)
		if err != nil {
			return nil, asConfigError(k.Name, err)
		}
		val = p
	case k.Required:
		return nil, Missing(k.Name)
	default:
		val = k.Default
	}
	if k.Validator != nil && val != nil {
		if err := k.Validator.Validate(k.Name, val); err != nil {
			return val, asConfigError(k.Name, err)
		}
	}
	return val, nil
}
