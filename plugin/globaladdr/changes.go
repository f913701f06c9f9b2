package globaladdr

import (
	"slices"
	"sync"
)

// subscribers holds the functions Subscribe registered with one GlobalAddr.
type subscribers struct {
	sync.Mutex
	fs []*func()
}

// Subscribe registers f to be called each time g's global addresses change
// because a from source delivered new ones (addresses given in the Corefile
// never change while the server runs). f is called after the new addresses
// are in use, on the goroutine of the source that read them, so it must
// return at once: signal a channel, say. The returned function removes the
// subscription; call it when the subscriber shuts down.
func (g *GlobalAddr) Subscribe(f func()) (unsubscribe func()) {
	g.subs.Lock()
	defer g.subs.Unlock()
	g.subs.fs = append(g.subs.fs, &f)
	return func() {
		g.subs.Lock()
		defer g.subs.Unlock()
		g.subs.fs = slices.DeleteFunc(slices.Clone(g.subs.fs), func(s *func()) bool { return s == &f })
	}
}

// changed calls the functions subscribed to g's address changes.
func (g *GlobalAddr) changed() {
	g.subs.Lock()
	fs := g.subs.fs
	g.subs.Unlock()
	for _, f := range fs {
		(*f)()
	}
}
