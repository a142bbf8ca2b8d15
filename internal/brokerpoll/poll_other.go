//go:build !linux || !cgo

package brokerpoll

// NapMillis is 0: poll is not replaced on this platform.
func NapMillis() int { return 0 }

// Active reports whether poll is replaced in this process.
func Active() bool { return false }

// Calls is 0: poll is not replaced on this platform.
func Calls() uint64 { return 0 }

// Naps is 0: poll is not replaced on this platform.
func Naps() uint64 { return 0 }
