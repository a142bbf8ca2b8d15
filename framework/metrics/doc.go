// Package metrics owns how a connectd worker exposes Prometheus metrics:
// the one registry a worker process uses (built here, injected everywhere
// else), the Go and process collectors and connectd_build_info on it, the
// merging of plugin-side metrics (each plugin process's Gather, already
// labelled connector/task) into the worker's scrape, and the /metrics HTTP
// handler.
//
// Naming rules every connectd metric follows (checked by promlint in the
// tests): prefix connectd_, base units (seconds, bytes, ratios 0–1),
// counters end in _total, durations and batch sizes are histograms, and
// labels are bounded: connector, task, state, result, stage (plus enums
// such as reason); never topics, partitions, keys or error text.
//
// Plugin metrics are merged defensively: a plugin that fails or times out
// is left out of that scrape (and counted), a plugin family whose name
// belongs to the worker is dropped, families of the same name from
// several plugin processes are merged, and a family whose type disagrees
// with another plugin's is dropped. A plugin can never make /metrics fail.
//
// What this package must not do: define the worker's, herder's or REST
// layer's own metrics (each package registers its own on the injected
// Registerer), or use prometheus.DefaultRegisterer.
package metrics
