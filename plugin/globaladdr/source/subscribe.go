package source

import (
	"slices"
	"sync"
)

// subscribers holds the functions Subscribe registered with one Set.
type subscribers struct {
	mu sync.Mutex
	fs []*func(Value)
}

// add registers f (see Set.Subscribe), and returns the function that
// removes it.
func (subs *subscribers) add(f func(Value)) (remove func()) {
	subs.mu.Lock()
	defer subs.mu.Unlock()
	subs.fs = append(subs.fs, &f)
	return func() {
		subs.mu.Lock()
		defer subs.mu.Unlock()
		subs.fs = slices.DeleteFunc(slices.Clone(subs.fs), func(sub *func(Value)) bool { return sub == &f })
	}
}

// tell calls the subscribed functions with v.
func (subs *subscribers) tell(v Value) {
	subs.mu.Lock()
	fs := subs.fs
	subs.mu.Unlock()
	for _, f := range fs {
		(*f)(v)
	}
}
