package etcdxfr

import (
	"encoding/json"
	"strings"

	"github.com/coredns/coredns/plugin/etcd/msg"
	"github.com/coredns/coredns/plugin/pkg/dnsutil"

	"github.com/miekg/dns"
	"go.etcd.io/etcd/api/v3/mvccpb"
)

// records returns the records of the etcd keys kvs of z, each at its own
// owner name: the key's name without the labels its TargetStrip says are
// not part of it (external-dns stores each target under a random label
// below the name). The records are made as the etcd plugin makes them: an IP
// address in host is an A or AAAA record, a name a CNAME record, and a text
// without an address a TXT record. A key that does not hold a service is
// skipped, with a warning.
func (x *EtcdXfr) records(z *zone, kvs []*mvccpb.KeyValue) []dns.RR {
	rrs := make([]dns.RR, 0, len(kvs))
	for _, kv := range kvs {
		s := new(msg.Service)
		if err := json.Unmarshal(kv.Value, s); err != nil {
			log.Warningf("zone %s: %s: %v; not transferred", z.name, kv.Key, err)
			continue
		}
		owner, ok := ownerName(string(kv.Key), s.TargetStrip)
		if !ok || !dns.IsSubDomain(z.name, owner) {
			log.Warningf("zone %s: %s: its name is outside the zone; not transferred", z.name, kv.Key)
			continue
		}
		s.TTL = x.etcd.TTL(kv, s)
		if rr := record(s, owner); rr != nil {
			rrs = append(rrs, rr)
		}
	}
	return rrs
}

// ownerName returns the name the etcd key stands for, without its strip
// leftmost labels.
func ownerName(key string, strip int) (string, bool) {
	labels := dns.SplitDomainName(msg.Domain(key))
	if strip < 0 || strip > len(labels) {
		return "", false
	}
	return strings.ToLower(dnsutil.Join(labels[strip:]...)), true
}

// record returns the record of s at owner, nil when s makes none: neither
// host nor text, or a CNAME to its own name.
func record(s *msg.Service, owner string) dns.RR {
	what, ip := s.HostType()
	switch {
	case what == dns.TypeA:
		return s.NewA(owner, ip)
	case what == dns.TypeAAAA:
		return s.NewAAAA(owner, ip)
	case what == dns.TypeTXT:
		return s.NewTXT(owner)
	case s.Host != "" && !strings.EqualFold(dns.Fqdn(s.Host), owner):
		return s.NewCNAME(owner, s.Host)
	}
	return nil
}
