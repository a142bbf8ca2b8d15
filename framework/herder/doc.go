// Package herder runs a connectd cluster: it keeps connector configs, task
// configs and target states in the config topic, connector and task status
// in the status topic, decides which worker runs what, and tells the local
// worker to start and stop connectors and tasks.
//
// Membership, failure detection and leader choice come from Kafka's group
// coordinator; the leader's config-topic writes are transactional, so a
// deposed leader is fenced. There is no other coordination service.
//
// What this package must not do: run tasks (framework/worker does), or
// speak HTTP (framework/rest does; this package only defines the entities
// and errors the REST API serves).
package herder
