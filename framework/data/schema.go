package data

import (
	"fmt"
	"maps"
	"strings"
)

// Type is a schema type, named as in Kafka Connect's JSON schema envelope.
type Type string

const (
	Int8    Type = "int8"
	Int16   Type = "int16"
	Int32   Type = "int32"
	Int64   Type = "int64"
	Float32 Type = "float"
	Float64 Type = "double"
	Boolean Type = "boolean"
	String  Type = "string"
	Bytes   Type = "bytes"
	Array   Type = "array"
	Map     Type = "map"
	Struct  Type = "struct"
)

// KafkaName is the type's name in Kafka's Schema.Type enum (INT32,
// FLOAT64, ...), as Kafka's messages and the Cast transform's spec use it.
func (t Type) KafkaName() string {
	switch t {
	case Float32:
		return "FLOAT32"
	case Float64:
		return "FLOAT64"
	}
	return strings.ToUpper(string(t))
}

// TypeFromKafkaName maps INT32, float64, ... (any case) to a Type.
func TypeFromKafkaName(name string) (Type, bool) {
	switch strings.ToUpper(name) {
	case "INT8":
		return Int8, true
	case "INT16":
		return Int16, true
	case "INT32":
		return Int32, true
	case "INT64":
		return Int64, true
	case "FLOAT32":
		return Float32, true
	case "FLOAT64":
		return Float64, true
	case "BOOLEAN":
		return Boolean, true
	case "STRING":
		return String, true
	case "BYTES":
		return Bytes, true
	case "ARRAY":
		return Array, true
	case "MAP":
		return Map, true
	case "STRUCT":
		return Struct, true
	}
	return "", false
}

// IsPrimitive reports whether t is neither array, map nor struct.
func (t Type) IsPrimitive() bool {
	switch t {
	case Array, Map, Struct:
		return false
	}
	return true
}

// Schema describes a value. Logical types (Decimal, Date, Time, Timestamp)
// are a primitive Type plus a Name such as "org.apache.kafka.connect.data.Date".
//
// Schemas are shared between records and goroutines: treat a *Schema as
// immutable once built. Build them with Build, ArrayOf, MapOf or the logical
// type builders.
type Schema struct {
	Type       Type
	Optional   bool
	Default    any
	Name       string
	Version    int // 0 = no version
	Doc        string
	Parameters map[string]string

	Fields []Field // Struct only, in order
	Key    *Schema // Map only
	Value  *Schema // Map values and Array elements
}

// Field is one field of a struct schema.
type Field struct {
	Name   string
	Index  int
	Schema *Schema
}

// Field returns the field called name.
func (s *Schema) Field(name string) (Field, bool) {
	for _, f := range s.Fields {
		if f.Name == name {
			return f, true
		}
	}
	return Field{}, false
}

// String renders the schema as Kafka does in messages: "Schema{STRUCT}" or
// "Schema{org.apache.kafka.connect.data.Date:INT32}".
func (s *Schema) String() string {
	if s == nil {
		return "Schema{null}"
	}
	if s.Name != "" {
		return "Schema{" + s.Name + ":" + s.Type.KafkaName() + "}"
	}
	return "Schema{" + s.Type.KafkaName() + "}"
}

// Equal reports whether two schemas are the same in every attribute,
// recursively. Nil and empty Parameters are equal.
func (s *Schema) Equal(o *Schema) bool {
	if s == o {
		return true
	}
	if s == nil || o == nil {
		return false
	}
	if s.Type != o.Type || s.Optional != o.Optional || s.Name != o.Name || s.Version != o.Version ||
		s.Doc != o.Doc || len(s.Fields) != len(o.Fields) || !maps.Equal(s.Parameters, o.Parameters) ||
		!ValueEqual(s.Default, o.Default) || !s.Key.Equal(o.Key) || !s.Value.Equal(o.Value) {
		return false
	}
	for i := range s.Fields {
		a, b := s.Fields[i], o.Fields[i]
		if a.Name != b.Name || a.Index != b.Index || !a.Schema.Equal(b.Schema) {
			return false
		}
	}
	return true
}

