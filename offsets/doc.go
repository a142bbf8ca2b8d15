// Package offsets owns where connectors' positions are stored.
//
// Source offsets live on a compacted Kafka topic in Kafka Connect's record
// format: the key is the JSON array ["<connector>",{<source partition>}],
// the value is the JSON offset object, and a null value (tombstone) removes
// the partition. The worker's exactly-once source runner produces offset
// records with the task's own transactional producer (Message builds them),
// so records and offsets commit atomically. Store reads them back with
// isolation.level=read_committed (with internal/compacted, to the high
// watermarks as of the read) and implements the get, alter and reset
// operations behind the REST offsets endpoints. A Follower (Store.Follow)
// keeps following the topic with one consumer and answers the same reads
// from memory once it has read to the end: a worker's source tasks read
// their offsets from it when they start, so a thousand starting tasks do
// not each read the whole topic.
//
// Sink offsets are not stored here: they are the committed offsets of the
// consumer group connect-<connector> (SinkGroup), read and changed through
// the admin client by the Sink* functions.
//
// Offsets topics must be compacted and keep their partition count: a
// changed count moves keys to other partitions, and reading the topic back
// could then apply an old offset after a newer one. VerifyTopic refuses
// such topics with a message saying what to change.
//
// What this package must not do: decide when offsets are written (the task
// runners in framework/worker do), run transactions for task output, or
// create topics on its own initiative; CreateTopic exists for the code that
// bootstraps a cluster's internal topics.
package offsets
