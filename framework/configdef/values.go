package configdef

import (
	"fmt"
	"maps"
)

// Parse parses and validates props against d, as Kafka's ConfigDef.parse
// does: every defined key gets its parsed value, its default, or an error if
// it is required and absent; validators run on every non-null value. Keys
// in props that d does not define are ignored.
//
// Unlike Kafka, which stops at the first problem, Parse reports them all:
// the error is an Errors value listing one *ConfigError per problem, in
// definition order.
func (d *Def) Parse(props map[string]string) (*Values, error) {
	v := &Values{def: d, values: make(map[string]any, len(d.keys)), set: map[string]bool{}}
	var errs Errors
	for _, dep := range d.undefinedDependents() {
		errs = append(errs, &ConfigError{Key: dep, Message: dep + " is referred in the dependents, but not defined."})
	}
	for _, k := range d.keys {
		val, err := parseKey(k, props)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if _, ok := props[k.Name]; ok {
			v.set[k.Name] = true
		}
		v.values[k.Name] = val
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return v, nil
}

// parseKey parses k's value in props, or takes its default, and runs its
// validator on a non-null value. When the validator rejects the value, the
// parsed value is returned with the error: Validate renders it beside the
// error (as Kafka's validate endpoint does), Parse drops it.
func parseKey(k Key, props map[string]string) (any, *ConfigError) {
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

func asConfigError(key string, err error) *ConfigError {
	if ce, ok := err.(*ConfigError); ok {
		return ce
	}
	return &ConfigError{Key: key, Message: err.Error()}
}

// Values holds parsed configuration values (Kafka's AbstractConfig).
//
// The typed accessors panic when the key is not defined or has another
// type: that is a bug in the code asking, not a configuration problem, and
// Parse has already reported every configuration problem.
type Values struct {
	def    *Def
	values map[string]any
	set    map[string]bool
}

// Get returns the parsed value of name (nil for a null default).
func (v *Values) Get(name string) any {
	val, ok := v.values[name]
	if !ok {
		panic(fmt.Sprintf("configdef: key %q is not defined", name))
	}
	return val
}

// IsSet reports whether name was given explicitly (not defaulted).
func (v *Values) IsSet(name string) bool { return v.set[name] }

// Map returns a copy of all parsed values by key.
func (v *Values) Map() map[string]any { return maps.Clone(v.values) }

func get[T any](v *Values, name string, want Type) T {
	val := v.Get(name)
	if val == nil {
		var zero T
		return zero
	}
	t, ok := val.(T)
	if !ok {
		panic(fmt.Sprintf("configdef: key %q is %T, not %s", name, val, want))
	}
	return t
}

// String returns a STRING or CLASS value ("" when null).
func (v *Values) String(name string) string { return get[string](v, name, String) }

// Bool returns a BOOLEAN value.
func (v *Values) Bool(name string) bool { return get[bool](v, name, Boolean) }

// Int returns an INT value.
func (v *Values) Int(name string) int32 { return get[int32](v, name, Int) }

// Short returns a SHORT value.
func (v *Values) Short(name string) int16 { return get[int16](v, name, Short) }

// Long returns a LONG value.
func (v *Values) Long(name string) int64 { return get[int64](v, name, Long) }

// Double returns a DOUBLE value.
func (v *Values) Double(name string) float64 { return get[float64](v, name, Double) }

// List returns a LIST value (nil when null).
func (v *Values) List(name string) []string {
	return append([]string(nil), get[[]string](v, name, List)...)
}

// Secret returns a PASSWORD value.
func (v *Values) Secret(name string) Secret { return get[Secret](v, name, Password) }

// IsNull reports whether name's value is null (absent with a null default).
func (v *Values) IsNull(name string) bool { return v.Get(name) == nil }
