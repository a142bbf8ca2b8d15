// Package configprovider resolves indirect configuration values of the form
// ${provider:[path:]key}, as Kafka's ConfigProvider mechanism (KIP-297) does,
// so that secrets stay out of worker.properties and out of the config topic.
//
// Two providers ship: env (${env:VAR}, Kafka's EnvVarConfigProvider) and file
// (${file:path:key}, a key of a Java properties file, Kafka's
// FileConfigProvider). Which providers exist is decided by the caller, never
// by this package's state.
//
// Connector configs are stored and returned by the REST API with their
// placeholders intact; the worker that runs a task resolves them just before
// starting it. This package only resolves; it must not log or cache resolved
// values.
package configprovider
