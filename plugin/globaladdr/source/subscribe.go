package source

import (
	"slices"
	"sync"
)

// subscribers holds the functions Subscribe registered with one Set.
type subscribers struct {
	sync.Mutex
	fs []*func(Value)
}

// Subscribe registers f to be called with each new Value of s, after the
// function given to Start has taken it, on the goroutine of the source that
// read it: f must return at once (signal a channel, say). The returned
// function removes the subscription; call it when the subscriber shuts down.
func (s *Set) Subscribe(f func(Value)) (unsubscribe func()) {
	s.subs.Lock()
	defer s.subs.Unlock()
	s.subs.fs = append(s.subs.fs, &f)
	return func() {
		s.subs.Lock()
		defer s.subs.Unlock()
		s.subs.fs = slices.DeleteFunc(slices.Clone(s.subs.fs), func(sub *func(Value)) bool { return sub == &f })
	}
}

// tell calls the subscribed functions with v.
func (subs *subscribers) tell(v Value) {
	subs.Lock()
	fs := subs.fs
	subs.Unlock()
	for _, f := range fs {
		(*f)(v)
	}
}
