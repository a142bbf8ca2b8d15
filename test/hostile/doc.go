// Package hostile holds the hostile-input suite: real `connectd worker`
// processes on the real broker fed input an operator, a broken client or a
// broken older version could send, checking that every piece of it ends in
// a 2xx or a 4xx with Kafka Connect's error body, a FAILED task with a
// trace, or a record skipped with a warning — never a 5xx, a hang, a crash
// or a worker that stays degraded once the input is gone.
//
// TestRESTFuzz is a seeded property-based fuzzer over every route of
// framework/rest's route table (read from router.go, so a new endpoint is
// covered without touching this package), sent to either worker of a
// two-worker cluster so that forwarding to the leader is fuzzed too:
// boundary and random JSON, path-breaking and unicode connector names,
// wrong content types, oversized bodies and concurrent
// create/delete/pause/resume/restart/stop of two names. Every request must
// answer a 2xx or a 4xx with the error body; a rejected request must leave
// the connectors and their configs as they were on both workers;
// afterwards each worker must still serve GET / and run a new connector.
// HOSTILE_SEED reproduces a run (the seed is logged and named in every
// failure); HOSTILE_REQUESTS changes the number of serial requests.
//
// TestGarbageInInternalTopics writes garbage straight into the config,
// status and offsets topics of a running worker and checks that the worker
// skips it with a warning, keeps serving and running connectors, and that a
// worker started afterwards on the same topics (replaying them) does too.
package hostile
