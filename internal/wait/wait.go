// Package wait holds the pause the plugins' background loops (watches,
// retries) share, one that ends early when its context ends, and the
// signal that wakes such a loop. It does nothing else.
package wait

import (
	"context"
	"time"
)

// For waits for d, or until ctx ends, and reports whether ctx is still live.
func For(ctx context.Context, d time.Duration) bool {
	if d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-ctx.Done():
		case <-t.C:
		}
	}
	return ctx.Err() == nil
}

// Signal puts a signal into ch, a channel of capacity 1, unless one waits
// there already: the waiting one stands for both.
func Signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}
