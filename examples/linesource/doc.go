// Package linesource is LinesSource, the worked example of
// docs/writing-a-connector.md: a source connector that turns every line of
// some text files into a Kafka record — exactly once, and following the
// files as they grow (like tail -F without rotation).
//
// Each file is one source partition, {"file": "<path>"}; its offset is the
// number of lines already turned into records, {"line": <n>}. The
// framework stores offsets in Kafka (in the same transaction as the
// records when exactly-once support is on), so a restarted task skips
// exactly the lines that were committed. Files are split between tasks
// round-robin; a file is read by one task only, which exactly-once needs.
//
// What this package must not do: keep positions of its own (the framework
// owns them), or read a partial last line (a line counts once its newline
// is written).
package linesource
