// Package herder runs a connectd cluster: it keeps connector configs, task
// configs and target states in the config topic, connector and task status
// in the status topic, decides which worker runs what, and tells the local
// worker to start and stop connectors and tasks.
//
// Membership, failure detection and leader choice come from Kafka's group
// coordinator; the leader's config-topic writes are transactional, so a
// deposed leader is fenced. There is no other coordination service.
//
// The parts (docs/cluster.md describes the whole), in this package and
// the packages below it:
//
//   - clusterstate is the config-topic state machine: the records, their
//     encoding, and the immutable Snapshot they fold into;
//   - configLog reads the config topic (read_committed) into Snapshots and
//     writes what any worker may write (target states);
//   - statusStore reads and writes the status topic, keeping a status only
//     if it comes from the same worker or a generation at least as new;
//   - both read and follow their topic with internal/compacted, which
//     also serves their reads to the end and replaces a consumer that
//     stopped fetching;
//   - membership keeps the worker in the consumer group ${group.id} (its
//     client.id is the worker's REST URL, its group.instance.id the worker
//     id unless static membership is off); the member owning partition 0
//     of the config topic leads;
//   - leader claims the transactional producer connect-cluster-${group.id},
//     writes the privileged records and the assignment, and fences
//     exactly-once task generations; the assignment itself is computed by
//     the assignment package (the pure algorithm: sticky balance,
//     two-phase moves, the scheduled delay). The leader stays in this
//     package: every write is read back through configLog, and its steps
//     consult statusStore and the Runtime;
//   - local applies this worker's share of the assignment to the Runtime
//     (framework/worker) and sends the task configs its connectors
//     generate to the leader;
//   - api.go and health.go are the REST API's side: reads answer from the
//     config topic read to its end as of the call (so a write that
//     returned on any worker is seen on all), a connector without a status
//     record yet is UNASSIGNED, Health is healthy only when a create
//     through this worker would succeed, and passing Kafka errors are
//     TransientErrors for the client to retry;
//   - metrics.go reports the worker and rebalance metrics
//     (connectd_worker_*, connectd_cluster_workers) on Config.Metrics.
//
// What this package must not do: run tasks (framework/worker does), or
// speak HTTP (framework/rest does; this package produces the REST API's
// entities, framework/rest/api's types, defines the errors the server maps
// to status codes, and calls the leader through the LeaderClient it is
// given).
package herder
