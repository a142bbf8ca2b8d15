//go:build unix

package chain

import (
	"syscall"
	"time"
)

// processCPU is the CPU time (user+system, all threads) this process has
// used. Benchmarks report it per record next to wall-clock ns/op, because on
// a shared machine wall-clock time also counts time spent waiting for a core.
func processCPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