// Builder builds a Schema (Kafka's SchemaBuilder). Errors (a duplicate
// field, a default that does not fit) are reported by Schema.
type Builder struct {
	s   Schema
	err error
}

// Build starts a schema of type t. For arrays and maps use ArrayOf and MapOf.
func Build(t Type) *Builder { return &Builder{s: Schema{Type: t}} }

// ArrayOf starts an array schema with elements of elem.
func ArrayOf(elem *Schema) *Builder { return &Builder{s: Schema{Type: Array, Value: elem}} }

// MapOf starts a map schema.
func MapOf(key, value *Schema) *Builder {
	return &Builder{s: Schema{Type: Map, Key: key, Value: value}}
}

// PrimitiveSchema returns a new required schema of primitive type t.
func PrimitiveSchema(t Type) *Schema { return &Schema{Type: t} }

// OptionalSchema returns a new optional schema of primitive type t.
func OptionalSchema(t Type) *Schema { return &Schema{Type: t, Optional: true} }

// Optional makes the schema optional (null allowed).
func (b *Builder) Optional() *Builder { b.s.Optional = true; return b }

// Required makes the schema required (the default).
func (b *Builder) Required() *Builder { b.s.Optional = false; return b }

// Name sets the schema name.
func (b *Builder) Name(n string) *Builder { b.s.Name = n; return b }

// Version sets the schema version.
func (b *Builder) Version(v int) *Builder { b.s.Version = v; return b }

// Doc sets the documentation.
func (b *Builder) Doc(d string) *Builder { b.s.Doc = d; return b }

// Parameter sets one parameter.
func (b *Builder) Parameter(k, v string) *Builder {
	if b.s.Parameters == nil {
		b.s.Parameters = map[string]string{}
	}
	b.s.Parameters[k] = v
	return b
}

// Default sets the default value; it must be valid for the schema.
func (b *Builder) Default(v any) *Builder { b.s.Default = v; return b }

// CopyBasics copies name, version, doc and parameters from src (Kafka's
// SchemaUtil.copySchemaBasics), as transforms do when they derive a schema.
func (b *Builder) CopyBasics(src *Schema) *Builder {
	b.s.Name, b.s.Version, b.s.Doc = src.Name, src.Version, src.Doc
	if src.Parameters != nil {
		b.s.Parameters = maps.Clone(src.Parameters)
	}
	return b
}

// Field appends a struct field.
func (b *Builder) Field(name string, s *Schema) *Builder {
	switch {
	case b.err != nil:
	case b.s.Type != Struct:
		b.err = fmt.Errorf("data: cannot create fields on type %s", b.s.Type.KafkaName())
	case name == "":
		b.err = fmt.Errorf("data: field name cannot be empty")
	case s == nil:
		b.err = fmt.Errorf("data: field schema for field %q cannot be null", name)
	default:
		if _, dup := b.s.Field(name); dup {
			b.err = fmt.Errorf("data: cannot create field because of field name duplication %s", name)
			break
		}
		b.s.Fields = append(b.s.Fields, Field{Name: name, Index: len(b.s.Fields), Schema: s})
	}
	return b
}

// Schema returns the built schema.
func (b *Builder) Schema() (*Schema, error) {
	if b.err != nil {
		return nil, b.err
	}
	s := b.s
	s.Fields = append([]Field(nil), b.s.Fields...)
	switch s.Type {
	case Int8, Int16, Int32, Int64, Float32, Float64, Boolean, String, Bytes, Struct:
	case Array:
		if s.Value == nil {
			return nil, fmt.Errorf("data: array schema needs an element schema")
		}
	case Map:
		if s.Key == nil || s.Value == nil {
			return nil, fmt.Errorf("data: map schema needs key and value schemas")
		}
	default:
		return nil, fmt.Errorf("data: unknown schema type %q", s.Type)
	}
	if s.Default != nil {
		if err := Validate(s.Default, &s); err != nil {
			return nil, fmt.Errorf("data: invalid default value: %w", err)
		}
	}
	return &s, nil
}

// MustSchema is Schema for schemas known to be valid; it panics on error.
func (b *Builder) MustSchema() *Schema {
	s, err := b.Schema()
	if err != nil {
		panic(err)
	}
	return s
}
