// Package source keeps a globaladdr block's global addresses up to date from
// the places its Corefile names (from file, from etcd): it reads and watches
// them, retries what fails, merges their values, and announces each new
// state to the plugin and to subscribers. It knows nothing of DNS replies,
// and reads nothing from etcd but its own keys.
package source

import (
	"context"
	"net/netip"
	"slices"
	"sync"
	"time"

	clog "github.com/coredns/coredns/plugin/pkg/log"

	"github.com/globaladdr/globaladdr/plugin/pkg/etcdclient"

	"github.com/prometheus/client_golang/prometheus"
)

// pluginName is the plugin the sources log and count for.
const pluginName = "globaladdr"

var log = clog.NewWithPlugin(pluginName)

// startWait bounds how long start-up waits for the sources' first values, so
// that a started or reloaded server answers at once when they are at hand,
// and is not held up long when they are not.
const startWait = time.Second

// Value is one state of the global addresses, as the sources delivered it.
type Value struct {
	// Addrs is the union of the last good value of each source, in the
	// order of the Corefile, each address once.
	Addrs []netip.Addr
	// Revision is the greatest etcd revision at which one of the values
	// the addresses come from was written (its key's ModRevision); 0 when
	// none comes from etcd. Every replica that reads the same etcd state
	// sees the same Revision.
	Revision int64
}

// source is a place the global addresses come from: a file or an etcd key.
type source interface {
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
	src  source
	line *line
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
	// first is closed once the source has reported for the first time.
	first chan struct{}
	once  sync.Once
}

func newFeed(src source) *feed { return &feed{src: src, first: make(chan struct{})} }

// String names the feed's source, as the Corefile does.
func (f *feed) String() string {
	if f.line != nil {
		return f.line.String()
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

// Set is the from sources of one block, and the sources of its map FROM
// from SOURCE lines. The global addresses are the union of the last good
// value of each from source, once every file and etcd source and at least
// one source at all has given one (see publish).
type Set struct {
	feeds []*feed
	// etcd is the connection of the etcd sources; nil when there are none.
	etcd *etcdConn
	// internal tells the addresses a value must not hold.
	internal func(netip.Addr) bool
	subs     subscribers

	mu      sync.Mutex // guards the feeds' state and the publication
	current Value
	servers []string // the server labels of the metrics
	use     func(Value)

	cancel context.CancelFunc // stops the sources; nil before start
	done   sync.WaitGroup     // the sources' goroutines
}

// Start starts every source, and waits up to a second for their first
// values. servers are the server labels of the metrics; shared is the
// block's etcd connection, which the etcd sources take unless the Corefile
// gives them their own. use is called with each new Value, before the
// subscribers are, on the goroutine of the source that read it.
func (s *Set) Start(servers []string, shared etcdclient.Config, use func(Value)) error {
	s.mu.Lock()
	s.servers, s.use = servers, use
	s.mu.Unlock()
	if s.etcd != nil {
		if err := s.etcd.share(shared); err != nil {
			return err
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	for _, f := range s.feeds {
		s.done.Add(1)
		go func() {
			defer s.done.Done()
			defer f.reported()
			if f.line != nil {
				f.line.run(ctx, reporter{s, f})
				return
			}
			f.src.run(ctx, func(text string, rev int64, err error) { s.report(f, text, rev, err) })
		}()
	}
	timeout := time.NewTimer(startWait)
	defer timeout.Stop()
	for _, f := range s.feeds {
		select {
		case <-f.first:
		case <-timeout.C:
			log.Warningf("no value from %s yet: answers that need a global address fail until there is one", f.logName())
			return nil
		}
	}
	return nil
}

// Stop stops every source, waits until their goroutines have ended, and
// closes the etcd connection if the sources opened it. Stopping twice, or
// before Start, does nothing more.
func (s *Set) Stop() error {
	if s.cancel != nil {
		s.cancel()
	}
	s.done.Wait()
	if s.etcd != nil {
		return s.etcd.close()
	}
	return nil
}

// report takes what the source of f delivered: a new value (written at etcd
// revision rev), or an error that keeps the last good addresses.
func (s *Set) report(f *feed, text string, rev int64, err error) {
	defer f.reported()
	if f.prefix != nil {
		s.reportPrefix(f, text, err)
		return
	}
	reason := reasonRead
	var addrs []netip.Addr
	if err == nil {
		reason = reasonInvalid
		addrs, err = parseValue(text, s.internal)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		if err.Error() != f.err {
			f.err = err.Error()
			keep := "keeping the last good global addresses"
			if f.addrs == nil {
				keep = "no global address from it yet: the external view answers SERVFAIL where it needs one, and is not ready, until it gives one"
			}
			log.Warningf("%s: %s; %s", f.logName(), err, keep)
			s.count(sourceErrorCount, f.String(), reason)
		}
		return
	}
	if f.err != "" && f.addrs != nil {
		log.Infof("%s: valid again", f.logName())
	}
	f.err = ""
	if !slices.Equal(addrs, f.addrs) || rev != f.rev {
		f.addrs, f.rev = addrs, rev
		s.publish()
	}
}

// publish makes the union of the feeds' addresses the global addresses,
// once every file and etcd feed has some, and there is at least one: it
// hands them to use, then to the subscribers. A learned feed that has none
// yet does not hold back the others; one whose last answer of a family was
// refused gives its last good addresses of that family only while no other
// feed gives that family (see withdrawn). A value written again unchanged
// is published too, for its revision.
func (s *Set) publish() {
	var v Value
	for _, f := range s.feeds {
		switch {
		case f.prefix != nil:
			continue
		case f.addrs == nil && f.line == nil:
			return
		}
		for _, a := range f.addrs {
			if !slices.Contains(v.Addrs, a) && !s.withdrawn(f, a) {
				v.Addrs = append(v.Addrs, a)
			}
		}
		v.Revision = max(v.Revision, f.rev)
	}
	switch {
	case len(v.Addrs) == 0:
		return
	case slices.Equal(v.Addrs, s.current.Addrs) && v.Revision == s.current.Revision:
		return
	case s.current.Addrs == nil:
		log.Infof("global addresses now %v", v.Addrs)
	case !slices.Equal(v.Addrs, s.current.Addrs):
		log.Infof("global addresses now %v (were %v)", v.Addrs, s.current.Addrs)
	}
	s.current = v
	s.use(v)
	s.subs.tell(v)
}

// withdrawn reports whether a, a last good address of f, is left out of the
// union: f's last answer of a's family was refused (the uplink it stands for
// has no address the Internet reaches), and another feed gives addresses of
// that family (a CGNAT router beside a STUN source that sees the public
// address).
func (s *Set) withdrawn(f *feed, a netip.Addr) bool {
	fam := family(a)
	if !f.refused[fam] {
		return false
	}
	for _, g := range s.feeds {
		if g != f && g.prefix == nil && !g.refused[fam] && slices.ContainsFunc(g.addrs, func(b netip.Addr) bool { return family(b) == fam }) {
			return true
		}
	}
	return false
}

// family returns 0 for an IPv4 address, 1 for an IPv6 one.
func family(a netip.Addr) int {
	if a.Is4() {
		return 0
	}
	return 1
}

// count adds one to the counter vec of each server, for labels.
func (s *Set) count(vec *prometheus.CounterVec, labels ...string) {
	for _, server := range s.servers {
		vec.WithLabelValues(append([]string{server}, labels...)...).Inc()
	}
}
