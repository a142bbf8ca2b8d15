// Package aerofake is an in-memory Aerospike server that speaks enough of the
// Aerospike wire protocol for the unmodified aerospike-client-go v7 client to
// run against it.
//
// It is a TEST DOUBLE, in the spirit of franz-go's kfake for Kafka. It exists
// for connectd's tests, benchmarks and quickstart, because no Aerospike server
// can be installed in the project's environment. Deployments use a real
// Aerospike cluster. Nothing here is persistent, replicated or tuned for large
// data sets, and only the subset of the protocol the project needs is
// implemented.
//
// # What it owns
//
// One node owning all 4096 partitions of every configured namespace:
//
//   - the info protocol the client uses for discovery and tend (node, build,
//     features, partition-generation, peers-*, replicas, service-*,
//     cluster-name, namespaces, statistics, truncate, truncate-namespace);
//     unknown names answer ERROR:4;
//   - the security protocol as Community Edition answers it: every command,
//     a login included, gets SECURITY_NOT_SUPPORTED (51), so a client with a
//     user and password fails to connect. Config.EnterpriseSecurity emulates
//     an Enterprise server with security enabled instead: logins with the
//     configured users' passwords and session tokens, nothing more;
//   - single-record commands: get (all bins, named bins, header only), exists,
//     put, add, append, prepend, touch, delete and operate, with the
//     record-exists actions, generation policies, TTL rules and result codes of
//     Aerospike CE 8.1 as written down in the project's wire reference;
//   - map CDT operations on top-level map bins (put, put items, add, replace,
//     increment, decrement, clear, set type, size, get/remove by key and by
//     key list; unordered and key-ordered maps; keys compared by value) and
//     DELETE_ALL. Like CE, it stores every map with its keys sorted, nested
//     maps too, whatever the order they were sent in, and answers KEY_VALUE
//     with key-ordered pairs ([]MapPair in the Go client);
//   - list append and append items on unordered top-level list bins (what
//     the sink's list_append mode sends), answering the new size, creating
//     a missing bin and refusing a bin of another type with BIN_TYPE_ERROR;
//   - the namespace's max-record-size (Config.MaxRecordSize, default 1 MiB)
//     checked against the record's stored size computed as CE 8.1 computes
//     it, so the largest record accepted is the real server's to the byte;
//   - batch reads and writes in both layouts (field 42 and field 41) with
//     per-row results and the LAST terminator;
//   - scans and primary-index queries by partition, with set filter, bin
//     selection, MAX_RECORDS and digest resume;
//   - fault injection (fail, delay, or drop matching commands, before or after
//     they are applied) and operation counters, so callers can test retry and
//     in-doubt paths.
//
// Per-record operations are atomic: each of the 4096 partitions of a namespace
// has its own lock and records are replaced copy-on-write, so readers and
// scans never see a half-applied write.
//
// # What it must NOT do
//
// It must not be used as a database: no persistence, no eviction, no
// replication, no secondary indexes, no UDFs, no filter expressions, no
// other list operations, no bit/HLL operations, no nested CDT contexts, no map rank operations,
// no compression (these answer UNSUPPORTED_FEATURE, INDEX_NOTFOUND or
// ENTERPRISE_ONLY, as a CE server without the feature would: a query with
// a filter gets INDEX_NOTFOUND, index fields without a range get
// UNSUPPORTED_FEATURE). Read-touch TTL
// (ReadTouchTTLPercent) is ignored. It must never panic or corrupt one
// connection's state because another connection sent a malformed frame: bad
// frames are answered with a result code when the frame boundary is still
// known, and the connection is closed otherwise; frame sizes are capped
// (Config.MaxMessageSize, 1 MiB for info).
//
// # Fidelity
//
// Where the Go client can produce a request, the answer is meant to be what
// CE 8.1 answers; the conformance tests (conformance_*_test.go) hold the
// real server's recorded answers; with AEROSPIKE_HOSTS naming a Community
// Edition cluster (package aerotest), the ones that talk through the
// client only run against that cluster instead, to check the answers
// again. Raw-protocol messages the client never
// sends are answered as CE 8.1 answered them where that was recorded:
// unknown field types are skipped (single-record, batch and scan
// commands), header_sz is ignored (fields start at byte 22 whatever it
// says), a command without a namespace field gets INVALID_NAMESPACE (20),
// and a map particle that does not parse gets SERVER_ERROR (1).
//
// Not modelled:
//   - msgpack nesting is capped at 32 levels: a deeper list or map (a
//     1000-deep list, say) gets PARAMETER_ERROR; the real server's answer
//     is not on record and may differ;
//   - other malformed payloads (a CDT op whose arguments do not parse, a
//     broken list particle, frames whose sizes do not add up) get
//     PARAMETER_ERROR or a closed connection, without a recorded real
//     answer to compare with;
//   - the Enterprise security emulation checks logins only (no roles, no
//     refusal of commands on connections that did not log in);
//   - K-ordered maps are sized by their msgpack bytes, while the real
//     server may store an offset index with them that counts toward its
//     limit.
//
// Tests that need time to pass set Config.Now; tests that need the uint16
// generation wrap use [Server.SetGeneration].
//
// Start one in-process with [Start]; the development tool cmd/connectd-dev
// runs the same server as a process with `connectd-dev aerospike` (the
// connectd binary does not link it).
package aerofake
