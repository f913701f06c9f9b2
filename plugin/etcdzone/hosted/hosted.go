// Package hosted is one zone of etcdzone, from the etcd tree to its
// answers: it follows the zone's keys in the tree (package etcdtree), builds
// a version of the zone from them as the block's view shows it (package
// zone), gives it its serial (package stamp), signs it (package signer),
// publishes it whole, keeps the journal of its changes, and answers queries
// from the current version. What the zones of a server block share (the
// view, the tree, the stamps) is handed to each zone as a Block.
package hosted

import (
	"context"
	"fmt"
	"sync/atomic"

	clog "github.com/coredns/coredns/plugin/pkg/log"
	"github.com/coredns/coredns/request"
	"github.com/globaladdr/globaladdr/plugin/etcdzone/etcdtree"
	"github.com/globaladdr/globaladdr/plugin/etcdzone/stamp"
	"github.com/globaladdr/globaladdr/plugin/etcdzone/zone"
	"github.com/globaladdr/globaladdr/plugin/pkg/dnsname"
	"github.com/globaladdr/globaladdr/plugin/pkg/horizon"

	"github.com/miekg/dns"
)

var log = clog.NewWithPlugin("etcdzone")

// Block is what the zones of one server block share. Its fields are set
// while the block starts, before any of its zones follows the tree (the
// zones are made with it, the stamps and the zones' names set after), and
// not changed after.
type Block struct {
	// View is the block's view; nil when it has none.
	View horizon.View
	// Tree is the etcd tree the zones follow; TreeText says which in the
	// zones' stamps (its path and the TTLs of leases).
	Tree     *etcdtree.Tree
	TreeText string
	// Etcd names etcd's connection in the log; Key the server block (its
	// keys), beside each zone.
	Etcd fmt.Stringer
	Key  string
	// Stamps keeps the zones' stamps; nil when the block transfers
	// nothing.
	Stamps *stamp.Keeper
	// Zones are the names of the block's zones in the Corefile's order,
	// Names the same by name.
	Zones []string
	Names dnsname.Zones[bool]
	// NameServers are the name servers the Corefile names (in ns and
	// in delegations), each true when the Corefile gives its glue.
	NameServers map[string]bool
	// Served reports whether a name lies in one of the block's zones,
	// outside the delegations: the names whose addresses an answer adds.
	Served func(name string) bool
	// Published holds a signal while a zone was published for the first
	// time since its reader last looked.
	Published chan struct{}
}

// Meter takes what a zone's metrics count.
type Meter interface {
	// Loaded says whether the zone is loaded.
	Loaded(bool)
	// Records says how many records the zone's current version holds.
	Records(n int)
	// Serial says the zone's serial.
	Serial(uint32)
	// Skipped counts a key that holds no record the zone can serve.
	Skipped()
	// Failed counts a failed read or watch of the zone's keys.
	Failed()
	// SignaturesExpire says when the first of the zone's signatures
	// expires (Unix time).
	SignaturesExpire(unix int64)
}

