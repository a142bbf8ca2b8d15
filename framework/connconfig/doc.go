// Package connconfig owns the framework's common connector configuration
// keys and whole-config validation.
package connconfig
