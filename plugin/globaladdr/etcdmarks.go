package globaladdr

import (
	"context"
	"errors"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/plugin"
	"github.com/coredns/coredns/plugin/etcd"

	"github.com/globaladdr/globaladdr/plugin/globaladdr/marks"
	"github.com/globaladdr/globaladdr/plugin/globaladdr/outside"
	"github.com/globaladdr/globaladdr/plugin/pkg/dnsname"
	"github.com/globaladdr/globaladdr/plugin/pkg/horizon"

	"github.com/miekg/dns"
)

// etcdMarks are the exposure marks of the keys that the block's etcd plugin
// answers from, in a block where it answers names no backend builds as the
// view shows them (etcdzone does, and reads the marks itself): the etcd
// plugin's answers carry no mark, so the view reads them from the same
// tree (package marks) and judges each record the etcd plugin answers by
// the mark of its owner name.
type etcdMarks struct {
	marks *marks.Marks
	// etcd is the block's etcd plugin, whose zones are the names judged:
	// read as it answers, since etcdzone takes those it answers for names
	// the zones lack from it when it starts (its fallthrough).
	etcd   *etcd.Etcd
	cancel context.CancelFunc
	done   chan struct{}
}

// errMarksUnknown fails a reply from the etcd plugin before the marks were
// read: nothing of it can be judged (fail closed).
var errMarksUnknown = errors.New("the exposure marks of the etcd plugin's tree are not read yet")

