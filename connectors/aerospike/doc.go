// Package aerospike is the AerospikeSink connector: it writes Kafka records
// to Aerospike effectively once.
//
// # The protocol
//
// Every record the sink writes holds a positions bin: a map from
// "<topic>-<partition>" (the partition the Kafka record was consumed from)
// to the last offset applied to that Aerospike record. For each Put batch
// the task
//
//  1. maps every Kafka record to an Aerospike key and bins (a record that
//     cannot be mapped is reported to the framework);
//  2. groups the records by key, keeping batch order, which for one
//     partition is offset order;
//  3. reads generation and positions bin of all keys in one batch read;
//  4. drops every record whose offset is at or below the stored position of
//     its partition (a replay, or a zombie task's duplicate) and folds the
//     rest of a key's records into one write (in the list and map modes
//     the records keep their own list and map operations, in order);
//  5. writes the keys in BatchOperate commands of at most batch.max.keys
//     keys and batch.max.bytes estimated bytes: an existing record only if its
//     generation is still the one read (EXPECT_GEN_EQUAL), with the new
//     positions merged into the positions bin in the same operation; an
//     absent record only if it is still absent (CREATE_ONLY);
//  6. re-reads and retries keys that lost a generation check or an
//     exists check, and keys that failed transiently (bounded, with
//     backoff); reports records the server rejects for good, with the
//     result code, after isolating them from the rest of their key's run.
//
// The bin operations of a write ride on that one generation-checked
// operate, so write modes that are not idempotent by nature (increment,
// list_append, map_increment) are applied once per Kafka record too.
//
// A tombstone replaces the record's bins with the positions bin alone,
// instead of deleting the record, so an older write replayed later is
// still recognised as applied. tombstone.behavior=delete deletes the record
// (generation-checked) and gives that up: the positions go with it.
//
// Put is synchronous: when it returns nil, every record of the batch is
// applied, known to be applied already, or reported. Flush therefore hands
// back the offsets the framework asked for, capped at what successful Puts
// covered.
//
// # What it must not do
//
// It must not own Kafka, offsets, retries of whole batches or dead-letter
// routing (the framework's), and it must not write without the generation
// check while effectively.once is on: that check is the only thing that
// makes two writers of one partition safe.
package aerospike
