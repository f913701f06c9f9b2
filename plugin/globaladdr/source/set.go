// Package source keeps a globaladdr block's global addresses up to date from
// the places its Corefile names (from file, from etcd, and the probes of
// package probe): it reads and watches them, retries what fails, checks and
// votes on what the probes learn, merges the sources' values, and announces
// each new state to the plugin and to subscribers. It knows nothing of DNS
// replies, and reads nothing from etcd but its own keys.
package source

import (
	"context"
	"net/netip"
	"slices"
	"sync"
	"time"

	"github.com/globaladdr/globaladdr/plugin/globaladdr/source/uplink"
	"github.com/globaladdr/globaladdr/plugin/pkg/etcdclient"

	"github.com/prometheus/client_golang/prometheus"
)

// startWait bounds how long start-up waits for the sources' first values, so
// that a started or reloaded server answers at once when they are at hand,
// and is not held up long when they are not.
const startWait = time.Second

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

	// uplinks are the block's named uplinks, whose checks run every
	// every; chooser chooses which of them the union serves.
	uplinks []*uplink.Uplink
	every   time.Duration
	chooser uplink.Chooser
}

// Start starts every source, and waits up to a second for their first
// values. servers are the server labels of the metrics; shared is the
// block's etcd connection, which the etcd sources take unless the Corefile
// gives them their own. use is called with each new Value, before the
// subscribers are, on the goroutine of the source that read it.
func (s *Set) Start(servers []string, shared etcdclient.Config, use func(Value)) error {
	s.mu.Lock()
	s.servers, s.use = servers, use
	for _, u := range s.uplinks {
		u.Start(servers)
	}
	if len(s.uplinks) > 0 {
		s.chooser.Start(servers)
	}
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
			r := reporter{s, f}
			if f.line != nil {
				f.line.run(ctx, r)
				return
			}
			f.src.run(ctx, r.value)
		}()
	}
	for _, u := range s.uplinks {
		if u.Check != nil {
			s.done.Add(1)
			go func() {
				defer s.done.Done()
				warnTarget(ctx, u, s.internal)
				u.RunCheck(ctx, s.every, func(err error) { s.checked(u, err) })
			}()
		}
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

// Subscribe registers f to be called with each new Value of s, after the
// function given to Start has taken it, on the goroutine of the source that
// read it: f must return at once (signal a channel, say). The returned
// function removes the subscription; call it when the subscriber shuts down.
func (s *Set) Subscribe(f func(Value)) (unsubscribe func()) { return s.subs.add(f) }

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

// publish makes the union of the feeds' addresses the global addresses,
// once every file and etcd feed has some, and there is at least one: it
// hands them to use, then to the subscribers. Of the named uplinks, only
// those up, and of them those of the best priority, are in the union
// (uplink.Chooser). A learned feed that has none
// yet does not hold back the others; one whose last answer of a family was
// refused gives its last good addresses of that family only while no other
// feed gives that family (see withdrawn). A value written again unchanged
// is published too, for its revision.
func (s *Set) publish() {
	var v Value
	var offers []uplink.Offer
	for _, f := range s.feeds {
		switch {
		case f.prefix != nil:
			continue
		case f.addrs == nil && f.line == nil:
			return
		}
		o := uplink.Offer{Uplink: f.up}
		for _, a := range f.addrs {
			if !s.withdrawn(f, a) {
				o.Addrs = append(o.Addrs, a)
			}
		}
		offers = append(offers, o)
		v.Revision = max(v.Revision, f.rev)
	}
	v.Addrs = s.chooser.Choose(offers, s.current.Addrs)
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

// checked takes one run of u's check, which failed with err (nil: passed):
// with whether u's learned sources answered at their last round, it is a
// round of u's, and when it changes u's state the union is published
// again.
func (s *Set) checked(u *uplink.Uplink, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, f := range s.feeds {
		if err == nil && f.up == u && f.line != nil && f.failure != nil {
			err = f.failure // the path through u fails its source's probes
		}
	}
	if u.Observe(err) {
		s.publish()
	}
}

// count adds one to the counter vec of each server, for labels.
func (s *Set) count(vec *prometheus.CounterVec, labels ...string) {
	for _, server := range s.servers {
		vec.WithLabelValues(append([]string{server}, labels...)...).Inc()
	}
}

// lastSuccess sets the time of by's last usable answer to now.
func (s *Set) lastSuccess(by string) {
	now := float64(time.Now().UnixNano()) / 1e9
	for _, server := range s.servers {
		lastSuccess.WithLabelValues(server, by).Set(now)
	}
}
