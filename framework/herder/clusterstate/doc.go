// Package clusterstate is the config-topic state machine of a connectd
// cluster: the records Kafka Connect's KafkaConfigBackingStore writes
// (connector-*, task-*, commit-*, target-state-*, tasks-fencing-*,
// restart-connector-*, logger-cluster-*, session-key), connectd's own
// connectd-assignment record, how each is encoded, and the immutable
// Snapshot that folding them in offset order produces.
//
// A Snapshot is built by applying records one at a time (Apply, on a
// private Clone); once published it is never modified, so any number of
// readers may share it without locks. Records that do not decode are
// logged and skipped, as Kafka Connect does: one bad record must not stop
// the cluster.
//
// What this package must not do: talk to Kafka, decide anything (which
// worker runs what is framework/herder/assignment's, who may write what is
// the herder's), or keep state outside a Snapshot. The status topic's
// records are the herder's status store's.
package clusterstate
