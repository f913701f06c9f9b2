// Package records is external-dns's endpoints as SkyDNS keys in etcd,
// written and read the way external-dns's in-tree coredns provider writes
// and reads them, so that either can take over a tree the other wrote: each
// target of a record under its own key, one random label of 8 hexadecimal
// digits below the name (targetstrip 1), a PTR record's (and the TXT
// records of a reverse name) at the name itself. It is the store behind
// the webhook plugin: Records answers external-dns's GET /records, Apply
// its change sets, Check its adjustendpoints.
//
// Unlike the coredns provider, it reads the keys of a name from etcd
// rather than from labels external-dns hands back, writes each change set
// in transactions that check what they read, keeps each TXT record's text in
// a key of its own (the etcd plugin serves a text beside a host as a TXT
// record alone), and stores the exposure mark (horizon.MarkField).
package records

import (
	"cmp"
	"context"
	"maps"
	"slices"
	"strings"

	"github.com/globaladdr/globaladdr/plugin/webhook/wire"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// Store holds the endpoints of Zones in etcd, below Prefix, and the
// ownership records of their apexes (apexOwnership).
type Store struct {
	KV clientv3.KV
	// Prefix is the tree's path with its final slash, as the etcd
	// plugin's path gives it: /skydns/.
	Prefix string
	// Zones are the domains the store holds, lower case and without the
	// final dot; none for every name.
	Zones []string
	// MaxOps is the most operations one transaction holds: etcd's
	// --max-txn-ops (128 by default).
	MaxOps int
}

// Records returns the endpoints the tree holds in the store's zones, one per
// name and type, and one per ownership text (isOwnership), ordered by name,
// type and first target, their targets sorted, each with the TTL of its
// first key and its keys' marks (mixedMark when they differ).
func (s *Store) Records(ctx context.Context) ([]*wire.Endpoint, error) {
	_, slots, err := s.read(ctx)
	if err != nil {
		return nil, err
	}
	// set is an endpoint's record set: owned is the text of an ownership
	// record, "" for the others.
	type set struct{ name, typ, owned string }
	byset := map[set]*wire.Endpoint{}
	add := func(sl *slot, typ, target string) {
		k := set{name: sl.name, typ: typ}
		if typ == "TXT" && isOwnership(target) {
			k.owned = target
		}
		ep := byset[k]
		if ep == nil {
			ep = &wire.Endpoint{DNSName: sl.name, RecordType: typ, RecordTTL: int64(sl.ttl), ProviderSpecific: sl.properties()}
			byset[k] = ep
		} else {
			mixMarks(ep, sl.attrs)
		}
		if !slices.Contains(ep.Targets, target) {
			ep.Targets = append(ep.Targets, target)
		}
	}
	for _, sl := range slots {
		if sl.host != "" {
			add(sl, sl.hostType, sl.host)
		}
		if sl.hasText {
			add(sl, "TXT", sl.text)
		}
	}
	eps := slices.Collect(maps.Values(byset))
	for _, ep := range eps {
		slices.Sort(ep.Targets)
	}
	slices.SortFunc(eps, func(a, b *wire.Endpoint) int {
		return cmp.Or(strings.Compare(a.DNSName, b.DNSName), strings.Compare(a.RecordType, b.RecordType), strings.Compare(a.Targets[0], b.Targets[0]))
	})
	return eps, nil
}

// Reachable returns nil when etcd answers a read of the tree: one key
// below Prefix, no value, read as Records reads (linearizable).
func (s *Store) Reachable(ctx context.Context) error {
	_, err := s.KV.Get(ctx, s.Prefix, clientv3.WithPrefix(), clientv3.WithLimit(1), clientv3.WithKeysOnly())
	return err
}

// read returns the slots of the store's zones, in key order, and the etcd
// revision they were read at.
func (s *Store) read(ctx context.Context) (int64, []*slot, error) {
	resp, err := s.KV.Get(ctx, s.Prefix, clientv3.WithPrefix())
	if err != nil {
		return 0, nil, err
	}
	var slots []*slot
	for _, kv := range resp.Kvs {
		sl, ok := readSlot(string(kv.Key), kv.Value, s.Prefix)
		if ok && (s.holds(sl.name) || (sl.host == "" && s.apexOwnership(sl.name, sl.text))) {
			slots = append(slots, sl)
		}
	}
	return resp.Header.Revision, slots, nil
}

// mixedMark is the mark Records gives a record set whose keys are marked
// otherwise: no value external-dns sends, so that its next sync writes the
// set again, and the view withholds the name meanwhile (horizon.ParseMark,
// horizon.ParseRoute).
const mixedMark = "mixed"

// mixMarks gives ep, the endpoint of a record set, mixedMark for each mark
// that a's key, another of the set's, has otherwise (a change cut short).
func mixMarks(ep *wire.Endpoint, a attrs) {
	for i, m := range markFields {
		j := slices.IndexFunc(ep.ProviderSpecific, func(p wire.Property) bool { return p.Name == m.property })
		v := a.marks[i]
		switch {
		case j < 0 && v != nil:
			ep.ProviderSpecific = append(ep.ProviderSpecific, wire.Property{Name: m.property, Value: mixedMark})
		case j >= 0 && (v == nil || ep.ProviderSpecific[j].Value != *v):
			ep.ProviderSpecific[j].Value = mixedMark
		}
	}
}

// holds reports whether name, lower case and without the final dot, is at
// or below one of the store's zones.
func (s *Store) holds(name string) bool {
	if len(s.Zones) == 0 {
		return true
	}
	return slices.ContainsFunc(s.Zones, func(z string) bool {
		return name == z || strings.HasSuffix(name, "."+z)
	})
}

// keyOf returns the key of name itself: its labels reversed below the
// prefix (app.example.com: /skydns/com/example/app).
func (s *Store) keyOf(name string) string {
	labels := strings.Split(name, ".")
	slices.Reverse(labels)
	return s.Prefix + strings.Join(labels, "/")
}

// nameOf returns the owner name of key: its labels below prefix, reversed,
// without the strip leftmost ones.
func nameOf(key, prefix string, strip int) (string, bool) {
	rest, ok := strings.CutPrefix(key, prefix)
	if !ok || rest == "" {
		return "", false
	}
	labels := strings.Split(rest, "/")
	slices.Reverse(labels)
	if strip < 0 || strip >= len(labels) || slices.Contains(labels, "") {
		return "", false
	}
	return strings.ToLower(strings.Join(labels[strip:], ".")), true
}

// isReverse reports whether name is in a reverse-mapping zone.
func isReverse(name string) bool {
	return strings.HasSuffix(name, ".in-addr.arpa") || strings.HasSuffix(name, ".ip6.arpa")
}
