// Package javafmt reproduces the textual forms Kafka Connect gets from the
// JVM, so that connectd renders values the way Kafka Connect users and tools
// expect: Double.toString / Float.toString for numbers (REST config values,
// JSON converter output, Cast to string) and a subset of
// java.text.SimpleDateFormat for TimestampRouter's timestamp.format.
//
// What this package must not do: parse configuration or know about records.
// It only formats.
package javafmt
