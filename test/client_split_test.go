package test

import (
	"fmt"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/coredns/coredns/plugin/test"
	"github.com/globaladdr/globaladdr/internal/etcdtest"
	"github.com/globaladdr/globaladdr/internal/externaldns"

	"github.com/miekg/dns"
)

// The clients of client-split.Corefile in these tests, all on lo (the whole
// of 127.0.0.0/8 is local).
var (
	lanClient      = netip.MustParseAddr("127.0.0.1") // in lanNetworks
	internetClient = netip.MustParseAddr("127.0.0.2")
	strayClient    = netip.MustParseAddr("127.0.0.3") // beside the LAN, outside it
	ipv6Client     = netip.IPv6Loopback()             // lanNetworks lists IPv4 only
)

// outsideClients are the clients that no view claims: each of them must get
// the external view.
var outsideClients = []netip.Addr{internetClient, strayClient, ipv6Client}

// lanNetworks is LAN_NETWORKS in these tests. The LAN client is in its second
// network, so that a match past the list's first entry counts.
const lanNetworks = "10.0.0.0/8 127.0.0.1/32"

// anySOA is the examples' SOA as the tests compare it (its MNAME, the first
// of exampleNS): any TTL, since the cache counts it down.
var anySOA = test.SOA("example.com. 303 IN SOA ns1.example.net. hostmaster.example.com. 0 3600 600 1209600 300")

// TestClientSplit runs client-split.Corefile, with `hide secret.example.com`
// added to its external view, and asks its one listener from a LAN client and
// from clients outside the LAN, over UDP and TCP: the LAN client gets the
// internal addresses, hidden names and external-dns's ownership records;
// every other client (one of another network, one just beside the LAN's, one
// over IPv6 when the LAN lists IPv4 networks only) gets the global address
// and sees neither, whichever view asks a name first; a name the LAN view
// forwarded (and cached) stays refused to the others. With the example's
// cache in both blocks, deleted records still leave both views within 2 s:
// cache never holds etcdzone's answers.
func TestClientSplit(t *testing.T) {
	c, etcd := startClientSplit(t, func(corefile string) string {
		return insertAfter(t, corefile, "ttl 900", "        hide secret.{$DOMAIN}", 1)
	},
		a("app.example.com", "192.168.0.51"),
		a("secret.example.com", "192.168.0.70"),
		a("one.example.com", "192.168.0.61"),
		a("two.example.com", "192.168.0.62"),
	)
	internal := func(name, addr string) test.Case {
		return test.Case{Qname: name, Qtype: dns.TypeA, Answer: []dns.RR{test.A(name + " 303 IN A " + addr)}}
	}
	global := func(name string) test.Case { return internal(name, exampleGlobal) }
	hidden := func(name string, qtype uint16) test.Case {
		return test.Case{Qname: name, Qtype: qtype, Rcode: dns.RcodeNameError, Ns: []dns.RR{anySOA}}
	}
	owner := test.TXT(`a-app.example.com. 303 IN TXT "\"heritage=external-dns,external-dns/owner=default,external-dns/resource=ingress/default/app\""`)

	t.Run("the LAN client gets the internal view", func(t *testing.T) {
		c.check(t, lanClient, internal("app.example.com.", "192.168.0.51"))
		c.check(t, lanClient, internal("secret.example.com.", "192.168.0.70"))
		c.check(t, lanClient, test.Case{Qname: "a-app.example.com.", Qtype: dns.TypeTXT, Answer: []dns.RR{owner}})
		c.check(t, lanClient, internal("www.example.org.", "198.51.100.7"))
	})
	for _, client := range outsideClients {
		t.Run(fmt.Sprintf("%v gets the external view", client), func(t *testing.T) {
			c.check(t, client, global("app.example.com."))
			c.check(t, client, hidden("secret.example.com.", dns.TypeA))
			c.check(t, client, hidden("a-app.example.com.", dns.TypeTXT))
			c.check(t, client, test.Case{Qname: "www.example.org.", Qtype: dns.TypeA, Rcode: dns.RcodeRefused})
		})
	}

	// one.example.com: the LAN asks first; two.example.com: the Internet.
	t.Run("each view answers its own, whichever asks first", func(t *testing.T) {
		c.check(t, lanClient, internal("one.example.com.", "192.168.0.61"))
		c.check(t, internetClient, global("one.example.com."))
		c.check(t, internetClient, global("two.example.com."))
		c.check(t, lanClient, internal("two.example.com.", "192.168.0.62"))
	})
	t.Run("asked again, each view still answers its own", func(t *testing.T) {
		c.check(t, internetClient, global("one.example.com."))
		c.check(t, lanClient, internal("one.example.com.", "192.168.0.61"))
		c.check(t, lanClient, internal("two.example.com.", "192.168.0.62"))
		c.check(t, internetClient, global("two.example.com."))
	})
	deleteRecords(t, etcd, "one.example.com", "two.example.com")
	t.Run("deleted records leave both views at once, cache or not", func(t *testing.T) {
		_, port, _ := net.SplitHostPort(c.Addr("dns"))
		for _, client := range append([]netip.Addr{lanClient}, outsideClients...) {
			for _, name := range []string{"one.example.com.", "two.example.com."} {
				eventually(t, 2*time.Second, fmt.Sprintf("%s from %v", name, client), func() error {
					reply := exchangeFrom(t, "udp", client, net.JoinHostPort(loopback(client).String(), port), new(dns.Msg).SetQuestion(name, dns.TypeA))
					if reply.Rcode != dns.RcodeNameError {
						return fmt.Errorf("%s, want NXDOMAIN:\n%v", dns.RcodeToString[reply.Rcode], reply)
					}
					return nil
				})
			}
		}
	})
}

