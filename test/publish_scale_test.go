package test

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/globaladdr/globaladdr/internal/etcdtest"
	"github.com/globaladdr/globaladdr/internal/externaldns"
	"github.com/globaladdr/globaladdr/internal/nameserver"
	"github.com/globaladdr/globaladdr/plugin/webhook/wire"

	"github.com/miekg/dns"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// scaleHosts is the size of the zone TestPublishScale publishes.
const scaleHosts = 30000

// The global addresses of TestPublishScale's external view.
const (
	scaleGlobal4 = exampleGlobal
	scaleGlobal6 = "2001:db8::10"
)

// scaleCorefile is publish.Corefile's block as TestPublishScale needs it:
// the external view of both families, publishing into the namespace
// default with the kubeconfig KUBECONFIG, from the etcd at ETCD.
const scaleCorefile = `example.com:{port:dns} {
    errors
    publish {
        kubeconfig KUBECONFIG
        namespace default
    }
    globaladdr ` + scaleGlobal4 + ` ` + scaleGlobal6 + ` {
        ttl 900
    }
    etcdzone {
        ns ns1.example.net ns2.example.net
        endpoint ETCD
    }
    etcd example.com {
        path /skydns
        endpoint ETCD
    }
}
`

// objectSizeLimit is what an object may take in etcd, as the API server
// stores it: etcd's default request limit (--max-request-bytes), 1.5 MiB.
// TestPublishScale wants every object within half of it, leaving the rest
// to the status external-dns writes and to growth between publications.
const objectSizeLimit = 3 << 19

// scaleZone writes into etcd, as external-dns stores them, the hosts of
// TestPublishScale's zone, and returns the endpoints the external view
// gives them, sorted. Each host has an A record, and one in three an AAAA
// record, so that the zone needs several objects: an internal address
// (the view gives the global address, with its ttl 900), or for one in ten
// a public one (given as it is, with its TTL). One host in a hundred has
// its ownership record, which the view withholds.
func scaleZone(t *testing.T, etcd *etcdtest.Server) []*wire.Endpoint {
	t.Helper()
	values := map[string]string{}
	var eps []*wire.Endpoint
	put := func(name, label, value string) {
		values[externaldns.Key("/skydns", name)+"/"+label] = value
	}
	for i := range scaleHosts {
		name := strings.TrimSuffix(uplinkHost(i), ".")
		if i%10 == 0 {
			addr := fmt.Sprintf("198.51.100.%d", i/10%250+1)
			put(name, "1a2b3c4d", fmt.Sprintf(`{"host":%q,"ttl":60,"targetstrip":1}`, addr))
			eps = append(eps, &wire.Endpoint{DNSName: name, RecordType: "A", Targets: []string{addr}, RecordTTL: 60})
		} else {
			put(name, "1a2b3c4d", fmt.Sprintf(`{"host":"10.%d.%d.%d","ttl":300,"targetstrip":1}`, i>>16, i>>8&0xff, i&0xff))
			eps = append(eps, &wire.Endpoint{DNSName: name, RecordType: "A", Targets: []string{scaleGlobal4}, RecordTTL: 900})
		}
		switch {
		case i%30 == 0:
			addr := netip.MustParseAddr(fmt.Sprintf("2001:db8:1::%x", i)).String()
			put(name, "5e6f7a8b", fmt.Sprintf(`{"host":%q,"ttl":60,"targetstrip":1}`, addr))
			eps = append(eps, &wire.Endpoint{DNSName: name, RecordType: "AAAA", Targets: []string{addr}, RecordTTL: 60})
		case i%3 == 0:
			put(name, "5e6f7a8b", fmt.Sprintf(`{"host":"fd00::%x","ttl":300,"targetstrip":1}`, i))
			eps = append(eps, &wire.Endpoint{DNSName: name, RecordType: "AAAA", Targets: []string{scaleGlobal6}, RecordTTL: 900})
		}
		if i%100 == 0 {
			put("a-"+name, "9c0d1e2f", fmt.Sprintf(`{"text":"\"heritage=external-dns,external-dns/owner=default,external-dns/resource=ingress/default/h%05d\"","targetstrip":1}`, i))
		}
	}
	putKeysInTxns(t, etcd, values)
	return eps
}

