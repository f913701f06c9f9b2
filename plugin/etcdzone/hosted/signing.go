package hosted

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coredns/coredns/request"
	"github.com/globaladdr/globaladdr/plugin/etcdzone/signer"
	"github.com/globaladdr/globaladdr/plugin/etcdzone/zone"

	"github.com/miekg/dns"
)

// signing is one zone's signer and what keeps the zone signed: the signer
// is given each version of the zone before it is published, and the
// signatures are refreshed, and the keys read again, from memory on a timer,
// whatever etcd does.
type signing struct {
	// mu guards s, and makes it change together with the zone's current
	// version: queries with DO add their signatures, and transfers read s,
	// under it. A lookup, which may chase CNAMEs into any zone, runs
	// before, under no lock (see signedAnswer).
	mu sync.RWMutex
	s  *signer.Signer

	// paths are the key files' prefixes and directories; keys names
	// the keys last read from them, refused those last read that the
	// signer refused (their warning is not repeated).
	paths         []string
	keys, refused string
	// every is how often the signatures are checked, and the keys read.
	every time.Duration
	// due is set when the timer asks for a refresh; the zone's builder
	// takes it (see follower.Rejudge).
	due atomic.Bool
	// made is when the signatures the zone publishes next were made: a
	// part of its stamp. Only the zone's builder reads and writes it.
	made time.Time
}

// stampText says how g signs, for the zone's stamp: with which keys and
// denial, and when the signatures were made (signatures made anew make
// the zone anew).
func (g *signing) stampText() string {
	denial := "nsec3"
	if g.s.NSEC() {
		denial = "nsec"
	}
	return fmt.Sprintf("%s %s, signed at %s", g.keys, denial, g.made.UTC().Format(time.RFC3339Nano))
}

// Sign has z signed with the keys in paths (key files' prefixes and
// directories of key files) under opts, from its first version on; the
// signer starts at now.
func (z *Zone) Sign(paths []string, opts signer.Options, now time.Time) error {
	g := &signing{paths: paths, every: tick(opts)}
	keys, names, err := readKeys(g.paths, z.name)
	if err != nil {
		return err
	}
	if g.s, err = signer.New(z.name, keys, opts, now); err != nil {
		return err
	}
	g.keys = names
	z.signing = g
	return nil
}

// KeepSigned has a signed z's signatures refreshed and its keys read again
// on a timer, until ctx ends; it returns at once when z is not signed.
func (z *Zone) KeepSigned(ctx context.Context) {
	if z.signing != nil {
		z.signing.run(ctx, z)
	}
}

// tick returns how often a zone signed with opts is checked: a tenth of the
// refresh period, at most 30 s (the keys are read as often), at least 1 s.
func tick(opts signer.Options) time.Duration {
	r := opts.Refresh
	if r == 0 {
		r = 5 * 24 * time.Hour
	}
	return min(max(r/10, time.Second), 30*time.Second)
}

// readKeys returns the keys of zone in paths (prefixes of key files of any
// zone, directories of key files), and a text that names them.
func readKeys(paths []string, name string) ([]*signer.Key, string, error) {
	var keys []*signer.Key
	for _, p := range paths {
		if fi, err := os.Stat(p); err == nil && fi.IsDir() {
			ks, err := signer.ReadKeys(p, name)
			if err != nil && !strings.Contains(err.Error(), "no key") {
				return nil, "", err
			}
			keys = append(keys, ks...)
			continue
		}
		k, err := signer.ReadKey(p)
		if err != nil {
			return nil, "", err
		}
		if k.DNSKEY.Hdr.Name == name {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return nil, "", fmt.Errorf("no key of the zone")
	}
	var names []string
	for _, k := range keys {
		names = append(names, fmt.Sprintf("%s/%d", k.Prefix, k.Tag()))
	}
	slices.Sort(names)
	return keys, strings.Join(names, " "), nil
}

// run asks for a refresh of z every g.every (less up to a tenth, so that
// the zones' refreshes spread), until ctx ends.
func (g *signing) run(ctx context.Context, z *Zone) {
	for {
		wait := g.every - rand.N(g.every/10+1) // #nosec G404 -- jitter, not a secret
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
			g.due.Store(true)
			z.rejudgeSoon()
		}
	}
}

