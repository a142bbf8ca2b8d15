// Package checkpoint is the KafkaCheckpointSource connector, connectd's
// MirrorMaker 2 MirrorCheckpointConnector: for each consumer group of the
// source cluster it translates the group's committed offsets into offsets of
// the replicas on the target, using the offset syncs that
// KafkaReplicationSource writes, and emits them as MM2 checkpoints to
// <source alias>.checkpoints.internal on the target. With
// sync.group.offsets.enabled it also commits the translated offsets to the
// same group on the target, so that consumers fail over by just pointing at
// the target.
//
// # Guarantees
//
// A translated offset is never beyond the target position of the first
// record the group has not consumed: the syncs are lower bounds of true
// target offsets (see the kafka package's offsetsync.go) and translation
// follows MM2 (the latest sync at or below the committed offset; + 1 when
// the committed offset is past it). A failed-over group therefore re-reads
// some records (about offset.lag.max per partition at most) and loses none.
// Group offsets on the target are only written while the group has no
// members there, and never moved backwards.
//
// A group deleted on the source drops out at the next group refresh: its
// checkpoints stop (the last ones stay in the compacted topic, as with MM2),
// and its target offsets are no longer touched.
//
// # What it must not do
//
// It never writes to the source cluster, never commits offsets of a group
// that is active on the target, and never lowers a target group's offset.
// It runs as one task (group lists are small; tasks.max above 1 is
// accepted and still runs one task).
package checkpoint
