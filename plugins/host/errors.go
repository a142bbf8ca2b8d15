package host

import (
	"errors"
	"fmt"
	"strings"
)

var (
	// ErrUnknownPlugin: no installed plugin has the requested class.
	ErrUnknownPlugin = errors.New("unknown plugin")
	// ErrNoMatchingVersion: the class is installed, but no installed
	// version satisfies the requested version range (see VersionError).
	ErrNoMatchingVersion = errors.New("no installed plugin version matches")
	// ErrChecksumMismatch: the binary on disk is not the one that was
	// installed (its sha256 differs from the manifest's).
	ErrChecksumMismatch = errors.New("plugin binary checksum mismatch")
	// ErrPluginExited: the plugin process is gone (crashed, killed or closed).
	ErrPluginExited = errors.New("plugin process exited")
	// ErrTimeout: the plugin did not answer within LaunchOptions.CallTimeout.
	ErrTimeout = errors.New("plugin did not answer in time")
	// ErrProtocol: the plugin sent a message that breaks the protocol
	// (malformed, unexpected, or beyond its credits).
	ErrProtocol = errors.New("plugin protocol violation")
)

// ExitError describes an unexpected exit of a plugin process. It wraps
// ErrPluginExited.
type ExitError struct {
	Plugin     string
	Pid        int
	Code       int    // -1 when killed by a signal
	State      string // e.g. "signal: killed", "exit status 2"
	StderrTail string // the last lines the plugin wrote to stderr
	// DataFailure is why the worker gave up the process's data channel
	// before it exited, if it did (the plugin broke the protocol or
	// stopped reading): the plugin exits when its data channel closes, so
	// its own last words would blame the worker.
	DataFailure string
	// Killed is why the worker killed the process, if it did (it stopped
	// answering).
	Killed string
}

func (e *ExitError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "plugin %s (pid %d) exited unexpectedly: %s", e.Plugin, e.Pid, e.State)
	if e.Killed != "" {
		fmt.Fprintf(&b, ", killed by the worker because %s", e.Killed)
	}
	if e.DataFailure != "" {
		fmt.Fprintf(&b, ", after the worker closed its data channel: %s", e.DataFailure)
	}
	if e.StderrTail != "" {
		b.WriteString("; last stderr lines:\n")
		b.WriteString(e.StderrTail)
	} else {
		b.WriteString("; it wrote nothing to stderr")
	}
	return b.String()
}

func (e *ExitError) Unwrap() error { return ErrPluginExited }