// TestPublishScale publishes a zone of 30,000 hosts (some 40,000 record
// sets): the objects hold the whole external view, each within half of
// etcd's request limit, over several objects. A second external-dns
// (--source=crd, --provider=rfc2136) then writes them into a BIND
// primary, whose zone read back by AXFR holds every host with the view's
// addresses and TTLs, and no internal address. It logs how long the
// publication and external-dns's synchronization take, and the objects'
// number and largest size.
func TestPublishScale(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("30,000 hosts")
	}
	l := startPublishLab(t)
	want := scaleZone(t, l.etcd)
	var all publishedObject
	all.Spec.Endpoints = derefs(want)
	wantLines := endpointLines([]publishedObject{all})

	start := time.Now()
	startCoreDNS(t, strings.NewReplacer("KUBECONFIG", l.api.kubeconfig, "ETCD", l.etcd.Endpoint()).Replace(scaleCorefile))
	eventually(t, 5*time.Minute, "the objects hold every host", func() error {
		if got := endpointLines(l.objects(t)); !slices.Equal(got, wantLines) {
			return fmt.Errorf("the objects differ from the external view:\n%s", sortedDiff(wantLines, got, 20))
		}
		return nil
	})
	t.Logf("%d hosts, %d endpoints: published %v after CoreDNS started", scaleHosts, len(want), time.Since(start).Round(100*time.Millisecond))

	sizes := storedObjectSizes(t, l.etcd.Client())
	largest := slices.Max(sizes)
	t.Logf("%d objects; the largest takes %d bytes in etcd (%.0f%% of the 1.5 MiB limit)", len(sizes), largest, 100*float64(largest)/float64(objectSizeLimit))
	if len(sizes) < 2 {
		t.Errorf("%d objects: the zone was not split", len(sizes))
	}
	if largest > objectSizeLimit/2 {
		t.Errorf("an object takes %d bytes in etcd, more than half of the limit (%d)", largest, objectSizeLimit)
	}

	zone := dns.Fqdn(exampleDomain)
	bind := nameserver.StartDynamicPrimary(t, nameserver.FreeLoopbackAddr(t), zone, publishZone, nameserver.TestKey)
	start = time.Now()
	runExternalDNS(t, l.api, rfc2136Provider(bind.Addr, zone, nameserver.TestKey), publishFlags...)
	t.Logf("external-dns (rfc2136) synchronized %d endpoints into BIND in %v", len(want), time.Since(start).Round(100*time.Millisecond))

	rrs := nameserver.AXFR(t, bind.Addr, zone, &nameserver.TestKey)
	got, _ := publishedOf(rrs, zone)
	if wantRecords := endpointRecords(t, want, 0); !slices.Equal(got, wantRecords) {
		t.Errorf("BIND's zone differs from the external view:\n%s", sortedDiff(wantRecords, got, 20))
	}
	if n, internal := hostsOf(rrs); n != scaleHosts || internal != "" {
		t.Errorf("BIND's zone has %d hosts with an A record, want %d; internal address: %q", n, scaleHosts, internal)
	}
}

// derefs returns the values eps point to.
func derefs(eps []*wire.Endpoint) []wire.Endpoint {
	values := make([]wire.Endpoint, len(eps))
	for i, e := range eps {
		values[i] = *e
	}
	return values
}

// storedObjectSizes returns the size of each DNSEndpoint object of the
// namespace default as the API server stores it in etcd.
func storedObjectSizes(t *testing.T, etcd *clientv3.Client) []int {
	t.Helper()
	resp, err := etcd.Get(context.Background(), apiServerPrefix+"/externaldns.k8s.io/dnsendpoints/default/", clientv3.WithPrefix())
	if err != nil {
		t.Fatal(err)
	}
	var sizes []int
	for _, kv := range resp.Kvs {
		sizes = append(sizes, len(kv.Value))
	}
	if len(sizes) == 0 {
		t.Fatal("etcd holds no DNSEndpoint object")
	}
	return sizes
}

// hostsOf returns how many names of rrs have an A record, and an internal
// address (the examples' internal prefixes, 10.0.0.0/8 and fd00::/8) one
// of rrs holds, "" when none does.
func hostsOf(rrs []dns.RR) (hosts int, internal string) {
	names := map[string]bool{}
	internals := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("fd00::/8")}
	for _, rr := range rrs {
		var addr netip.Addr
		switch rr := rr.(type) {
		case *dns.A:
			names[rr.Hdr.Name] = true
			addr, _ = netip.AddrFromSlice(rr.A.To4())
		case *dns.AAAA:
			addr, _ = netip.AddrFromSlice(rr.AAAA)
		default:
			continue
		}
		if slices.ContainsFunc(internals, func(p netip.Prefix) bool { return p.Contains(addr) }) {
			internal = rr.String()
		}
	}
	return len(names), internal
}

// sortedDiff shows how got differs from want, sorted lines both, in at most
// n lines: a line of want that got lacks with "- " before it, one that got
// adds with "+ ". Unlike diffText, it takes time and memory in proportion
// to the lines, not to their square: tens of thousands of them.
func sortedDiff(want, got []string, n int) string {
	var b strings.Builder
	shown := 0
	show := func(sign, line string) {
		if shown++; shown <= n {
			fmt.Fprintf(&b, "%s %s\n", sign, line)
		}
	}
	for len(want) > 0 || len(got) > 0 {
		switch {
		case len(got) == 0 || len(want) > 0 && want[0] < got[0]:
			show("-", want[0])
			want = want[1:]
		case len(want) == 0 || got[0] < want[0]:
			show("+", got[0])
			got = got[1:]
		default:
			want, got = want[1:], got[1:]
		}
	}
	if shown > n {
		fmt.Fprintf(&b, "and %d lines more\n", shown-n)
	}
	return b.String()
}
