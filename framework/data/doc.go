// Package data is Kafka Connect's data model in Go: schemas (primitive,
// array, map, struct and the logical types Decimal, Date, Time, Timestamp),
// struct values, validation of a value against its schema, and equality.
//
// Go representation of values, by schema type: int8, int16, int32, int64,
// float32 ("float"), float64 ("double"), bool, string, []byte, []any
// (array), map[string]any (maps with string keys) or map[any]any (other
// keys), *StructValue (struct). Logical types: Decimal (an arbitrary
// precision decimal with a scale) for Decimal, time.Time for Date, Time and
// Timestamp. Schemaless data uses the same Go types without a schema.
//
// The struct value type is StructValue (not Struct) because Struct is the
// schema Type constant.
//
// Schemas are shared by many records and goroutines: once built, a *Schema
// is treated as immutable by everything in connectd.
//
// What this package must not do: serialize. Turning values into bytes is
// the converters' job (framework/convert).
package data
