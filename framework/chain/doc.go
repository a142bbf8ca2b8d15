// Package chain builds a connector's record-processing chain (key, value and
// header converters plus transforms and predicates) from its configuration
// and applies it to one record at a time, in the plugin process.
package chain
