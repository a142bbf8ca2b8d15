// Package api owns the wire types of connectd's Kafka Connect–compatible
// REST API: the request and response bodies that the server
// (framework/rest), the Go client (framework/rest/client) and the CLI
// (cmd/connectd) exchange, with Kafka Connect's exact JSON field names, so
// that kcctl-style tools, operators and UIs work unchanged. The herder
// produces them for the server.
//
// The connector-plugin config bodies (GET .../config and PUT
// .../config/validate) and the logger bodies are the types of the packages
// that produce them, framework/configdef (a plugin's validation travels in
// them) and framework/logging; this package names them too, so that every
// body of the API is found here.
//
// What this package must not do: import anything that uses cgo (the
// client is meant for programs that do not link librdkafka, and a test
// checks its dependency closure), or carry behaviour beyond formatting an
// id; status codes, validation and the herder's errors belong to
// framework/rest and framework/herder.
package api
