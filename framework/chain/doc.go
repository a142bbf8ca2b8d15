// Package chain builds a connector's record-processing chain — key, value
// and header converters plus transforms with their predicates — from its
// configuration, and applies it to one record at a time inside the plugin
// process, where converters and transforms run (so per-record CPU work
// stays isolated per connector and bytes cross the process boundary once).
//
// Source side: Source.Apply runs the transforms on the connector's
// SourceRecord, then the converters, and yields a Raw record of bytes for
// the host to produce. Sink side: Sink.Apply runs the converters on the raw
// consumed record, then the transforms, and yields the SinkRecord for the
// connector. A record that a transform filters out comes back with
// keep=false; a record that fails comes back with a *Failure naming the
// stage (KEY_CONVERTER, VALUE_CONVERTER, HEADER_CONVERTER,
// TRANSFORMATION) and the class that failed, for errors.tolerance and the
// dead-letter queue.
//
// Converters are chosen as Kafka Connect does: the connector config's
// key.converter / value.converter / header.converter with their own
// "<key>.converter.*" settings, otherwise the worker's (Defaults) with the
// worker's settings; connector-level sub-keys are ignored when the class
// comes from the worker. A source connector whose spec declares RawBytes
// gets ByteArrayConverter instead of the worker's key and value defaults
// (Defaults.For), so its bytes reach Kafka unchanged. header.converter defaults to Kafka's
// SimpleHeaderConverter. Headers stay raw bytes (the SDK exposes them as
// bytes), so no header conversion happens and HEADER_CONVERTER never fails.
//
// The ByteArrayConverter path without transforms does not allocate on the
// source side; on the sink side the only allocations are boxing the key and
// value slices into the SinkRecord's interface fields.
//
// A Source or Sink is not safe for concurrent use: build one per task.
//
// What this package must not do: validate whole connector configs for the
// REST API (framework/connconfig does), or talk to Kafka or the plugin
// boundary; it only transforms records in memory.
package chain
