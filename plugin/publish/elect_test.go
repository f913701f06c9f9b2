package publish

import (
	"testing"
	"time"
)

func TestLeading(t *testing.T) {
	t.Run("end waits for a running lead", func(t *testing.T) {
		var l leading
		if !l.begin() {
			t.Fatal("begin before the end refused")
		}
		returned := make(chan struct{})
		ended := make(chan bool)
		go func() { ended <- l.end() }()
		go func() {
			time.Sleep(50 * time.Millisecond) // however late lead returns, end waits for it
			close(returned)
			l.wg.Done()
		}()
		if began := <-ended; !began {
			t.Error("end: lead did not begin")
		}
		select {
		case <-returned:
		default:
			t.Error("end returned before lead did")
		}
	})
	t.Run("a late lead does not begin", func(t *testing.T) {
		var l leading
		if l.end() {
			t.Error("end: lead began")
		}
		if l.begin() {
			t.Error("begin after the end allowed")
		}
	})
}
