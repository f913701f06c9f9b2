package zone

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net"
	"slices"
	"strings"

	"github.com/coredns/coredns/plugin/etcd/msg"
	"github.com/coredns/coredns/plugin/pkg/dnsutil"
	"github.com/globaladdr/globaladdr/plugin/pkg/horizon"

	"github.com/miekg/dns"
)

// This file is the SkyDNS codec: the records a value in etcd holds, as the
// etcd plugin reads them, and the value that holds a record, as
// external-dns writes it.

const (
	// defaultPriority is the priority of an SRV record, and the preference
	// of an MX record, whose value gives none: the etcd plugin's.
	defaultPriority = 10
	// defaultWeight is the weight an SRV record's value without one counts
	// with in its priority's shares (see srvShares): the etcd plugin's.
	defaultWeight = 100
)

// Decode returns the source the value of the etcd key is: its records, at
// their owner name, the key's name without the labels its targetstrip says
// are not part of it (external-dns stores each target under a random label
// below the name), its mark (horizon.MarkField; a value that is neither
// "true" nor "false" withholds it, as the webhook intake that stores it
// logs) and its route (horizon.RouteField; likewise for a value that is
// neither "tunnel" nor "address"). They are made as the etcd plugin makes
// them, with the TTL it gives them (ttl gives it, by the etcd plugin's
// rules; see serviceRecords). The error says why a key holds no record a
// zone can serve. A zone serves the records only when the owner name is in
// it.
func Decode(key string, value []byte, ttl func(*msg.Service) uint32) (*Source, error) {
	var v struct {
		msg.Service
		Mark  *string `json:"globaladdr-external"`
		Route *string `json:"globaladdr-target"`
	}
	if err := json.Unmarshal(value, &v); err != nil {
		return nil, err
	}
	s := &v.Service
	owner, ok := ownerName(key, s.TargetStrip)
	if !ok {
		return nil, fmt.Errorf("its targetstrip %d strips more labels than its name has", s.TargetStrip)
	}
	s.TTL = ttl(s)
	rrs, err := serviceRecords(s, owner)
	if err != nil {
		return nil, err
	}
	src := &Source{Key: key, Owner: owner, RRs: rrs}
	if v.Mark != nil {
		src.Mark, _ = horizon.ParseMark(*v.Mark)
	}
	if v.Route != nil {
		src.Route, _ = horizon.ParseRoute(*v.Route)
	}
	return src, nil
}

// serviceRecords returns the records the SkyDNS value s makes at owner, each
// of the type the etcd plugin answers it with, in the form of a zone file:
//
//   - with a port, an SRV record, and with mail, an MX record (both when it
//     has both), whose target is the host, or, when the host is an address,
//     owner, which then holds the address's A or AAAA record too (see
//     targetRecords);
//   - else an IP address in host is an A or AAAA record, a name a CNAME
//     record (a PTR record in a reverse zone);
//   - a text is a TXT record, also beside a host (external-dns's ownership
//     text in the format of its releases before v0.18): the etcd plugin
//     takes such a key for a TXT record alone and loses the host.
//
// A value none of these rules serves whole is an error: none of its records
// is served, rather than one of another type (a CNAME for a mail host would
// hide every other record of its name).
func serviceRecords(s *msg.Service, owner string) ([]dns.RR, error) {
	var rrs []dns.RR
	switch {
	case s.Port != 0 || s.Mail:
		targeted, err := targetRecords(s, owner)
		if err != nil {
			return nil, err
		}
		rrs = append(rrs, targeted...)
	case s.Host != "":
		rr, err := hostRecord(s, owner)
		if err != nil {
			return nil, err
		}
		rrs = append(rrs, rr)
	}
	if s.Text != "" {
		rrs = append(rrs, s.NewTXT(owner))
	}
	if len(rrs) == 0 {
		return nil, errors.New("it has neither host nor text")
	}
	return rrs, nil
}

