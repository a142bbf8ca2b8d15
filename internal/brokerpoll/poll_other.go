//go:build !linux || !cgo

package brokerpoll

import "fmt"

// SetWaitMillis checks ms as on Linux but has no effect: poll is not
// replaced on this platform.
func SetWaitMillis(ms int) error {
	if ms < 0 || ms > MaxWaitMillis {
		return fmt.Errorf("busy-poll wait %d ms: want 0 to %d", ms, MaxWaitMillis)
	}
	return nil
}

// WaitMillis is 0: poll is not replaced on this platform.
func WaitMillis() int { return 0 }

// Active reports whether poll is replaced in this process.
func Active() bool { return false }

// Calls is 0: poll is not replaced on this platform.
func Calls() uint64 { return 0 }

// Waits is 0: poll is not replaced on this platform.
func Waits() uint64 { return 0 }
