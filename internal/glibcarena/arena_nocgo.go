//go:build !cgo

package glibcarena

// Limit does nothing without cgo: there is no C allocator to tune.
func Limit(n int) bool { return false }