// TestClientSplitFailsClosed runs client-split.Corefile with LAN_NETWORKS
// that cannot match: the view's expression then claims nobody, and the LAN
// client, like any other, gets the external view, never the internal one.
// The cases run in parallel, so each writes its LAN_NETWORKS into the
// Corefile itself, where CoreDNS would expand it.
func TestClientSplitFailsClosed(t *testing.T) {
	env, _ := setClientSplitEnv(t, a("app.example.com", "192.168.0.51"))
	for _, tc := range []struct{ name, networks string }{
		{"a malformed network", "127.0.0.1/33"},
		{"no network", ""},
		{"IPv6 networks only", "::1/128"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := startClientSplitExample(t, env, func(corefile string) string {
				return strings.ReplaceAll(corefile, "{$LAN_NETWORKS}", tc.networks)
			})
			c.check(t, lanClient, test.Case{
				Qname: "app.example.com.", Qtype: dns.TypeA,
				Answer: []dns.RR{test.A("app.example.com. 303 IN A " + exampleGlobal)},
			})
		})
	}
}

// TestClientSplitIPv6LAN runs client-split.Corefile with an IPv6 prefix
// listed beside the LAN's IPv4 networks, as a LAN whose hosts have global
// IPv6 addresses needs: the IPv6 client then gets the internal view, and a
// client outside every listed network still the external one.
func TestClientSplitIPv6LAN(t *testing.T) {
	env, _ := setClientSplitEnv(t, a("app.example.com", "192.168.0.51"))
	c := startClientSplitExample(t, env, func(corefile string) string {
		return strings.ReplaceAll(corefile, "{$LAN_NETWORKS}", lanNetworks+" ::1/128")
	})
	answer := func(addr string) test.Case {
		return test.Case{Qname: "app.example.com.", Qtype: dns.TypeA, Answer: []dns.RR{test.A("app.example.com. 303 IN A " + addr)}}
	}
	c.check(t, ipv6Client, answer("192.168.0.51"))
	c.check(t, lanClient, answer("192.168.0.51"))
	c.check(t, internetClient, answer(exampleGlobal))
}

