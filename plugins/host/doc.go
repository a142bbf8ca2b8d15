// Package host is the worker's side of the plugin boundary: it keeps the
// catalog of installed plugins (plugin.path directories, one manifest with
// a sha256 per binary), launches and verifies plugin processes with
// go-plugin (SecureConfig checksum at every launch, AutoMTLS, a minimal
// environment, Pdeathsig), merges their hclog JSON logs into slog, and
// speaks the protocol of plugins/pluginpb: credit-based flow control, batches
// split by byte budget, and a bounded timeout on every reply, so that a
// plugin that crashes, hangs or sends garbage fails only its own task with
// a clear error.
//
// What it must not do: touch Kafka, offsets or error tolerance. The worker
// (framework/worker) decides what a failed record or task means; this
// package reports failures faithfully and promptly.
//
// The checksum is verified right before exec; like go-plugin's
// SecureConfig it cannot close the window between check and exec, so
// plugin.path must be writable only by the worker's user.
//
// Restarting is the caller's job: a Process never respawns (go-plugin
// cannot restart a client); launch a new one with backoff.
package host
