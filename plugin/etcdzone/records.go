package etcdzone

import (
	"encoding/json"
	"fmt"
	"net"
	"strings"

	"github.com/coredns/coredns/plugin/etcd/msg"
	"github.com/coredns/coredns/plugin/pkg/dnsutil"

	"github.com/miekg/dns"
	"go.etcd.io/etcd/api/v3/mvccpb"
)

// records returns the records the etcd key kv of zone z holds, at their owner
// name: the key's name without the labels its targetstrip says are not part
// of it (external-dns stores each target under a random label below the
// name). They are made as the etcd plugin makes them, with the TTL it gives
// them: an IP address in host is an A or AAAA record, a name is a CNAME
// record (a PTR record in a reverse zone), and a text without host a TXT
// record. A text beside a host (external-dns's ownership text in the format
// of its releases before v0.18) is a TXT record too, beside the host's: the
// etcd plugin takes such a key for a TXT record alone and loses the host.
// The error says why a key holds no record the zone can serve.
func (x *EtcdZone) records(z *zone, kv *mvccpb.KeyValue) (string, []dns.RR, error) {
	s := new(msg.Service)
	if err := json.Unmarshal(kv.Value, s); err != nil {
		return "", nil, err
	}
	owner, ok := ownerName(string(kv.Key), s.TargetStrip)
	if !ok || !dns.IsSubDomain(z.name, owner) {
		return "", nil, fmt.Errorf("its name is outside the zone")
	}
	s.TTL = x.etcdTTL.TTL(kv, s)
	var rrs []dns.RR
	if s.Host != "" {
		rr, err := hostRecord(s, owner)
		if err != nil {
			return "", nil, err
		}
		rrs = append(rrs, rr)
	}
	if s.Text != "" {
		rrs = append(rrs, s.NewTXT(owner))
	}
	if len(rrs) == 0 {
		return "", nil, fmt.Errorf("it has neither host nor text")
	}
	return owner, rrs, nil
}

// hostRecord returns the record of s's host at owner: an A or AAAA record
// for an address, else a CNAME record, or a PTR record when owner is a
// reverse name.
func hostRecord(s *msg.Service, owner string) (dns.RR, error) {
	if ip := net.ParseIP(s.Host); ip != nil {
		if ip4 := ip.To4(); ip4 != nil {
			return s.NewA(owner, ip4), nil
		}
		return s.NewAAAA(owner, ip), nil
	}
	target := strings.ToLower(dns.Fqdn(s.Host))
	if _, ok := dns.IsDomainName(target); !ok || strings.ContainsAny(target, " \t") {
		return nil, fmt.Errorf("host %.64q is neither an address nor a domain name", s.Host)
	}
	if dnsutil.IsReverse(owner) > 0 {
		return s.NewPTR(owner, target), nil
	}
	if target == owner {
		return nil, fmt.Errorf("host %s is its own name", s.Host)
	}
	return s.NewCNAME(owner, target), nil
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
