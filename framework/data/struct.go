package data

import (
	"fmt"
	"strings"
)

// StructValue is a value of a struct schema (Kafka's Struct): one slot per
// field, checked against the field's schema on Put.
//
// A StructValue is not safe for concurrent mutation; share it read-only.
type StructValue struct {
	schema *Schema
	values []any
}

// NewStruct returns an empty struct of schema s. s must be a struct schema;
// anything else is a programming error and panics.
func NewStruct(s *Schema) *StructValue {
	if s == nil || s.Type != Struct {
		panic(fmt.Sprintf("data: not a struct schema: %s", s))
	}
	return &StructValue{schema: s, values: make([]any, len(s.Fields))}
}

// Schema returns the struct's schema.
func (s *StructValue) Schema() *Schema { return s.schema }

func (s *StructValue) field(name string) (Field, error) {
	f, ok := s.schema.Field(name)
	if !ok {
		return Field{}, &Error{Msg: name + " is not a valid field name"}
	}
	return f, nil
}

// Put sets a field after checking v against the field's schema.
func (s *StructValue) Put(name string, v any) error {
	f, err := s.field(name)
	if err != nil {
		return err
	}
	return s.PutField(f, v)
}

// PutField sets the field f (of this struct's schema) after checking v.
func (s *StructValue) PutField(f Field, v any) error {
	if f.Index < 0 || f.Index >= len(s.values) || s.schema.Fields[f.Index].Name != f.Name {
		return &Error{Msg: f.Name + " is not a valid field name"}
	}
	if err := validateAt(f.Schema, v, `field: "`+f.Name+`"`); err != nil {
		return err
	}
	s.values[f.Index] = v
	return nil
}

// MustPut is Put for values known to be valid; it panics on error. Use it
// in tests and for values the caller constructed from the schema itself.
func (s *StructValue) MustPut(name string, v any) *StructValue {
	if err := s.Put(name, v); err != nil {
		panic(err)
	}
	return s
}

// Get returns a field's value, or the field schema's default when unset.
func (s *StructValue) Get(name string) (any, error) {
	f, err := s.field(name)
	if err != nil {
		return nil, err
	}
	return s.At(f.Index), nil
}

// GetWithoutDefault returns a field's value, nil when unset.
func (s *StructValue) GetWithoutDefault(name string) (any, error) {
	f, err := s.field(name)
	if err != nil {
		return nil, err
	}
	return s.values[f.Index], nil
}

// At returns the value of field i (the default when unset).
func (s *StructValue) At(i int) any {
	v := s.values[i]
	if v == nil {
		return s.schema.Fields[i].Schema.Default
	}
	return v
}

// RawAt returns the value of field i without applying the default.
func (s *StructValue) RawAt(i int) any { return s.values[i] }

// Validate checks that every required field has a value (or a default).
func (s *StructValue) Validate() error {
	for i, f := range s.schema.Fields {
		if err := validateAt(f.Schema, s.At(i), `field: "`+f.Name+`"`); err != nil {
			return err
		}
	}
	return nil
}

// Equal reports whether both structs have equal schemas and values.
func (s *StructValue) Equal(o *StructValue) bool {
	if s == o {
		return true
	}
	if s == nil || o == nil || !s.schema.Equal(o.schema) {
		return false
	}
	for i := range s.values {
		if !ValueEqual(s.values[i], o.values[i]) {
			return false
		}
	}
	return true
}

// String renders the set fields as Kafka does: "Struct{a=1,b=x}".
func (s *StructValue) String() string {
	var b strings.Builder
	b.WriteString("Struct{")
	first := true
	for i, v := range s.values {
		if v == nil {
			continue
		}
		if !first {
			b.WriteByte(',')
		}
		first = false
		b.WriteString(s.schema.Fields[i].Name)
		b.WriteByte('=')
		b.WriteString(ValueString(v))
	}
	b.WriteByte('}')
	return b.String()
}