// targetRecords returns the SRV record (for s's port) and the MX record (for
// its mail) that s makes at owner, with the etcd plugin's fields and target:
// the priority (the MX's preference) 10 when s gives none; the SRV's weight
// as s gives it, which srvShares makes a share; the target s's host, without
// the leftmost labels its targetstrip says, or, when the host is an address,
// owner, which then holds the address's record too.
func targetRecords(s *msg.Service, owner string) ([]dns.RR, error) {
	if s.Host == "" {
		return nil, errors.New("it has a port or mail but no host")
	}
	for _, field := range []struct {
		name  string
		value int
	}{{"port", s.Port}, {"priority", s.Priority}, {"weight", s.Weight}} {
		if field.value < 0 || field.value > math.MaxUint16 {
			return nil, fmt.Errorf("its %s %d is out of range", field.name, field.value)
		}
	}
	if s.Priority == 0 {
		s.Priority = defaultPriority
	}
	var rrs []dns.RR
	ip := net.ParseIP(s.Host)
	if ip != nil {
		rrs = append(rrs, addressRecord(s, owner, ip))
	} else {
		host, err := hostName(s.Host)
		if err != nil {
			return nil, err
		}
		s.Host = host
	}
	if s.Port != 0 {
		srv := s.NewSRV(owner, uint16(s.Weight)) // #nosec G115 -- checked above
		if ip != nil {
			srv.Target = owner
		}
		rrs = append(rrs, srv)
	}
	if s.Mail {
		mx := s.NewMX(owner)
		if ip != nil {
			mx.Mx = owner
		}
		rrs = append(rrs, mx)
	}
	return rrs, nil
}

// hostRecord returns the record of s's host at owner: an A or AAAA record
// for an address, else a CNAME record, or a PTR record when owner is a
// reverse name.
func hostRecord(s *msg.Service, owner string) (dns.RR, error) {
	if ip := net.ParseIP(s.Host); ip != nil {
		return addressRecord(s, owner, ip), nil
	}
	target, err := hostName(s.Host)
	if err != nil {
		return nil, err
	}
	if dnsutil.IsReverse(owner) > 0 {
		return s.NewPTR(owner, target), nil
	}
	if target == owner {
		return nil, fmt.Errorf("host %s is its own name", s.Host)
	}
	return s.NewCNAME(owner, target), nil
}

// addressRecord returns the A or AAAA record of ip, s's host, at owner.
func addressRecord(s *msg.Service, owner string, ip net.IP) dns.RR {
	if ip4 := ip.To4(); ip4 != nil {
		return s.NewA(owner, ip4)
	}
	return s.NewAAAA(owner, ip)
}

// hostName returns host, a domain name, fully qualified and in lower case.
func hostName(host string) (string, error) {
	name := strings.ToLower(dns.Fqdn(host))
	if _, ok := dns.IsDomainName(name); !ok || strings.ContainsAny(name, " \t") {
		return "", fmt.Errorf("host %.64q is neither an address nor a domain name", host)
	}
	return name, nil
}

// srvShares returns rrs, the records of one name, with the weight of each
// SRV record made its share, in percent, of the weights of the SRV records
// of its priority, as the etcd plugin makes it: a value's weight is
// relative, its absence counts as 100, and a share is at least 1. The SRV
// records are copies: rrs and its records are left as they are.
func srvShares(rrs []dns.RR) []dns.RR {
	weight := func(srv *dns.SRV) int {
		if srv.Weight == 0 {
			return defaultWeight
		}
		return int(srv.Weight)
	}
	sums := map[uint16]int{}
	for _, rr := range rrs {
		if srv, ok := rr.(*dns.SRV); ok {
			sums[srv.Priority] += weight(srv)
		}
	}
	if len(sums) == 0 {
		return rrs
	}
	shared := slices.Clone(rrs)
	for i, rr := range shared {
		if srv, ok := rr.(*dns.SRV); ok {
			share := *srv
			share.Weight = uint16(max(1, math.Floor(100/float64(sums[srv.Priority])*float64(weight(srv))))) // #nosec G115 -- at most 100
			shared[i] = &share
		}
	}
	return shared
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

// Encode returns the SkyDNS value that holds rr, as external-dns writes
// one (targetstrip 1: the key's last label is not part of the name), and
// whether rr can be held: an A, AAAA or CNAME record, or a TXT record of one
// string of under 255 bytes, as the etcd plugin reads it back.
func Encode(rr dns.RR) ([]byte, bool) {
	s := struct {
		Host        string `json:"host,omitempty"`
		Text        string `json:"text,omitempty"`
		TTL         uint32 `json:"ttl,omitempty"`
		TargetStrip int    `json:"targetstrip"`
	}{TTL: rr.Header().Ttl, TargetStrip: 1}
	switch rr := rr.(type) {
	case *dns.A:
		s.Host = net.IP(rr.A).String()
	case *dns.AAAA:
		s.Host = net.IP(rr.AAAA).String()
	case *dns.CNAME:
		s.Host = strings.TrimSuffix(rr.Target, ".")
	case *dns.TXT:
		if len(rr.Txt) != 1 || len(rr.Txt[0]) == 0 || len(rr.Txt[0]) >= 255 {
			return nil, false
		}
		s.Text = rr.Txt[0]
	default:
		return nil, false
	}
	value, err := json.Marshal(s)
	return value, err == nil
}