// followMarks starts following the marks of the zones of cfg's etcd
// plugin that lie outside the zones of the block's backends that build
// them as the view shows them (horizon.Backend), over its own connection,
// when the block has one and such zones.
func followMarks(cfg *dnsserver.Config, servers []string) *etcdMarks {
	e, ok := cfg.Handler("etcd").(*etcd.Etcd)
	if !ok || e.Client == nil {
		return nil
	}
	zones := unserved(cfg.Handlers(), e.Zones)
	if len(zones) == 0 {
		return nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	tree := path.Clean("/" + e.PathPrefix) // as the etcd plugin joins it
	em := &etcdMarks{marks: marks.New(tree, zones), etcd: e, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(em.done)
		em.marks.Follow(ctx, e.Client, func(err error) {
			log.Warningf("the exposure marks of %s: %v; the marks read last are kept", tree, err)
			for _, server := range servers {
				marksErrors.WithLabelValues(server).Inc()
			}
		})
	}()
	// As for the from sources, CoreDNS waits a little for the first read:
	// until then the etcd plugin's answers fail.
	select {
	case <-em.marks.Read():
	case <-time.After(firstRead):
		log.Warningf("the exposure marks of %s are not read yet: the etcd plugin's answers fail until they are", tree)
	}
	return em
}

// unserved returns those of zones, the etcd plugin's, that lie outside
// every zone that a backend among handlers serves as the view shows it:
// the zones whose names the etcd plugin answers, and all an etcd role
// limited to them lets it read.
func unserved(handlers []plugin.Handler, zones []string) []string {
	var served []string
	for _, h := range handlers {
		if b, ok := h.(horizon.Backend); ok {
			served = append(served, b.ServedZones()...)
		}
	}
	var out []string
	for _, z := range zones {
		if !slices.ContainsFunc(served, func(s string) bool { return dnsname.In(z, s) }) {
			out = append(out, z)
		}
	}
	return out
}

// firstRead is how long start-up waits for the marks' first read.
const firstRead = time.Second

// stop stops following the marks, and returns once it has.
func (em *etcdMarks) stop() {
	em.cancel()
	<-em.done
}

// covers reports whether name, a lower-case FQDN, is in the etcd plugin's
// zones (lower-case FQDNs too). It runs for every record of every reply,
// and does not allocate, unlike plugin.Zones.Matches.
func (em *etcdMarks) covers(name string) bool {
	return slices.ContainsFunc(em.etcd.Zones, func(z string) bool { return dnsname.In(name, z) })
}

// withholds reports whether the view shows nothing at name, a question's
// name in the etcd plugin's zones, by its mark: the apex of a zone exists
// whatever its keys say (its SOA and NS are the etcd plugin's own), before
// the marks are read the reply fails instead, and a name no key holds yet
// (one that does not exist, or one the etcd plugin may read before the
// marks' watch brings it) is the reply's to judge (filter).
func (em *etcdMarks) withholds(p *outside.Policy, name string) bool {
	name = strings.ToLower(name)
	if em.isApex(name) || !em.marks.Loaded() {
		return false
	}
	m, ok := em.marks.Of(name)
	return ok && !p.Exposes(name, m)
}

// shows reports whether the policy shows name, a lower-case FQDN in the
// etcd plugin's zones, by its mark in the tree: a name no key holds is
// withheld.
func (em *etcdMarks) shows(p *outside.Policy, name string) bool {
	m, _ := em.marks.Of(name)
	return p.Exposes(name, m)
}

// isApex reports whether name is one of the etcd plugin's zones.
func (em *etcdMarks) isApex(name string) bool { return slices.Contains(em.etcd.Zones, name) }

// filter returns m without the records the marks withhold (m itself when
// there are none), counting them in t: a record owned by a name in the etcd
// plugin's zones is shown only as the policy shows its owner's mark, and a
// name no key holds is withheld; the apex's SOA and NS are the etcd
// plugin's own, and pass. Before the marks are read, a reply with a record
// to judge fails with errMarksUnknown.
func (em *etcdMarks) filter(p *outside.Policy, m *dns.Msg, t *outside.Tally) (*dns.Msg, error) {
	an, ns, ex := em.withheld(p, m.Answer), em.withheld(p, m.Ns), em.withheld(p, m.Extra)
	if an+ns+ex == 0 {
		return m, nil
	}
	if !em.marks.Loaded() {
		return nil, errMarksUnknown
	}
	if em.await(p, m) {
		an, ns, ex = em.withheld(p, m.Answer), em.withheld(p, m.Ns), em.withheld(p, m.Extra)
	}
	out := *m
	out.Answer, out.Ns, out.Extra = em.shown(p, m.Answer, an), em.shown(p, m.Ns, ns), em.shown(p, m.Extra, ex)
	t.Hidden += an + ns + ex
	return &out, nil
}

// lag bounds how long a reply waits for the marks of the names it holds
// that no key of the marks holds yet: the etcd plugin read them from etcd a
// moment before the marks' watch brings them (a new host). Past it, they
// are withheld.
const lag = time.Second

// await waits, up to lag in all, for the marks of the owners of the
// records of m that the marks withhold because no key holds their names
// yet, and reports whether there were any.
func (em *etcdMarks) await(p *outside.Policy, m *dns.Msg) bool {
	deadline := time.Now().Add(lag)
	waited := false
	for _, rrs := range [][]dns.RR{m.Answer, m.Ns, m.Extra} {
		for _, rr := range rrs {
			name := strings.ToLower(rr.Header().Name)
			if _, known := em.marks.Of(name); known || !em.withholdsRecord(p, rr) {
				continue
			}
			waited = true
			em.marks.Await(name, time.Until(deadline))
		}
	}
	return waited
}

// withheld counts the records of rrs that the marks withhold.
func (em *etcdMarks) withheld(p *outside.Policy, rrs []dns.RR) int {
	n := 0
	for _, rr := range rrs {
		if em.withholdsRecord(p, rr) {
			n++
		}
	}
	return n
}

// shown returns rrs without the n records the marks withhold, in a slice of
// its own.
func (em *etcdMarks) shown(p *outside.Policy, rrs []dns.RR, n int) []dns.RR {
	if n == 0 {
		return rrs
	}
	out := make([]dns.RR, 0, len(rrs)-n)
	for _, rr := range rrs {
		if !em.withholdsRecord(p, rr) {
			out = append(out, rr)
		} else {
			log.Debugf("%s %s is withheld from the external view by its mark", rr.Header().Name, dns.TypeToString[rr.Header().Rrtype])
		}
	}
	return out
}

// withholdsRecord reports whether the marks withhold rr.
func (em *etcdMarks) withholdsRecord(p *outside.Policy, rr dns.RR) bool {
	hdr := rr.Header()
	switch hdr.Rrtype {
	case dns.TypeOPT, dns.TypeTSIG:
		return false
	}
	name := strings.ToLower(hdr.Name)
	if !em.covers(name) {
		return false
	}
	if (hdr.Rrtype == dns.TypeSOA || hdr.Rrtype == dns.TypeNS) && em.isApex(name) {
		return false
	}
	return !em.shows(p, name)
}

// unexposed reports whether the view shows nothing at name, a question's
// name, by the marks: for a name in the etcd plugin's zones, its mark in the
// tree (withholds); for any other, expose marked alone (no other backend
// marks its records).
func (g *GlobalAddr) unexposed(name string) bool {
	if em := g.etcdMarks.Load(); em != nil && em.covers(strings.ToLower(name)) {
		return em.withholds(g.policy, name)
	}
	return g.policy.Unmarked(name)
}
