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
// On Linux with cgo the package defines poll for the whole executable,
// which the linker prefers to the C library's for the statically linked
// librdkafka (confluent-kafka-go's bundled build); the Go runtime does not
// call the C library's poll. Such a definition cannot be limited to
// librdkafka's broker threads: it also serves the OpenSSL, SASL and curl
// code bundled with librdkafka and anything else in the process that calls
// poll, which is why the rule below changes nothing but zero-timeout calls
// that keep finding nothing. No librdkafka setting avoids the spinning
// (linger.ms and transaction length do not; docs/librdkafka-notes.md).
//
// The replacement is plain ppoll(2) (what glibc's own poll does on
// architectures without a poll system call) until the process calls
// SetWaitMillis: the worker does at start-up, from its property
// rdkafka.busy.poll.wait.ms. With a wait set, it counts, per thread, the
// zero-timeout calls in a row that found no event: from the third one on,
// the call waits up to that many milliseconds instead. A socket or wake-up
// event still ends the wait at once, so a thread that spins waiting for a
// response now sleeps until it arrives; the only delay added is up to the
// wait to a timer of librdkafka's own that falls due while it waits. Calls
// with a timeout, and zero-timeout calls that find an event, are passed
// through unchanged and reset the count.
//
// It owns only this; it must not change librdkafka's configuration or any
// other system call. Without cgo, or off Linux, it does nothing.
package brokerpoll

// MaxWaitMillis is the longest wait SetWaitMillis accepts: a librdkafka
// timer can be late by up to the wait.
const MaxWaitMillis = 10
