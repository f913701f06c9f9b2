package source

import (
	"context"
	"net/netip"
	"sync"
	"sync/atomic"

	"github.com/globaladdr/globaladdr/plugin/globaladdr/source/uplink"
)

// valueSource is a place whose value holds the global addresses, or a
// map's prefix: a file or an etcd key.
type valueSource interface {
	// String names the source, as the Corefile does ("file PATH", "etcd
	// KEY"), in logs and in the source label of the metrics.
	String() string
	// run reports the source's value (text), with the etcd revision it was
	// written at (rev, 0 for a file), or why it has none (err), first at
	// once and then each time either may have changed, until ctx is done.
	run(ctx context.Context, report func(text string, rev int64, err error))
}

// feed is one source and what it last delivered.
type feed struct {
	// src is a file or etcd source; line a learned one (a polled line,
	// an interface). One of them is nil.
	src  valueSource
	line *runner
	// prefix is where the source's prefix goes, for map FROM from
	// SOURCE; nil for the sources of the global addresses.
	prefix *Prefix
	// addrs are the addresses of the source's last good value, and rev the
	// revision it was written at; addrs is nil until it has given one.
	addrs []netip.Addr
	rev   int64
	// err is the error last logged for the source, "" while it is fine:
	// an error is logged and counted once, not at every report.
	err string
	// refused tells, per family (IPv4, IPv6), that the learned source's
	// last answer of that family was refused; warned is the warning
	// last logged for it.
	refused [2]bool
	warned  [2]string
	// missing tells, per family, that the learned source's last answers
	// had no address of the family it had kept addresses of (logged).
	missing [2]bool
	// up is the named uplink the source's addresses reach; nil for a
	// from line that names none. failure is why the learned source's last
	// round had no answer; nil when it had one (the uplink's path works).
	up      *uplink.Uplink
	failure error
	// first is closed once the source has reported for the first time.
	first chan struct{}
	once  sync.Once
}

// valueFeed returns the feed of src.
func valueFeed(src valueSource) *feed { return &feed{src: src, first: make(chan struct{})} }

// lineFeed returns the feed of l.
func lineFeed(l *runner) *feed { return &feed{line: l, first: make(chan struct{})} }

// String names the feed's source, as the Corefile does.
func (f *feed) String() string {
	if f.line != nil {
		return f.line.name
	}
	return f.src.String()
}

// logName names the feed's source in log lines: as String does, and an
// etcd source with the endpoints it reads ("etcd KEY at URL").
func (f *feed) logName() string {
	if e, ok := f.src.(*etcdSource); ok {
		return e.logName()
	}
	return f.String()
}

// reported marks the first report of f.
func (f *feed) reported() { f.once.Do(func() { close(f.first) }) }

// Prefix is the IPv6 prefix that a "map FROM from SOURCE" line translates
// FROM into, as its source last gave it: the prefix of the interface's
// global address, or one written in a file or an etcd key. It has none
// until the source gives a valid one, and then keeps the last valid one.
type Prefix struct {
	from netip.Prefix
	to   atomic.Pointer[netip.Prefix]
}

// Load returns the prefix to translate into; ok is false while none is
// known, and the addresses in FROM then have nothing to become.
func (p *Prefix) Load() (to netip.Prefix, ok bool) {
	if to := p.to.Load(); to != nil {
		return *to, true
	}
	return netip.Prefix{}, false
}
