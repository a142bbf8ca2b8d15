// Package kafka is the KafkaReplicationSource connector: an exactly-once
// Kafka→Kafka replicator in the spirit of MirrorMaker 2's
// MirrorSourceConnector, written against connectd's connector SDK and run as
// a plugin process (cmd/connectd-kafka-replication).
//
// # What it does
//
// The connector reads topics of a source cluster (named by topics or
// matched by topics.regex) and returns their records, byte for byte, as
// source records for target topics named by target.topic.format or, as in
// MM2, by a replication policy (replication.policy.class, package
// replpolicy), which also keeps active/active pairs from replicating a
// topic back to the cluster it came from. The records are raw bytes
// (sdk.Spec.RawBytes), so the worker's default converters never touch
// them. The worker writes them and the source offsets in one transaction; the
// upstream consumer reads with isolation.level=read_committed, so records
// of aborted upstream transactions are never copied.
//
// Each source partition {cluster, topic, partition} is owned by exactly one
// task. Its source offset {offset} is the offset of the last record copied;
// a task resumes right after the offset the framework committed and never
// trusts positions stored in upstream consumer groups.
//
// # Who creates target topics
//
// The connector does, through its own admin client on
// target.bootstrap.servers. The framework's topic creation (Kafka's
// topic.creation.* keys) gives every new topic the same partition count,
// but partition.mapping=preserve needs each target topic to have at least
// the partition count of its source topic, and added source partitions must
// be mirrored before any task writes to them. Only the connector knows both
// sides, so it creates missing target topics with the source's partition
// count, grows targets it has seen together with their sources, and refuses
// (with a clear trace) a pre-existing target topic that has fewer
// partitions than its source. With sync.topic.configs.enabled it also
// copies the source topics' explicit configs to their targets
// (topicconfig.go).
//
// # What it must not do
//
// It owns no transactions and no offset storage (the worker does), never
// commits consumer-group offsets upstream, and never writes to the source
// cluster.
package kafka
