package data

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

// Schema describes a value. Logical types (Decimal, Date, Time, Timestamp)
// are a primitive Type plus a Name such as "org.apache.kafka.connect.data.Date".
type Schema struct {
	Type       Type
	Optional   bool
	Default    any
	Name       string
	Version    int
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
