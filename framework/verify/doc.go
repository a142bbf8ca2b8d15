// Package verify audits what a pipeline wrote to Kafka: it reads topics as
// a read_committed consumer sees them and checks delivery guarantees.
//
// It offers one check, CompareTopics: every record of a source topic
// appears in a target topic exactly once (by key, value and headers), in
// source order per partition, and nothing else is there. It reports
// duplicates, records lost (missing before the last copied one), records
// not copied yet (a missing tail), unexpected records, reordering and,
// with preserved partition mapping, records that moved partition. It is
// what an exactly-once replication (connectors/kafka) promises.
//
// Checks of what one connector writes (connectors/datagen/datagencheck)
// live with that connector and are built from ReadTopic, Examples and
// WriteExamples here: this package depends on no connector.
//
// Records are kept as 64-bit content hashes with their positions, not as
// bytes, so topics of millions of records fit in a few hundred megabytes.
//
// # What it must not do
//
// It only reads: it never commits consumer offsets (it assigns partitions
// manually), never writes, and does not know about connectors or the
// REST API. Reading a topic that is still being written gives a snapshot
// up to each partition's last stable offset at the time it is reached.
package verify
