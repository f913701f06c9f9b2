// Package poll waits in tests for what a background goroutine (a watch, a
// build) brings about: it asks again and again until the answer is right or
// a deadline passes. The deadline is the assertion; nothing is timed.
package poll

import (
	"testing"
	"time"
)

// Until calls check every 10 ms until it returns nil, and fails t with its
// last error, naming what, when that takes longer than within.
func Until(t testing.TB, within time.Duration, what string, check func() error) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		err := check()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %v", what, err)
		}
		time.Sleep(10 * time.Millisecond) // polling the background's effect
	}
}
