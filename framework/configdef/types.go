package configdef

// Type is the type of a configuration value. The names are Kafka's, as they
// appear in the REST API.
type Type string

const (
	Boolean  Type = "BOOLEAN"
	String   Type = "STRING"
	Int      Type = "INT"    // int32
	Short    Type = "SHORT"  // int16
	Long     Type = "LONG"   // int64
	Double   Type = "DOUBLE" // float64
	List     Type = "LIST"   // comma-separated strings, []string
	Class    Type = "CLASS"  // a plugin class name or alias, string
	Password Type = "PASSWORD"
)

func (t Type) valid() bool {
	switch t {
	case Boolean, String, Int, Short, Long, Double, List, Class, Password:
		return true
	}
	return false
}

// Importance ranks keys for users and UIs.
type Importance string

const (
	High   Importance = "HIGH"
	Medium Importance = "MEDIUM"
	Low    Importance = "LOW"
)

// Width hints how wide an input field a UI should draw.
type Width string

const (
	WidthNone   Width = "NONE"
	WidthShort  Width = "SHORT"
	WidthMedium Width = "MEDIUM"
	WidthLong   Width = "LONG"
)

// Validator checks one parsed value. Validate returns an error whose message
// names the expected form; String describes the valid values for docs
// ("[1,...]", "one of [none, all]").
type Validator interface {
	Validate(key string, value any) error
	String() string
}

// Recommender computes recommended values and visibility of a key from the
// other parsed values (for UIs and the validate endpoint).
type Recommender interface {
	ValidValues(key string, parsed map[string]any) []any
	Visible(key string, parsed map[string]any) bool
}

// Key defines one configuration key.
type Key struct {
	Name string
	Type Type
	// Required keys have no default: a value must be given.
	Required bool
	// Default is the typed default used when the key is absent and not
	// required: bool, string, int16, int32, int64, float64 or []string
	// matching Type. nil is a null default (the key is optional and unset).
	Default       any
	Importance    Importance
	Documentation string
	Group         string
	OrderInGroup  int
	Width         Width
	DisplayName   string
	Dependents    []string
	Validator     Validator   // optional
	Recommender   Recommender // optional
}

// KeyInfo is a Key as the REST API shows it (ConfigKeyInfo): serializable,
// with the default rendered as a string. It also crosses the plugin
// boundary, so the worker can answer GET /connector-plugins/{p}/config
// without running plugin code.
type KeyInfo struct {
	Name          string     `json:"name"`
	Type          Type       `json:"type"`
	Required      bool       `json:"required"`
	DefaultValue  *string    `json:"default_value"`
	Importance    Importance `json:"importance"`
	Documentation string     `json:"documentation"`
	Group         *string    `json:"group"`
	Order         int        `json:"order"`
	Width         Width      `json:"width"`
	DisplayName   string     `json:"display_name"`
	Dependents    []string   `json:"dependents"`
	// ValidValues describes the validator for docs; not part of Kafka's shape.
	ValidValues string `json:"-"`
}

// ConfigValue is the validation outcome of one key (the "value" object of
// the validate endpoint). PASSWORD values are rendered "[hidden]".
type ConfigValue struct {
	Name              string   `json:"name"`
	Value             *string  `json:"value"`
	RecommendedValues []string `json:"recommended_values"`
	Errors            []string `json:"errors"`
	Visible           bool     `json:"visible"`
}

// ConfigInfo pairs a key's definition with its validation outcome.
// Definition is nil for a value reported on a key that no definition
// declares (Kafka renders it as null).
type ConfigInfo struct {
	Definition *KeyInfo    `json:"definition"`
	Value      ConfigValue `json:"value"`
}

// ValidationResult is the whole answer of the validate endpoint (Kafka's
// ConfigInfos).
type ValidationResult struct {
	Name       string       `json:"name"`
	ErrorCount int          `json:"error_count"`
	Groups     []string     `json:"groups"`
	Configs    []ConfigInfo `json:"configs"`
}
