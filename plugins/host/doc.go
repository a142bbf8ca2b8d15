// Package host is the worker's side of the plugin boundary: it keeps the
// catalog of installed plugins (plugin.path directories, one manifest with
// a sha256 per binary, several versions of a class side by side and
// chosen by Maven version range as Kafka Connect's KIP-891 does), launches and verifies plugin processes with
// go-plugin (SecureConfig checksum at every launch, AutoMTLS, a minimal
// environment, Pdeathsig, a process group of their own that is killed
// whole when the handshake times out and when the plugin stops, so that
// nothing a plugin forked outlives it or holds its pipes open), merges
// their hclog JSON logs into slog, and
// speaks the protocol of plugins/pluginpb: credit-based flow control, batches
// split by byte budget, and a bounded timeout on every reply, so that a
// plugin that crashes, hangs or sends garbage fails only its own task with
// a clear error.
//
// Two channels per process. Control calls (spec, validate, connector
// lifecycle, events, metrics, health) use go-plugin's gRPC connection,
// mutually authenticated with AutoMTLS because it is a Unix socket with a
// path. The task streams use the data channel (protocol version 4, the
// only one): a socketpair created by Launch whose other end only the plugin process
// inherits (exec.Cmd.ExtraFiles, descriptor number in
// CONNECTD_PLUGIN_DATA_FD), framed and multiplexed by
// plugins/internal/datachan. It carries no TLS because nothing can connect
// to it: it has no name, it is close-on-exec everywhere except in that one
// child, and a process able to read it could read the keys of a TLS
// session from the same memory. Encryption was costing about a microsecond
// of CPU per KiB moved, the whole per-record budget of the boundary. The
// data channel needs socketpair(2): on a platform without it (not Unix)
// Launch fails with an error wrapping errors.ErrUnsupported.
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
