// Package datagen is DatagenSource, a source connector that generates
// records with known contents for demos, tests and benchmarks (config keys
// follow Confluent's kafka-connect-datagen where one exists).
//
// Quickstarts:
//
//   - counter: key "k<N>" with N in [0, key.cardinality), value
//     {"key":"k<N>","amount":<1..100>,"seq":<seq>}. Every field is a pure
//     function of (random.seed, seq), see Counter, so tests can compute
//     expected per-key sums with ExpectedSums.
//   - pageviews: key "<userid>", value {"viewtime":<ms>,"userid":"User_<n>",
//     "pageid":"Page_<n>"}, also a pure function of (random.seed, seq).
//
// Splitting: with n tasks, task i produces the sequence numbers
// seq ≡ i (mod n) in increasing order: i, i+n, i+2n, … and at most
// `iterations` of them (0 = unbounded). Each task's source partition is
// {"task": i} and its offset {"seq": <last seq produced>}; a restarted
// task resumes after its committed seq. Changing tasks.max changes the
// split; offsets of the old split then no longer line up.
//
// Values are schemaless map[string]any by default, so JsonConverter with
// schemas.enable=false writes plain JSON. With value.struct=true they are
// Structs of a fixed, named schema (CounterSchema, PageviewSchema), which
// Schema Registry converters such as AvroConverter need; the counter's
// struct adds created_at (Timestamp) and price (Decimal, amount × 1.25),
// both pure functions of seq, so logical types can be checked end to end.
//
// What this package must not do: depend on Kafka or on the worker; it is a
// plain SDK connector.
package datagen
