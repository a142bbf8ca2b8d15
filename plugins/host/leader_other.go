//go:build !linux

package host

// leaderExited cannot tell without /proc: an exit is noticed when the
// plugin's pipes close.
func leaderExited(int) bool { return false }

// exitNotice is Linux only: elsewhere the caller polls.
func exitNotice(int) <-chan struct{} { return nil }
