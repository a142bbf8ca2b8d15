//go:build !cgo

package glibcarena

// Limited is false without cgo: there is no C allocator to tune.
func Limited() bool { return false }
