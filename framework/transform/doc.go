// Package transform implements Kafka Connect's single message transforms
// (SMTs) and predicates with the same class names, configuration keys and
// semantics as Kafka's built-ins: InsertField, ReplaceField, MaskField,
// ValueToKey, ExtractField, Cast, RegexRouter, TimestampRouter and Filter,
// with the predicates TopicNameMatches, HasHeaderKey and RecordIsTombstone.
// Transforms that act on the key or the value come as $Key and $Value
// classes (org.apache.kafka.connect.transforms.InsertField$Value, or the
// alias InsertField$Value). Both schemaless records (map[string]any) and
// records with schemas (*data.StructValue) are handled, as Kafka does.
//
// FromConfig builds the configured stages of a connector from its
// transforms/predicates keys, including transforms.<alias>.predicate and
// transforms.<alias>.negate.
//
// Regular expressions use Go's RE2 syntax, which accepts the Java patterns
// used in practice except backreferences and lookaround; Java's
// replacement syntax ($1, ${name}, \$) is translated. timestamp.format
// supports the SimpleDateFormat letters listed in internal/javafmt.
//
// Transformations keep small per-instance schema caches and are not safe
// for concurrent use: build one chain per task.
//
// What this package must not do: convert to or from bytes
// (framework/convert) or know about Kafka clients; it only rewrites
// records in memory.
package transform
