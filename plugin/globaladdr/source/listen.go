package source

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"sync"
	"time"

	"github.com/globaladdr/globaladdr/internal/wait"
	"github.com/globaladdr/globaladdr/plugin/globaladdr/source/probe"
)

// heard is what the Listeners of a line told: addresses, or nil to probe
// at once.
type heard struct {
	mu      sync.Mutex
	addrs   [][]netip.Addr // per prober; nil: nothing heard
	ask     []bool         // per prober: probe at once
	changed chan struct{}  // signalled when addrs or ask changed
}

// newHeard returns what the Listeners of n probers heard: nothing yet.
func newHeard(n int) *heard {
	return &heard{addrs: make([][]netip.Addr, n), ask: make([]bool, n), changed: make(chan struct{}, 1)}
}

// listen runs the Listeners among probers (named names, of a line polled
// every every) until ctx is done, putting what they hear in h; the returned
// group is done when all have returned.
func (h *heard) listen(ctx context.Context, probers []probe.Prober, names []string, every time.Duration) *sync.WaitGroup {
	var listening sync.WaitGroup
	for i, p := range probers {
		if lis, ok := p.(probe.Listener); ok {
			listening.Go(func() {
				if err := lis.Listen(ctx, func(addrs []netip.Addr) { h.put(i, addrs) }); err != nil && ctx.Err() == nil {
					how := "asked at start only"
					if every > 0 {
						how = fmt.Sprintf("polling every %s", every)
					}
					log.Infof("%s: not listening for announcements: %v; %s", names[i], err, how)
				}
			})
		}
	}
	return &listening
}

// put records what the Listener of prober i heard: addrs, or nil to probe
// at once.
func (h *heard) put(i int, addrs []netip.Addr) {
	h.mu.Lock()
	if addrs == nil {
		h.ask[i] = true
	} else {
		h.addrs[i] = slices.Clone(addrs)
	}
	h.mu.Unlock()
	wait.Signal(h.changed)
}

// take returns what h holds, per prober, and empties it: the addresses
// heard (nil: none), and which probers to probe at once.
func (h *heard) take() (addrs [][]netip.Addr, ask []bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	addrs, ask = h.addrs, h.ask
	h.addrs, h.ask = make([][]netip.Addr, len(addrs)), make([]bool, len(ask))
	return addrs, ask
}

// ticker returns the channel of a ticker of every, and the function that
// stops it; a nil channel for every 0 (an interface, which is never
// polled).
func ticker(every time.Duration) (tick <-chan time.Time, stop func()) {
	if every == 0 {
		return nil, func() {}
	}
	t := time.NewTicker(every)
	return t.C, t.Stop
}
