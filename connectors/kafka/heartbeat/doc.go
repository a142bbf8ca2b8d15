// Package heartbeat is the KafkaHeartbeatSource connector, connectd's
// MirrorMaker 2 MirrorHeartbeatConnector: it writes a heartbeat record
// (MM2's format, connectors/kafka/mirrorformat) every
// emit.heartbeats.interval.seconds to the heartbeats topic of the cluster
// the worker writes to.
//
// Heartbeats are how MM2 tooling sees a replication flow alive: replicated
// by KafkaReplicationSource (or MM2) they arrive downstream as
// <source alias>.heartbeats, so a monitor on the target reads how old the
// newest heartbeat from each upstream cluster is, and MM2's
// RemoteClusterUtils.upstreamClusters finds the clusters that replicate
// into this one from those topic names.
//
// The connector creates the heartbeats topic on the target (one partition,
// compacted, heartbeats.topic.replication.factor), as MM2 does; the task
// sleeps on a timer between beats.
//
// What it must not do: read or write any other cluster than the target,
// keep state outside the framework's offsets, or busy-poll between beats.
package heartbeat
