package data

import (
	"fmt"
	"time"
)

// Error is a value that does not fit its schema, or misuse of the data
// API (Kafka's DataException).
type Error struct{ Msg string }

func (e *Error) Error() string { return e.Msg }

// Validate checks that value fits schema (Kafka's
// ConnectSchema.validateValue): nil only for optional schemas; the Go type
// must be the one the schema type maps to; arrays, maps and structs are
// checked recursively.
//
// Go types by schema type: int8, int16, int32, int64, float32 (float),
// float64 (double), bool, string, []byte, []any (array), map[string]any
// (map with string keys) or map[any]any (any map), *StructValue (struct,
// with an equal schema). Logical types: Decimal for Decimal, time.Time for
// Date, Time and Timestamp.
func Validate(value any, schema *Schema) error { return validateAt(schema, value, "value") }

func validateAt(schema *Schema, value any, location string) error {
	if schema == nil {
		return &Error{Msg: "No schema defined for " + location}
	}
	if value == nil {
		if !schema.Optional {
			return &Error{Msg: "Invalid value: null used for required " + location + ", schema type: " + schema.Type.KafkaName()}
		}
		return nil
	}
	if !typeMatches(schema, value) {
		msg := "Invalid Go value for schema"
		if schema.Name != "" {
			msg += ` "` + schema.Name + `"`
		}
		return &Error{Msg: fmt.Sprintf("%s with type %s: %T for %s", msg, schema.Type.KafkaName(), value, location)}
	}
	switch schema.Type {
	case Struct:
		st := value.(*StructValue)
		if !st.schema.Equal(schema) {
			return &Error{Msg: "Struct schemas do not match."}
		}
		return st.Validate()
	case Array:
		loc := "element of array " + location
		for _, e := range value.([]any) {
			if err := validateAt(schema.Value, e, loc); err != nil {
				return err
			}
		}
	case Map:
		kloc, vloc := "key of map "+location, "value of map "+location
		switch m := value.(type) {
		case map[string]any:
			if schema.Key == nil || schema.Key.Type != String {
				return &Error{Msg: fmt.Sprintf("Invalid Go value for map with key type %s: map[string]any for %s", keyType(schema), location)}
			}
			for _, v := range m {
				if err := validateAt(schema.Value, v, vloc); err != nil {
					return err
				}
			}
		case map[any]any:
			for k, v := range m {
				if err := validateAt(schema.Key, k, kloc); err != nil {
					return err
				}
				if err := validateAt(schema.Value, v, vloc); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func keyType(s *Schema) string {
	if s.Key == nil {
		return "null"
	}
	return s.Key.Type.KafkaName()
}

func typeMatches(schema *Schema, value any) bool {
	switch schema.Name {
	case DecimalName:
		_, ok := value.(Decimal)
		return ok
	case DateName, TimeName, TimestampName:
		_, ok := value.(time.Time)
		return ok
	}
	switch schema.Type {
	case Int8:
		_, ok := value.(int8)
		return ok
	case Int16:
		_, ok := value.(int16)
		return ok
	case Int32:
		_, ok := value.(int32)
		return ok
	case Int64:
		_, ok := value.(int64)
		return ok
	case Float32:
		_, ok := value.(float32)
		return ok
	case Float64:
		_, ok := value.(float64)
		return ok
	case Boolean:
		_, ok := value.(bool)
		return ok
	case String:
		_, ok := value.(string)
		return ok
	case Bytes:
		_, ok := value.([]byte)
		return ok
	case Array:
		_, ok := value.([]any)
		return ok
	case Map:
		switch value.(type) {
		case map[string]any, map[any]any:
			return true
		}
	case Struct:
		_, ok := value.(*StructValue)
		return ok
	}
	return false
}

// InferType returns the schema type of a schemaless value (Kafka's
// ConnectSchema.schemaType), or false for Go types Connect has no type for.
// Plain int and uint types are not Connect types.
func InferType(v any) (Type, bool) {
	switch v.(type) {
	case int8:
		return Int8, true
	case int16:
		return Int16, true
	case int32:
		return Int32, true
	case int64:
		return Int64, true
	case float32:
		return Float32, true
	case float64:
		return Float64, true
	case bool:
		return Boolean, true
	case string:
		return String, true
	case []byte:
		return Bytes, true
	case []any:
		return Array, true
	case map[string]any, map[any]any:
		return Map, true
	case *StructValue:
		return Struct, true
	}
	return "", false
}
