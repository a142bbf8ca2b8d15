// Package testplugins holds connector plugins that exist only for the
// worker's tests: filesink records every record it applies in a file,
// testsource emits a deterministic sequence with records that fail on
// purpose. Tests build them with go build and install them in a plugin
// catalog like any other plugin.
package testplugins
