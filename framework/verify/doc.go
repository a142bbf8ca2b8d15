// Package verify audits what a pipeline wrote to Kafka: it reads topics as
// a read_committed consumer sees them and checks delivery guarantees.
//
// Two checks are offered:
//
//   - CompareTopics: every record of a source topic appears in a target
//     topic exactly once (by key, value and headers), in source order per
//     partition, and nothing else is there. It reports duplicates, records
//     lost (missing before the last copied one), records not copied yet (a
//     missing tail), unexpected records, reordering and, with preserved
//     partition mapping, records that moved partition. It is what an
//     exactly-once replication (connectors/kafka) promises.
//   - CheckDatagen: a topic written by DatagenSource's counter quickstart
//     holds each task's sequence exactly once, contiguous from the start,
//     increasing within each partition, with contents that match the
//     deterministic generator (connectors/datagen). It also returns the
//     per-key sums of the amounts, which is what a counting sink
//     (AerospikeSink in increment mode) must end up holding.
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
