package test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/globaladdr/globaladdr/internal/nameserver"
	"github.com/globaladdr/globaladdr/plugin/webhook/wire"

	"github.com/miekg/dns"
)

// publishFlags are the flags of the second external-dns, the one that
// publishes DNSEndpoints to a provider (issue 40), besides
// runExternalDNS's: it reads DNSEndpoints alone, keeps a registry of its
// own, and manages every type a DNSEndpoint of the external view holds.
var publishFlags = []string{
	"--source=crd",
	"--txt-owner-id=" + publishOwner,
	"--managed-record-types=A",
	"--managed-record-types=AAAA",
	"--managed-record-types=CNAME",
	"--managed-record-types=TXT",
	"--managed-record-types=SRV",
	"--managed-record-types=MX",
	"--managed-record-types=NS",
}

// publishOwner is the second external-dns's owner id.
const publishOwner = "published"

// publishZone is the zone the providers start with: its SOA and NS
// records, the name server out of the zone so that it needs no address.
const publishZone = `$TTL 3600
example.com. IN SOA ns.example.net. hostmaster.example.com. 1 3600 600 86400 60
example.com. IN NS ns.example.net.
`

// publishNameServer is publishZone's name server.
const publishNameServer = "ns.example.net."

// publishedEndpoints are the DNSEndpoint's endpoints, each type's targets in
// the one form both providers take (see each): zone-file presentation
// format, a name without its trailing dot but SRV's target host.
var publishedEndpoints = []*wire.Endpoint{
	{DNSName: "www." + exampleDomain, RecordType: "A", Targets: []string{"192.0.2.1", "192.0.2.2"}, RecordTTL: 60},
	{DNSName: "www." + exampleDomain, RecordType: "AAAA", Targets: []string{"2001:db8::1"}, RecordTTL: 60},
	// A name's trailing dot is optional for the CRD source; without it,
	// the pdns provider reads back what it wrote.
	{DNSName: "alias." + exampleDomain, RecordType: "CNAME", Targets: []string{"www." + exampleDomain}, RecordTTL: 120},
	{DNSName: "away." + exampleDomain, RecordType: "CNAME", Targets: []string{"target.example.net"}, RecordTTL: 120},
	// Quoted, as in a zone file: PowerDNS refuses an unquoted text (422),
	// the rfc2136 provider splits one at its spaces.
	{DNSName: "txt." + exampleDomain, RecordType: "TXT", Targets: []string{
		`"word"`, `"two words"`, `"say \"hi\""`, `"part one" "part two"`,
	}, RecordTTL: 300},
	// The CRD source drops an SRV record whose host has no trailing dot.
	{DNSName: "_sip._tcp." + exampleDomain, RecordType: "SRV", Targets: []string{"10 5 5060 sip.example.net."}, RecordTTL: 600},
	{DNSName: "mail." + exampleDomain, RecordType: "MX", Targets: []string{"10 mx1.example.net", "20 mx2.example.net"}, RecordTTL: 900},
	// The CRD source drops an NS record whose name has a trailing dot.
	{DNSName: "sub." + exampleDomain, RecordType: "NS", Targets: []string{"ns1.example.net", "ns2.example.net"}, RecordTTL: 86400},
	// No recordTTL: each provider's default.
	{DNSName: "nottl." + exampleDomain, RecordType: "A", Targets: []string{"192.0.2.3"}},
}

