// Package brokerpoll stops librdkafka's broker threads from busy-polling
// while they wait for a response.
//
// A librdkafka broker thread waits for its socket with poll(2), with a
// timeout that says when it next has work of its own. An idempotent (and so
// every transactional) producer lets a partition have only one produce
// request in flight, but when the partition's next batch is ready by
// linger.ms (or because a commit flushes) it still asks to be woken at once:
// the thread then calls poll with a zero timeout, finds nothing, and calls it
// again, tens of thousands of times a second, until the broker answers
// (librdkafka 2.11.1, rdkafka_broker.c, rd_kafka_toppar_producer_serve: the
// in-flight limit counts messages against a limit meant for requests). On a
// busy broker that answer can take hundreds of milliseconds, and the spinning
// threads take CPU from the processes doing the work, the broker among them.
// In the replication benchmark the worker's six producer threads made about
// 100 000 such calls a second and used a third of a core doing it.
//
// Importing the package (on Linux, with cgo) replaces poll for the whole
// process with a version that counts, per thread, the zero-timeout calls in a
// row that found no event: from the third one on, the call waits up to
// NapMillis milliseconds instead. A socket or wake-up event still ends the
// wait at once, so a thread that spins waiting for a response now sleeps
// until it arrives; the only delay added is up to NapMillis to a timer of
// librdkafka's own that falls due while it waits. Calls with a timeout, and
// zero-timeout calls that find an event, are passed through unchanged and
// reset the count. poll is served by ppoll(2), which is what glibc's own poll
// does on architectures without a poll system call.
//
// The replacement is a definition of poll in the executable, which the
// linker prefers to the C library's for the statically linked librdkafka
// (confluent-kafka-go's bundled build); the Go runtime does not call the C
// library's poll. CONNECTD_RDKAFKA_POLL_NAP_MS in the environment, read once
// at load time, sets the wait (0 turns the replacement into a plain poll;
// values above 10 are taken as 10).
//
// It owns only this; it must not change librdkafka's configuration or any
// other system call. Without cgo, or off Linux, it does nothing.
package brokerpoll

// EnvVar is the environment variable that sets the wait in milliseconds
// (0 turns it off).
const EnvVar = "CONNECTD_RDKAFKA_POLL_NAP_MS"

// DefaultNapMillis is the wait when EnvVar is not set.
const DefaultNapMillis = 1
