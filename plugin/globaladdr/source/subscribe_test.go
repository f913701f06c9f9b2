package source

import (
	"testing"
	"time"
)

// TestSubscribe checks that a subscriber hears of each change of the global
// addresses, after the new ones are in use, and nothing once it has
// unsubscribed.
func TestSubscribe(t *testing.T) {
	t.Parallel()
	s, path := startFileSource(t, "203.0.113.10\n")
	waitAddrs(t, s, "203.0.113.10")
	heard := make(chan string, 10)
	unsubscribe := s.Subscribe(func(Value) { heard <- current(s) })

	write(t, path, "203.0.113.11\n")
	select {
	case got := <-heard:
		if got != "203.0.113.11" {
			t.Errorf("the subscriber saw %s in use, want the new 203.0.113.11", got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the subscriber did not hear of the change")
	}

	unsubscribe()
	write(t, path, "203.0.113.12\n")
	waitAddrs(t, s, "203.0.113.12")
	select {
	case got := <-heard:
		t.Errorf("heard of a change (%s) after unsubscribing", got)
	default:
	}
}