// TestPublishProviders runs a second external-dns (--source=crd), the one
// issue 40's DNSEndpoints feed, with the programs of `make kube-bins`: from
// a DNSEndpoint holding records of each type an external view holds (A,
// AAAA, CNAME, TXT of several forms, SRV, MX and NS) it writes into two
// real providers' zones: BIND 9 by RFC 2136 UPDATEs signed with TSIG
// (--provider=rfc2136), and PowerDNS by its HTTP API (--provider=pdns).
// Each zone read back (BIND's by AXFR with the key, PowerDNS's through its
// API) holds each record with its TTL and data, besides external-dns's
// ownership records; an endpoint with no recordTTL gets the provider's
// default TTL: 0 from rfc2136, 300 from pdns.
//
// It syncs once: a second sync through pdns changes nothing, one through
// rfc2136 (v0.23.0) writes again the SRV and MX records (it reads none
// back), the TXT records (it reads each string back as a target, unquoted)
// and an NS record set of several targets (it reads back the trailing dot
// of all but the first), with their ownership records.
func TestPublishProviders(t *testing.T) {
	t.Parallel()
	zone := dns.Fqdn(exampleDomain)
	api := startAPIServer(t, startEtcd(t).Endpoint())
	k := newKubectl(t, api)
	k.run(t, nil, "apply", "-f", dnsEndpointCRD(t))
	k.run(t, nil, "wait", "--for=condition=established", "crd/dnsendpoints.externaldns.k8s.io", "--timeout=1m")
	k.run(t, nil, "wait", "--for=create", "namespace/default", "--timeout=1m")
	k.apply(t, dnsEndpoint("published", publishedEndpoints...))

	bind := nameserver.StartDynamicPrimary(t, nameserver.FreeLoopbackAddr(t), zone, publishZone, nameserver.TestKey)
	pdns := nameserver.StartPowerDNS(t, nameserver.FreeLoopbackAddr(t))
	pdns.CreateZone(t, zone, publishNameServer)

	for _, p := range []struct {
		name       string
		provider   externalDNSProvider
		read       func(*testing.T) []dns.RR
		defaultTTL uint32
	}{
		{"rfc2136", rfc2136Provider(bind.Addr, zone, nameserver.TestKey), func(t *testing.T) []dns.RR {
			return nameserver.AXFR(t, bind.Addr, zone, &nameserver.TestKey)
		}, 0},
		{"pdns", pdnsProvider(pdns.API, pdns.APIKey), func(t *testing.T) []dns.RR {
			return pdns.Records(t, zone)
		}, 300},
	} {
		t.Run(p.name, func(t *testing.T) {
			runExternalDNS(t, api, p.provider, publishFlags...)
			want := publishedRecords(t, p.defaultTTL)
			got, owners := publishedOf(p.read(t), zone)
			if !slices.Equal(got, want) {
				t.Errorf("the zone's records differ from the DNSEndpoint's:\n%s", diffText(want, got))
			}
			if owners == 0 {
				t.Error("the zone holds no ownership record of external-dns")
			}
		})
	}
}

// publishedRecords returns publishedEndpoints as records in presentation
// format, sorted, with defaultTTL where an endpoint has none.
func publishedRecords(t *testing.T, defaultTTL uint32) []string {
	t.Helper()
	return endpointRecords(t, publishedEndpoints, defaultTTL)
}

// endpointRecords returns the records of eps in presentation format,
// sorted, with defaultTTL where an endpoint has none.
func endpointRecords(t *testing.T, eps []*wire.Endpoint, defaultTTL uint32) []string {
	t.Helper()
	var rrs []string
	for _, ep := range eps {
		ttl := uint32(ep.RecordTTL)
		if ep.RecordTTL == 0 {
			ttl = defaultTTL
		}
		for _, target := range ep.Targets {
			rr, err := dns.NewRR(fmt.Sprintf("%s %d IN %s %s", dns.Fqdn(ep.DNSName), ttl, ep.RecordType, target))
			if err != nil {
				t.Fatalf("endpoint %s %s %q: %v", ep.DNSName, ep.RecordType, target, err)
			}
			rrs = append(rrs, rr.String())
		}
	}
	slices.Sort(rrs)
	return rrs
}

// publishedOf returns the records of rrs, a zone's, in presentation format
// and sorted, but the zone's own (its SOA and NS records) and
// external-dns's ownership records, which it counts.
func publishedOf(rrs []dns.RR, zone string) (published []string, owners int) {
	for _, rr := range rrs {
		h := rr.Header()
		switch {
		case h.Name == zone && (h.Rrtype == dns.TypeSOA || h.Rrtype == dns.TypeNS):
			continue
		case h.Rrtype == dns.TypeTXT && strings.HasPrefix(strings.Join(rr.(*dns.TXT).Txt, ""), "heritage=external-dns,"):
			owners++
			continue
		}
		published = append(published, rr.String())
	}
	slices.Sort(published)
	// A transfer ends with the SOA record it starts with: nothing else
	// repeats.
	return slices.Compact(published), owners
}
