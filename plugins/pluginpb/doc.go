// Package pluginpb holds the connectd plugin protocol: plugin.proto and the
// Go code generated from it by `make generate` (Debian's protoc with pinned
// protoc-gen-go and protoc-gen-go-grpc). Edit the .proto, never the
// generated files.
//
// This package only defines messages and services. Speaking the protocol
// (credits, byte-budget splitting, timeouts) is the business of plugins
// (the plugin side) and plugins/host (the worker side).
package pluginpb
