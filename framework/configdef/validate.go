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
		val, err := parseKey(k, props)
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
