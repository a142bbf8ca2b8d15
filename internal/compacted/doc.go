// Package compacted owns reading a compacted Kafka topic: from the
// beginning to the end offsets the topic has when a caller asks (the "read
// to end" barrier that read-your-writes, start-up and health checks rely
// on), and then following it, delivering every record in order per
// partition, tombstones included, to one handler on one goroutine.
//
// It is the one place that sets up a consumer for connectd's internal
// topics (the config, status and offsets topics): manual assignment of
// every partition from the beginning, isolation.level=read_committed (so
// records of aborted transactions are never delivered), no group
// membership and no committed offsets. A Reader also watches its own
// progress and replaces a consumer that stopped fetching (librdkafka's
// consumer of manually assigned partitions can stay connected yet never
// fetch again after a broker restart), resuming where the old one was.
//
// Where a partition ends is asked of another connection than the reader's
// consumer (a writer's producer, or for a one-shot Read an admin client on
// the reader's own), either as the high watermark (HighWatermark: every
// record written before the call, waiting for transactions open at the
// call to end) or as the last stable offset (LastStable: what a
// read_committed reader can reach now, not waiting for open
// transactions). A partition counts as read to its end when the position
// the consumer reached passes that offset, which also moves over
// transaction markers and aborted records that are never delivered.
//
// What this package must not do: interpret record keys or values (the
// stores built on it do), write to the topic, join a consumer group or
// commit offsets, or create topics.
package compacted
