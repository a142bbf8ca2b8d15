// Package data is Kafka Connect's data model in Go: schemas (primitive,
// array, map, struct and the logical types Decimal, Date, Time, Timestamp)
// and Struct values, which converters produce and transforms rewrite.
//
// Schemaless data uses plain Go values: nil, bool, int8..int64, float32,
// float64, string, []byte, []any and map[string]any.
//
// What this package must not do: serialize. Turning values into bytes is
// the converters' job (framework/convert).
package data