// Zone is one zone, as it follows etcd and serves its view.
type Zone struct {
	block *Block
	// name is the zone's name, lower case and fully qualified.
	name string
	// apexKey is the etcd key of the zone's apex: its keys are at and
	// below it, but for those of the block's zones inside it.
	apexKey string
	// fixed are the records the Corefile puts into the zone, by a source
	// name of their own: NS records of delegations, glue, DS records.
	fixed map[string][]dns.RR
	// server names the server block in the serials kept across reloads.
	server string
	meter  Meter

	// config is what the Corefile says about the zone.
	config *zone.Zone
	// current is the zone as queries and transfers see it; nil until it
	// is loaded (and, with a view, until the view can judge).
	current atomic.Pointer[zone.Version]
	// journal keeps the last changes of current.
	journal *zone.Journal
	// signing signs the zone; nil when it is not signed.
	signing *signing

	// Changed only by the goroutine that follows the etcd tree: the index
	// (nil until loaded), the serial (current's, or the next one's while
	// the view can't judge), and the view's revision the serial counts.
	idx     *zone.Index
	serial  zone.Serial
	viewRev int64

	// stamp is the zone's stamp as the instance last kept it in etcd (see
	// package stamp), "" when it has not, and stampRev the revision at
	// which the key took it. unsure is set while the current version's
	// serial is not vouched for by the stamp (see ixfrFrom).
	stamp    string
	stampRev int64
	unsure   bool
	// waiting is set while a new state of the view (or the zone's first
	// version) waits for the tree to hold the zone's changes up to the
	// stamp's revision (see commit).
	waiting bool

	// serialMoved holds a signal while a move of the serial waits to be
	// announced to the secondaries.
	serialMoved chan struct{}
	// sub is the zone's share of the etcd tree, once it joined; it has
	// the zone judged again (the view's global addresses changed, or the
	// signatures are due), on the tree's goroutine (see rejudgeSoon).
	sub atomic.Pointer[etcdtree.Sub]
}

// New returns the zone config describes, of block b on server (a name for
// the serials kept across reloads), whose keys are at and below apexKey,
// with the changes journal keeps, counted by m.
func New(b *Block, config *zone.Zone, apexKey, server string, journal *zone.Journal, m Meter) *Zone {
	return &Zone{
		block:       b,
		name:        config.Name,
		apexKey:     apexKey,
		fixed:       map[string][]dns.RR{},
		server:      server,
		meter:       m,
		config:      config,
		journal:     journal,
		serialMoved: make(chan struct{}, 1),
	}
}

// String returns the zone's name and its server block's keys, as the log
// names the zone: two blocks (two views) may serve one zone.
func (z *Zone) String() string {
	if z.block.Key == "" {
		return z.name
	}
	return z.name + " (block " + z.block.Key + ")"
}

// Name returns the zone's name, lower case and fully qualified.
func (z *Zone) Name() string { return z.name }

// ApexKey returns the etcd key of the zone's apex.
func (z *Zone) ApexKey() string { return z.apexKey }

// Config returns what the Corefile says about the zone.
func (z *Zone) Config() *zone.Zone { return z.config }

// Fix makes rrs the records of the Corefile that source names (a
// delegation, glue, DS records) in the zone, in place of any it named
// before; before the zone follows the tree.
func (z *Zone) Fix(source string, rrs ...dns.RR) { z.fixed[source] = rrs }

// Current returns the version queries and transfers see; nil until the
// zone is loaded.
func (z *Zone) Current() *zone.Version { return z.current.Load() }

// SerialMoved receives a signal when the serial moved since the last one:
// a NOTIFY is due.
func (z *Zone) SerialMoved() <-chan struct{} { return z.serialMoved }

// Answer returns the reply to state's query for a name of the zone, from
// its current version; a zone not loaded yet gets SERVFAIL.
func (z *Zone) Answer(ctx context.Context, state request.Request) *dns.Msg {
	if z.signing != nil {
		return z.signedAnswer(ctx, state)
	}
	v := z.current.Load()
	if v == nil {
		return serverFailure(state)
	}
	return v.Answer(ctx, state, z.block.Served)
}

// Records returns what an AXFR of version v gets: the zone, SOA first and
// last, signed when the zone is.
func (z *Zone) Records(v *zone.Version) []dns.RR {
	if z.signing != nil {
		return z.signedRecords()
	}
	return v.Records()
}

// Incremental returns what an IXFR from serial to version v gets from the
// journal (RFC 1995), and false when the journal can't tell.
func (z *Zone) Incremental(v *zone.Version, serial uint32) ([]dns.RR, bool) {
	return z.journal.Incremental(v, serial)
}

// serverFailure returns the SERVFAIL reply to state's query.
func serverFailure(state request.Request) *dns.Msg {
	m := new(dns.Msg)
	m.SetRcode(state.Req, dns.RcodeServerFailure)
	return m
}
