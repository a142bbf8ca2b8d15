// Package kafkalog routes librdkafka's own log lines (connection failures,
// broker state changes, with debug the protocol trace) through log/slog,
// so that a worker has one log stream in one format: without it librdkafka
// writes them raw to stderr ("%3|1700000000.123|FAIL|rdkafka#producer-1|
// ..."), which breaks log.format=json.
//
// Every Kafka client a worker creates goes through NewProducer,
// NewConsumer or NewAdmin (or, for a client created elsewhere, Enable and
// Forward). Each record is logged on the caller's logger, so it carries
// the caller's attributes (the connector and task of a task's clients),
// plus client (librdkafka's instance name, which starts with client.id)
// and rdkafka_tag (librdkafka's facility, such as FAIL or BRKMAIN). The
// syslog levels librdkafka uses map to slog levels: 0-3 ERROR, 4 WARN,
// 5-6 INFO, 7 DEBUG.
//
// The goroutine that forwards a client's lines ends when the client is
// closed: confluent-kafka-go closes the channel it created in Close.
//
// What this package must not do: decide which clients exist or what they
// are configured with, beyond the log routing itself.
package kafkalog
