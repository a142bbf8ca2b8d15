// Package quickstart is the Go half of `make quickstart`
// (scripts/quickstart.sh): it reads the demo pipeline's connector files
// (quickstart/connectors/*.json, with their ${env:...} placeholders filled
// from the environment the worker also runs with), creates the pipeline's
// topics, and watches the pipeline end to end — records produced by
// DatagenSource, replicated by KafkaReplicationSource, applied to
// Aerospike by AerospikeSink, duplicates the sink skipped, lag — until the
// Aerospike counters equal the totals the generator's seed predicts. Every
// count it shows comes from state that outlives a worker restart (the
// topics, the Aerospike records, the sink's stats.set record), and it says
// when the worker is down and when it is back.
//
// It observes the pipeline only from the outside, the way an operator
// would: read_committed consumers on the topics, the worker's REST API and
// metrics endpoint, an Aerospike scan. It must not reach into the worker,
// start or stop processes (the script does that), or loosen the final
// check: a counter above its expected total is reported as a duplicate at
// once.
package quickstart
