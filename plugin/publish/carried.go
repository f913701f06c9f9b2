package publish

import (
	"strings"
	"sync"
)

// readyBlocks holds the server blocks, by blockKey, whose publication has
// been ready in this process. A reload's new instance of such a block starts
// ready, as the first start's promise says (ready once, ready after): an API
// server that does not answer at the reload takes no DNS server out of
// service.
var readyBlocks sync.Map

// blockKey names p's server block across reloads: its first key (zone and
// port) and the zones it publishes.
func (p *Publish) blockKey() string {
	return p.block + " " + strings.Join(p.zones, " ")
}

// carryReady makes p ready when an earlier instance of its block was.
func (p *Publish) carryReady() {
	if _, ok := readyBlocks.Load(p.blockKey()); ok {
		p.ready.Store(true)
	}
}

// becameReady marks p, and so its block, ready.
func (p *Publish) becameReady() {
	p.ready.Store(true)
	readyBlocks.Store(p.blockKey(), true)
}

// forgetReady forgets p's block at the final shutdown.
func (p *Publish) forgetReady() error {
	readyBlocks.Delete(p.blockKey())
	return nil
}
