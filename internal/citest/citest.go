// Package citest holds the test suite's one rule for a missing
// dependency: under CI=true (the CI machine has everything the tests need)
// the test fails with the reason, elsewhere it is skipped with it, so that
// a developer without, say, a Kafka broker still gets the other results.
//
// It owns only that rule; it must not start, install or look for
// anything itself.
package citest

import (
	"fmt"
	"os"
	"testing"
)

// inCI reports whether the tests run in CI (CI=true).
func inCI() bool { return os.Getenv("CI") == "true" }

// Unavailable ends the test because something it needs is missing: a
// failure in CI, a skip elsewhere. The message says what is missing and
// how to get it.
func Unavailable(t testing.TB, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if inCI() {
		t.Fatal("CI: " + msg)
	}
	t.Skip(msg)
}
