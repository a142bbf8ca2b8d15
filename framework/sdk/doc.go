// Package sdk is the connector author's API: the interfaces a connector
// implements (Connector, SourceConnector, SinkConnector, SourceTask,
// SinkTask), the records they exchange with the framework, and the contexts
// through which tasks talk back to it.
//
// A connector author writes a Go type that implements SourceConnector or
// SinkConnector and a main function that calls plugins.Serve with its
// constructor. The framework does everything else: it runs the connector
// in a plugin process (shared by the plugin's connectors on a worker, so
// Serve makes an instance per connector, task and validation),
// converts records with the configured converters, applies transforms, owns
// Kafka, offsets and transactions, and routes failed records to the
// dead-letter queue.
//
// What this package must not do: it has no Kafka client, no gRPC and no
// knowledge of how it is hosted. Those belong to plugins/ (the process
// boundary) and framework/worker (the runtime). Keeping the SDK free of them
// lets the same connector run in-process in benchmarks and out-of-process in
// production.
//
// # Delivery contract
//
// Source tasks return records from Poll, each carrying its source partition
// and source offset. The framework writes records and offsets durably (in
// one Kafka transaction when exactly-once support is enabled) and only then
// calls Commit with the offsets that are now safe. A task must not advance
// any upstream position (acknowledge a queue, delete a file, move a
// replication slot) before Commit says so: a crash before that point replays
// from the last committed offsets.
//
// Sink tasks receive records through Put. Flush returns, per topic
// partition, the next offset whose predecessors are durably applied; the
// framework commits exactly those consumer offsets. After a crash records
// after the last commit are delivered again, so sinks that must not apply a
// record twice make their writes idempotent (the Aerospike sink stores the
// applied Kafka position inside each record).
package sdk
