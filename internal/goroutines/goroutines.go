// Package goroutines finds goroutines a piece of code left running, for
// tests: Take a snapshot, run the code and stop it, then ask Left which of
// the goroutines started since are still there. It only reads stacks: it
// never stops a goroutine, nor judges one that ran before the snapshot.
package goroutines

import (
	"runtime"
	"strings"
	"time"
)

// Snapshot is the set of goroutines that ran when it was taken.
type Snapshot map[string]bool

// Take returns the goroutines running now.
func Take() Snapshot {
	s := Snapshot{}
	for _, g := range stacks() {
		s[id(g)] = true
	}
	return s
}

// Left waits up to timeout until no goroutine that started after s and whose
// stack mentions one of markers (e.g. a package path) is running, and returns
// the stacks of those still running then; none when they all ended.
func (s Snapshot) Left(timeout time.Duration, markers ...string) []string {
	deadline := time.Now().Add(timeout)
	for {
		var left []string
		for _, g := range stacks() {
			if !s[id(g)] && mentions(g, markers) {
				left = append(left, g)
			}
		}
		if len(left) == 0 || time.Now().After(deadline) {
			return left
		}
		time.Sleep(10 * time.Millisecond) // polling: goroutines end on their own time
	}
}

// stacks returns the stack of every goroutine but the caller's.
func stacks() []string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			all := strings.Split(string(buf[:n]), "\n\n")
			return all[1:] // the first is the caller's own
		}
		buf = make([]byte, 2*len(buf))
	}
}

// id returns the "goroutine N" header of a goroutine's stack.
func id(stack string) string {
	head, _, _ := strings.Cut(stack, " [")
	return head
}

func mentions(stack string, markers []string) bool {
	for _, m := range markers {
		if strings.Contains(stack, m) {
			return true
		}
	}
	return false
}
