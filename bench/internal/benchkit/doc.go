// Package benchkit holds what the benchmarks under bench/ share: starting
// and stopping the measured processes, sampling CPU and memory of whole
// process trees from /proc, waiting for and posting to a worker's REST API,
// the Kafka admin calls for their topics, and starting a Kafka Connect
// worker (connect-distributed) from a Maven-resolved classpath.
package benchkit
