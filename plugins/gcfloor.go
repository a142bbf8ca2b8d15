package plugins

// gcFloorBytes is the plugin process's floor under the garbage
// collector's heap goal.
//
// Every batch crossing the data channel arrives in a fresh buffer (the
// task's records are slices of it and may be kept until Flush), so a sink
// plugin allocates its whole input, and a source plugin its encoding
// work, in large pieces. A connector's own live heap is usually a few
// MiB, and Go's default goal (twice the live heap, at least 4 MiB) would
// then run a collection every few batches: in the boundary benchmark that
// was about half of the plugin's CPU time. Keeping this much allocated
// and never touched lifts the goal by twice the amount; its pages are
// never written, so it costs address space, not resident memory. A
// connector that sets its own memory limit (debug.SetMemoryLimit) must
// leave room for it.
//
// When the worker sets GOGC or GOMEMLIMIT for its plugins (plugin.gogc,
// plugin.gomemlimit) there is no floor: the operator chose the policy,
// and a floor would distort it (it counts against a memory limit).
const gcFloorBytes = 64 << 20

// gcFloor allocates the floor; the caller keeps it alive while serving.
func gcFloor(getenv func(string) string) []byte {
	if getenv("GOGC") != "" || getenv("GOMEMLIMIT") != "" {
		return nil
	}
	return make([]byte, gcFloorBytes)
}
