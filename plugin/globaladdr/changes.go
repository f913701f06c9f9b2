package globaladdr

import "sync"

// subscribers holds the functions Subscribe registered, per GlobalAddr.
var subscribers struct {
	sync.Mutex
	m map[*GlobalAddr][]*func()
}

// Subscribe registers f to be called each time g's global addresses change
// because a from source delivered new ones (addresses given in the Corefile
// never change while the server runs). f is called after the new addresses
// are in use, on the goroutine of the source that read them, so it must
// return at once: signal a channel, say. The returned function removes the
// subscription; call it when the subscriber shuts down.
func (g *GlobalAddr) Subscribe(f func()) (unsubscribe func()) {
	subscribers.Lock()
	defer subscribers.Unlock()
	if subscribers.m == nil {
		subscribers.m = map[*GlobalAddr][]*func(){}
	}
	subscribers.m[g] = append(subscribers.m[g], &f)
	return func() {
		subscribers.Lock()
		defer subscribers.Unlock()
		rest := subscribers.m[g][:0:0]
		for _, s := range subscribers.m[g] {
			if s != &f {
				rest = append(rest, s)
			}
		}
		if len(rest) == 0 {
			delete(subscribers.m, g)
		} else {
			subscribers.m[g] = rest
		}
	}
}

// changed calls the functions subscribed to g's address changes.
func (g *GlobalAddr) changed() {
	subscribers.Lock()
	fs := subscribers.m[g]
	subscribers.Unlock()
	for _, f := range fs {
		(*f)()
	}
}
