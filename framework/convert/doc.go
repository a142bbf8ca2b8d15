// Package convert turns Connect data (framework/data) into the bytes Kafka
// stores and back, with Kafka Connect's built-in converters and their exact
// wire formats: ByteArrayConverter, StringConverter and JsonConverter (with
// and without the {"schema":…,"payload":…} envelope). Classes are resolved
// by Kafka's fully-qualified names or short aliases, so connector configs
// written for Kafka Connect work unchanged.
//
// Converters run inside the plugin process, per record, so they are written
// for the hot path: ByteArrayConverter does not copy or allocate, and
// JsonConverter encodes and decodes with a purpose-built scanner rather than
// reflection.
//
// Header conversion: connectd's SDK hands headers to connectors as raw
// bytes, so header converters are accepted in configs (header.converter,
// including Kafka's default SimpleHeaderConverter) and validated, but no
// per-header conversion happens.
//
// Extra classes: a Set is the built-ins plus classes a binary was built
// with (framework/convert/schemaregistry's, which need cgo); it is passed
// explicitly to chain, connconfig, plugins.Serve and the herder. There is
// no global registry to add classes to.
//
// What this package must not do: decide which converter a connector uses
// (framework/chain reads that from the config) or touch Kafka.
package convert
