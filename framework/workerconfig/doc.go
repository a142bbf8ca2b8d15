// Package workerconfig reads worker.properties: Kafka Connect's
// distributed-mode keys (bootstrap.servers, group.id, the internal topics,
// listeners, exactly.once.source.support, session.timeout.ms, ...), the
// config.providers placeholders (${env:VAR}, ${file:path:key}), the
// pass-through client settings (producer.*, consumer.*, admin.* for the
// connectors' clients; security.protocol, ssl.*, sasl.* ... for the
// worker's own clients), and connectd's own keys (automatic task restart
// backoff, plugin process limits, log.format, log.level).
//
// Every key is declared with configdef (Def), so the reference docs can be
// generated from the same definitions that parse the file. Parse turns the
// properties into framework/worker's and framework/herder's configs: an
// invalid value is an error naming the key; a key nobody knows is listed
// in Config.Unknown, and Config.UnknownKeys gives the daemon each with the
// nearest known key to warn about, or an error for a typo of a key whose
// default would silently weaken a guarantee or security.
//
// What this package must not do: open network connections other than the
// in-process validation of client settings by librdkafka, start anything,
// or know how the REST server reads its keys (framework/rest parses those
// from Config.Props).
package workerconfig
