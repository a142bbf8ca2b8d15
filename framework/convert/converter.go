package convert

import (
	"errors"
	"fmt"
	"strings"

	"github.com/connectd/connectd/framework/configdef"
	"github.com/connectd/connectd/framework/data"
)

// Converter converts between Connect data and bytes (Kafka's Converter).
//
// A configured Converter may be used from one goroutine at a time; build one
// per task.
type Converter interface {
	// Configure applies the converter's own settings (the sub-keys after
	// "key.converter." or "value.converter.") and whether it converts keys.
	Configure(props map[string]string, isKey bool) error
	// FromConnect serializes a value with its schema (nil schema: schemaless).
	// A nil result is a null record key or value.
	FromConnect(topic string, schema *data.Schema, value any) ([]byte, error)
	// ToConnect deserializes bytes (nil: null) into a schema and value.
	ToConnect(topic string, b []byte) (*data.Schema, any, error)
}

// Kafka's class names of the built-in converters.
const (
	ByteArrayClass    = "org.apache.kafka.connect.converters.ByteArrayConverter"
	StringClass       = "org.apache.kafka.connect.storage.StringConverter"
	JSONClass         = "org.apache.kafka.connect.json.JsonConverter"
	SimpleHeaderClass = "org.apache.kafka.connect.storage.SimpleHeaderConverter"
)

// TypeConfig is the key through which a converter learns its role (key,
// value or header); the framework sets it, as Kafka's ConverterConfig does.
const TypeConfig = "converter.type"

// Info describes a converter class.
type Info struct {
	Class   string   // fully-qualified Kafka class name
	Aliases []string // short names accepted in configs
	Summary string
	// Header reports whether the class may be used as header.converter.
	Header bool
	// Record reports whether the class may be used as key.converter or
	// value.converter.
	Record bool
	// New returns an unconfigured converter (nil for header-only classes).
	New func() Converter
	// Def returns the converter's configuration definition.
	Def func() *configdef.Def
}

// ErrUnknownClass is returned for a class name that is not a known converter.
var ErrUnknownClass = errors.New("unknown converter class")

// Builtins lists the built-in converter classes.
func Builtins() []Info {
	return []Info{
		{
			Class: ByteArrayClass, Aliases: []string{"ByteArrayConverter", "ByteArray"},
			Summary: "Passes record keys and values through as raw bytes.",
			Header:  true, Record: true,
			New: func() Converter { return &ByteArrayConverter{} },
			Def: converterTypeDef,
		},
		{
			Class: StringClass, Aliases: []string{"StringConverter", "String"},
			Summary: "Converts strings to and from bytes in a configurable character set.",
			Header:  true, Record: true,
			New: func() Converter { return &StringConverter{} },
			Def: stringDef,
		},
		{
			Class: JSONClass, Aliases: []string{"JsonConverter", "Json"},
			Summary: "Kafka Connect's JSON format, optionally with the schema/payload envelope.",
			Header:  true, Record: true,
			New: func() Converter { return &JSONConverter{} },
			Def: jsonDef,
		},
		{
			Class: SimpleHeaderClass, Aliases: []string{"SimpleHeaderConverter", "SimpleHeader"},
			Summary: "Kafka's default header converter; headers stay raw bytes in connectd.",
			Header:  true,
			Def:     configdef.New,
		},
	}
}

// Set is the converter classes a worker or plugin process knows: the
// built-ins plus extra classes it was built with (such as the Schema
// Registry converters, which need cgo and so are not built in). A nil *Set
// is the built-ins alone. Sets are passed explicitly (chain, connconfig,
// herder, plugin serve options); there is no global registry to add to.
type Set struct {
	extra []Info
}

// NewSet returns the built-ins plus extra. A class in extra that has the
// name of a built-in replaces it.
func NewSet(extra ...Info) *Set {
	return &Set{extra: append([]Info(nil), extra...)}
}

// With returns a set with more classes added.
func (s *Set) With(extra ...Info) *Set {
	return NewSet(append(s.Extra(), extra...)...)
}

// Extra returns the classes added to the built-ins.
func (s *Set) Extra() []Info {
	if s == nil {
		return nil
	}
	return append([]Info(nil), s.extra...)
}

// Infos lists every class of the set: the built-ins, then the extras.
func (s *Set) Infos() []Info {
	out := Builtins()
	if s == nil {
		return out
	}
	for _, e := range s.extra {
		replaced := false
		for i := range out {
			if out[i].Class == e.Class {
				out[i], replaced = e, true
			}
		}
		if !replaced {
			out = append(out, e)
		}
	}
	return out
}

// Lookup finds a converter class by fully-qualified name or alias.
func (s *Set) Lookup(class string) (Info, bool) {
	class = strings.TrimSpace(class)
	infos := s.Infos()
	for _, info := range infos {
		if info.Class == class {
			return info, true
		}
	}
	for _, info := range infos {
		for _, a := range info.Aliases {
			if a == class {
				return info, true
			}
		}
	}
	return Info{}, false
}

// KnownClasses lists the record (header=false) or header converter classes.
func (s *Set) KnownClasses(header bool) []string {
	var out []string
	for _, info := range s.Infos() {
		if (header && info.Header) || (!header && info.Record) {
			out = append(out, info.Class)
		}
	}
	return out
}

// New returns the converter class configured with props.
func (s *Set) New(class string, props map[string]string, isKey bool) (Converter, error) {
	info, ok := s.Lookup(class)
	if !ok || !info.Record {
		return nil, fmt.Errorf("%w %q; known converters: %s", ErrUnknownClass, class, strings.Join(s.KnownClasses(false), ", "))
	}
	c := info.New()
	if err := c.Configure(props, isKey); err != nil {
		return nil, err
	}
	return c, nil
}

// Lookup finds a built-in converter class by fully-qualified name or alias.
func Lookup(class string) (Info, bool) { return (*Set)(nil).Lookup(class) }

// KnownClasses lists the built-in record or header converter classes.
func KnownClasses(header bool) []string { return (*Set)(nil).KnownClasses(header) }

// New returns the built-in converter class configured with props.
func New(class string, props map[string]string, isKey bool) (Converter, error) {
	return (*Set)(nil).New(class, props, isKey)
}

// converterTypeDef is Kafka's ConverterConfig.newConfigDef().
func converterTypeDef() *configdef.Def {
	return configdef.New().Define(configdef.Key{
		Name: TypeConfig, Type: configdef.String, Required: true,
		Validator:     configdef.OneOf("key", "value", "header"),
		Importance:    configdef.Low,
		Documentation: "How this converter will be used.",
	})
}

// parseConfig parses a converter's settings with its role filled in.
func parseConfig(def *configdef.Def, props map[string]string, isKey bool) (*configdef.Values, error) {
	p := make(map[string]string, len(props)+1)
	for k, v := range props {
		p[k] = v
	}
	if _, ok := p[TypeConfig]; !ok {
		if isKey {
			p[TypeConfig] = "key"
		} else {
			p[TypeConfig] = "value"
		}
	}
	return def.Parse(p)
}

// dataError is a conversion failure of one value.
func dataError(format string, args ...any) error {
	return &data.Error{Msg: fmt.Sprintf(format, args...)}
}
