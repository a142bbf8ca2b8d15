package convert

import (
	"github.com/connectd/connectd/framework/data"
)

// ByteArrayConverter passes bytes through unchanged (Kafka's
// org.apache.kafka.connect.converters.ByteArrayConverter). It neither
// copies nor allocates.
type ByteArrayConverter struct {
	schema *data.Schema // optional bytes, shared by all records of this converter
}

// Configure implements Converter.
func (c *ByteArrayConverter) Configure(props map[string]string, isKey bool) error {
	if _, err := parseConfig(converterTypeDef(), props, isKey); err != nil {
		return err
	}
	c.schema = data.OptionalSchema(data.Bytes)
	return nil
}

// FromConnect accepts []byte (or nil) with a nil or BYTES schema.
func (c *ByteArrayConverter) FromConnect(_ string, schema *data.Schema, value any) ([]byte, error) {
	if schema != nil && schema.Type != data.Bytes {
		return nil, dataError("Invalid schema type for ByteArrayConverter: %s", schema.Type.KafkaName())
	}
	switch v := value.(type) {
	case nil:
		return nil, nil
	case []byte:
		return v, nil
	}
	return nil, dataError("ByteArrayConverter is not compatible with objects of type %T", value)
}

// ToConnect returns the bytes with an optional BYTES schema.
func (c *ByteArrayConverter) ToConnect(_ string, b []byte) (*data.Schema, any, error) {
	if c.schema == nil {
		c.schema = data.OptionalSchema(data.Bytes)
	}
	if b == nil {
		return c.schema, nil, nil
	}
	return c.schema, b, nil
}
