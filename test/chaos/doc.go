// Package chaos is the reliability suite of the whole pipeline: it runs
// the real parts as separate processes — the project's Kafka broker (its
// own, started by scripts/kafka.sh with a private state directory, because
// the suite restarts it), the Aerospike test server (`connectd-dev
// aerospike --control`), and three `connectd worker` processes with the
// plugins installed by `connectd plugin install` — deploys
//
//	DatagenSource (counter, exactly-once) → topic
//	  → KafkaReplicationSource (exactly-once) → replica topic
//	  → AerospikeSink (increment, effectively-once)
//	DatagenSource (a second one, counter, exactly-once) → topic of its own
//
// through the REST API. A worker runs one process per plugin, so on each
// worker the tasks of both DatagenSource connectors share one process. It
// injects faults on a seeded random schedule: SIGKILL of a worker
// (failover, and crash-restart), SIGKILL of a plugin process (charged to
// every connector whose tasks lived in it: both datagen connectors for the
// DatagenSource process), SIGSTOP/SIGCONT of a worker past its session timeout (a zombie),
// a worker added and removed, a broker restart on the same data, Aerospike
// errors, in-doubt writes, dropped connections and latency (through the
// test server's control API), connector pause/resume and restart, config
// updates, and a corpus of bad input: malformed records written into the
// source topic (they must be dead-lettered by the sink), invalid REST
// requests (4xx, nothing changed) and a plugin binary whose checksum no
// longer matches its manifest (refused at launch) plus a non-plugin
// refused by `connectd plugin install`.
//
// At the end it stops each datagen sequence at a common length, lets the
// pipeline drain and verifies with framework/verify (the code behind
// `connectd verify`): the source and the second datagen's topic hold
// every task's sequence exactly once,
// the replica (read_committed) holds the source exactly once and in order,
// every Aerospike counter equals its exact sum, every bad record is in the
// dead-letter topic and nothing else is, every connector and task runs,
// and no plugin process outlived its worker. It reports the faults by kind
// with recovery times (the longest time any task was not running after
// each), throughput, and the memory, thread and file-descriptor trends of
// every process (soak mode judges them).
//
// TestChaos runs it: a short run in `go test ./...`, the long soak with
// `make chaos DURATION=30m [SEED=n]`. The harness is a Go test rather
// than a connectd subcommand so that the product binary carries no fault
// injection, and so that the CI variant and the soak are the same code.
//
// With AEROSPIKE_HOSTS set (and AEROSPIKE_NAMESPACE, AEROSPIKE_USER,
// AEROSPIKE_PASSWORD as package connectors/aerospike/aerotest reads them)
// the sink writes to that cluster instead of the test server, in a set of
// the run's own that is truncated at the end. The Aerospike faults
// (aerospike-errors, aerospike-latency) are then excluded, because only the
// test server can inject them, and the report has no Aerospike process
// figures (memory, writes per second); every other fault and every check
// runs unchanged.
//
// What it must not do: use mocks, share a broker it restarts, or loosen a
// check to make a run pass — a violation fails the run and prints the seed.
package chaos