// TestClientSplitProxyProtocol runs client-split.Corefile behind a load
// balancer on 127.0.0.1, a LAN address, that speaks the PROXY protocol (v2):
// with `proxyproto { allow 127.0.0.1/32 }` in both blocks, the view judges
// the client address in the header, not the balancer's. A header from a peer
// that is not allowed is ignored: an outside client cannot claim a LAN
// address. Over UDP and TCP.
func TestClientSplitProxyProtocol(t *testing.T) {
	balancer := lanClient
	c, _ := startClientSplit(t, func(corefile string) string {
		return insertAfter(t, corefile, ":{port:dns} {", "    proxyproto {\n        allow 127.0.0.1/32\n    }", 2)
	}, a("app.example.com", "192.168.0.51"))
	internalA := []dns.RR{test.A("app.example.com. 303 IN A 192.168.0.51")}
	globalA := []dns.RR{test.A("app.example.com. 303 IN A " + exampleGlobal)}

	for _, tc := range []struct {
		name   string
		peer   netip.Addr
		client netip.AddrPort
		answer []dns.RR
	}{
		{"an outside client through the LAN's balancer", balancer, netip.MustParseAddrPort("127.0.0.2:40000"), globalA},
		{"an IPv6 client through the balancer", balancer, netip.MustParseAddrPort("[::1]:40000"), globalA},
		{"a LAN client through the balancer", balancer, netip.MustParseAddrPort("127.0.0.1:40000"), internalA},
		{"an outside peer claiming a LAN address", internetClient, netip.MustParseAddrPort("127.0.0.1:40000"), globalA},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, network := range networks {
				m := new(dns.Msg)
				m.SetQuestion("app.example.com.", dns.TypeA)
				r := exchangeProxied(t, network, tc.peer, tc.client, c.Addr("dns"), m)
				want := test.Case{Qname: "app.example.com.", Qtype: dns.TypeA, Answer: tc.answer}
				if err := compare(want, r); err != nil {
					t.Errorf("over %s: %v\nreply:\n%v", network, err, r)
				}
			}
		})
	}
	t.Run("a client without a header is judged by its own address", func(t *testing.T) {
		c.check(t, lanClient, test.Case{Qname: "app.example.com.", Qtype: dns.TypeA, Answer: internalA})
		c.check(t, internetClient, test.Case{Qname: "app.example.com.", Qtype: dns.TypeA, Answer: globalA})
	})
}

// clientSplit is a CoreDNS running client-split.Corefile.
type clientSplit struct{ *coreDNS }

// check asks tc's question from the local address client, over UDP and TCP,
// of the listener's address in client's family, and compares as checkCase.
func (c clientSplit) check(t *testing.T, client netip.Addr, tc test.Case) {
	t.Helper()
	_, port, _ := net.SplitHostPort(c.Addr("dns"))
	checkCaseFrom(t, client, net.JoinHostPort(loopback(client).String(), port), tc)
}

// startClientSplit starts an etcd holding records, a resolver for UPSTREAM,
// and CoreDNS from client-split.Corefile changed by edit (if not nil), with
// LAN_NETWORKS set to lanNetworks.
func startClientSplit(t *testing.T, edit func(string) string, records ...externaldns.Record) (clientSplit, *etcdtest.Server) {
	t.Helper()
	env, etcd := setClientSplitEnv(t, records...)
	return startClientSplitExample(t, env, edit), etcd
}

// setClientSplitEnv starts an etcd holding records and a resolver for
// UPSTREAM, and sets the environment of client-split.Corefile for them, with
// LAN_NETWORKS set to lanNetworks, until t ends. It returns the environment
// and the etcd.
func setClientSplitEnv(t *testing.T, records ...externaldns.Record) (map[string]string, *etcdtest.Server) {
	t.Helper()
	etcd := startEtcd(t)
	putRecords(t, etcd, records...)
	upstream := startCoreDNS(t, upstreamCorefile)
	env := map[string]string{
		"DOMAIN":        exampleDomain,
		"GLOBAL_ADDR":   exampleGlobal,
		"ETCD_ENDPOINT": etcd.Endpoint(),
		"UPSTREAM":      upstream.Addr("upstream"),
		"LAN_NETWORKS":  lanNetworks,
		"NS":            exampleNS,
	}
	setEnv(t, env)
	return env, etcd
}

// startClientSplitExample starts CoreDNS from client-split.Corefile changed
// by edit (if not nil), in the environment env that setClientSplitEnv set.
func startClientSplitExample(t *testing.T, env map[string]string, edit func(string) string) clientSplit {
	t.Helper()
	corefile := examplePorts.Replace(readExample(t, "client-split.Corefile"))
	if edit != nil {
		corefile = edit(corefile)
	}
	return clientSplit{startExample(t, corefile, env)}
}

// insertAfter returns corefile with text inserted as lines of their own after
// each line that ends with suffix. t fails unless there are n such lines.
func insertAfter(t *testing.T, corefile, suffix, text string, n int) string {
	t.Helper()
	lines := strings.Split(corefile, "\n")
	var out []string
	found := 0
	for _, l := range lines {
		out = append(out, l)
		if strings.HasSuffix(l, suffix) {
			out = append(out, text)
			found++
		}
	}
	if found != n {
		t.Fatalf("%d lines end with %q, want %d:\n%s", found, suffix, n, corefile)
	}
	return strings.Join(out, "\n")
}
