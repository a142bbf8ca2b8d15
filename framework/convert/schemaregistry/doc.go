// Package schemaregistry holds the Schema Registry converters under Kafka
// Connect's class names: io.confluent.connect.avro.AvroConverter,
// io.confluent.connect.protobuf.ProtobufConverter and
// io.confluent.connect.json.JsonSchemaConverter. They frame every key or
// value in the Confluent wire format (magic byte 0, the 4-byte schema id,
// for Protobuf the message indexes) and register or look up schemas in a Confluent-compatible registry,
// through confluent-kafka-go's schemaregistry client and serde packages:
// this package maps framework/data schemas and values to and from what
// those serializers take, and never encodes the wire format by hand.
//
// The package is optional and uses cgo (confluent-kafka-go does), so the
// plugin SDK (CGO_ENABLED=0) must not import it. A plugin or worker makes
// the classes known by passing Infos() into a convert.Set.
//
// Errors: a payload that is not in the wire format, names a schema id the
// registry does not know, or does not decode is a *data.Error, which the
// framework's error handling treats like any conversion failure
// (errors.tolerance, dead-letter queue). A registry that cannot be reached
// is a RetriableError naming the URL; a registry that refuses the
// credentials (401/403) is a plain error that fails the task.
//
// What this package must not do: decide which converter a connector uses,
// touch Kafka, or keep package-level mutable state.
package schemaregistry
