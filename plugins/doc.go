// Package plugins is the plugin side of the connectd plugin boundary. A
// connector's main function is one line:
//
//	func main() { plugins.Serve(myconnector.New) }
//
// Serve runs the connector as a go-plugin gRPC server speaking the protocol
// in plugins/pluginpb, version 4: control calls on gRPC, task streams on
// the data channel the host passes as an inherited socketpair
// (plugins/internal/datachan), and any number of connector instances per
// process. Inside the plugin process it applies the connector's
// converters and transforms (framework/chain), so records cross the process
// boundary once, as bytes; it implements the task contexts (committed
// offsets, transaction boundaries, per-record error reporting, per-task
// metrics and loggers) and the flow control of the task streams.
//
// Run by hand, a plugin binary answers `<binary> spec` with its Spec as JSON
// (no handshake), for humans and CI.
//
// What this package must not do: talk to Kafka, store offsets or decide
// error tolerance. The worker (host side, plugins/host and framework/worker)
// owns those; the plugin reports failures and the host decides.
package plugins