// publish makes next z's current version, after the change d from prev
// (nil: next is the first), and returns the change as an IXFR carries it.
// A signed zone's signer is given the RRsets d touched (all of next when it
// is the first) before next is published, and the change gains the
// signer's.
func (z *Zone) publish(prev, next *zone.Version, d zone.Delta) zone.Delta {
	g := z.signing
	if g == nil {
		z.current.Store(next)
		return d
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	var changes []signer.RRset
	if prev == nil {
		rrs := next.Records()
		changes = signer.Sets(rrs[:len(rrs)-1])
	} else {
		changes = next.Changes(d)
	}
	diff, err := g.s.Apply(changes, time.Now())
	if err != nil {
		log.Warningf("zone %s: signing: %v", z, err)
	}
	next.Signed(g.s.Count())
	z.current.Store(next)
	g.report(z)
	return withDiff(d, diff)
}

// withDiff returns d with the signer's change diff.
func withDiff(d zone.Delta, diff signer.Diff) zone.Delta {
	d.Removed = append(slices.Clip(d.Removed), diff.Removed...)
	d.Added = append(slices.Clip(d.Added), diff.Added...)
	return d
}

// refresh signs z's signatures that expire soon anew, and reads its keys
// again (a new key is published, one gone retired: see signer.SetKeys); if
// that changes the zone, it publishes it under a new serial, and the
// secondaries are notified. The new serial is that of the zone's stamp
// written anew (see stamped), taken before g.mu, which holds up the queries
// with DO while it is held; without a stamp it is one more. It runs in the
// goroutine that builds z.
func (z *Zone) refresh() {
	g := z.signing
	prev := z.current.Load()
	if prev == nil {
		return
	}
	now := time.Now()
	keys, names, err := readKeys(g.paths, z.name)
	if err != nil {
		log.Warningf("zone %s: reading the keys: %v; signing with those read before", z, err)
		names = g.keys
	}
	newKeys := names != g.keys && names != g.refused
	g.mu.RLock()
	due := newKeys || g.s.Due(now)
	g.mu.RUnlock()
	if !due {
		return
	}
	g.made = now
	s, vouched, ready := z.stamped(prev.State, z.serial)
	if !ready {
		return // tried again at the next tick, once the tree holds the zone's changes
	}
	if s == z.serial {
		s = s.Bumped()
	}

	g.mu.Lock()
	var diff signer.Diff
	if newKeys {
		if diff, err = g.s.SetKeys(keys, now); err != nil {
			log.Warningf("zone %s: new keys %s: %v; signing with those read before", z, names, err)
			g.refused = names
		} else {
			log.Infof("zone %s: keys %s", z, names)
			g.keys = names
		}
	}
	r := g.s.Refresh(now)
	diff.Removed, diff.Added = append(diff.Removed, r.Removed...), append(diff.Added, r.Added...)
	if diff.Empty() {
		g.mu.Unlock()
		return
	}
	next, d := zone.Build(z.config, z.idx, prev, map[string]bool{}, prev.State, s)
	soa, err := g.s.Apply(next.Changes(d), now)
	if err != nil {
		log.Warningf("zone %s: signing: %v", z, err)
	}
	diff.Removed, diff.Added = append(diff.Removed, soa.Removed...), append(diff.Added, soa.Added...)
	next.Signed(g.s.Count())
	z.current.Store(next)
	g.report(z)
	g.mu.Unlock()
	z.setSerial(next.Serial)
	if z.published(next, vouched || z.block.Stamps == nil) {
		z.journal.Add(withDiff(d, diff))
	}
	z.announceSoon()
}

// report sets the metric of when z's first signature expires; g.mu is
// held.
func (g *signing) report(z *Zone) {
	if t := g.s.Expiry(); !t.IsZero() {
		z.meter.SignaturesExpire(t.Unix())
	}
}

// signedAnswer is answer for a signed zone. The lookup, which may chase a
// CNAME into any of the plugin's zones (this one too), runs under no lock:
// a read lock taken again while a writer waits would deadlock (see
// sync.RWMutex). Only the signatures are added under z's read lock, from
// the signer of the version looked up; when a change published another
// version meanwhile, the lookup is made again in it.
func (z *Zone) signedAnswer(ctx context.Context, state request.Request) *dns.Msg {
	g := z.signing
	for range signedTries {
		v := z.current.Load()
		if v == nil {
			return serverFailure(state)
		}
		var m *dns.Msg
		if !v.FromSigner(state) {
			m = v.Answer(ctx, state, z.block.Served)
			if !state.Do() {
				return m
			}
		}
		g.mu.RLock()
		if z.current.Load() == v {
			m = v.SignedAnswer(state, m, g.s)
			g.mu.RUnlock()
			return m
		}
		g.mu.RUnlock()
	}
	log.Debugf("zone %s: %s %s: the zone changed under %d lookups in a row", z, state.Name(), state.Type(), signedTries)
	return serverFailure(state)
}

// signedTries is how many lookups a query with DO makes in versions of a
// zone that changes meanwhile before it gets SERVFAIL. Changes are paced
// by the zone's builds, which take longer than a lookup.
const signedTries = 8

// signedRecords returns what an AXFR of a signed zone gets: the signed
// zone, SOA first and last.
func (z *Zone) signedRecords() []dns.RR {
	g := z.signing
	g.mu.RLock()
	defer g.mu.RUnlock()
	rrs := g.s.Records()
	return append(rrs, rrs[0])
}
