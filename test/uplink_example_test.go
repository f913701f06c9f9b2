package test

import (
	"net/netip"
	"testing"
	"time"

	"github.com/globaladdr/globaladdr/internal/netlab"
	"github.com/globaladdr/globaladdr/internal/routerlab"

	"github.com/miekg/dns"
)

// TestUplinkExample runs corefile-examples/uplink.Corefile in the router
// lab, with ROUTER the lab's router (Debian's miniupnpd, NAT-PMP), INTERFACE
// a veth holding a global IPv6 address, and ULA_PREFIX the LAN's /64: the
// external view answers the router's WAN address and the interface's
// prefix (a query signed with an unknown key BADKEY, a cookie its own),
// and follows the router's change of address, which miniupnpd announces.
func TestUplinkExample(t *testing.T) {
	if !netlab.Enter(t) {
		return
	}
	lab := routerlab.New(t)
	lab.Link(lab.Self(), "up0", "", lab.Namespace("isp6"), "up1", "")
	lab.Self().IP("addr", "add", "2001:db8:aa:1::20/64", "dev", "up0", "nodad")
	etcd := startEtcd(t)
	putRecords(t, etcd, a("app."+exampleDomain, exampleInternal), aaaa("app."+exampleDomain, "fd00:0:0:1::51"))
	env := withoutEtcdSecurity(map[string]string{
		"DOMAIN":        exampleDomain,
		"ETCD_ENDPOINT": etcd.Endpoint(),
		"NS":            exampleNS,
		"ROUTER":        routerlab.RouterLAN.String(),
		"INTERFACE":     "up0",
		"ULA_PREFIX":    "fd00:0:0:1::/64",
	})
	setEnv(t, env)
	corefile := readExample(t, "uplink.Corefile")
	checkHeader(t, "uplink.Corefile", corefile)
	c := startExample(t, examplePorts.Replace(corefile), env)
	addr := c.Addr("dns")
	waitServing(t, addr)
	uplinkLatency(t, addr, "app."+exampleDomain+".", dns.TypeA, time.Now(), routerlab.FirstWAN.String())
	uplinkLatency(t, addr, "app."+exampleDomain+".", dns.TypeAAAA, time.Now(), "2001:db8:aa:1::51")
	checkUnknownTSIGKey(t, netip.Addr{}, addr)
	checkCookies(t, netip.Addr{}, addr)
	checkHTTP(t, "http://"+c.Addr("health")+"/health", "")
	waitReady(t, "http://"+c.Addr("ready")+"/ready")
	checkHTTP(t, "http://"+c.Addr("metrics")+"/metrics", "coredns_globaladdr_source_last_success_timestamp_seconds")

	// The default every is 60s: miniupnpd's announcement brings the new
	// address long before. (One lost announcement leaves every; the wait
	// allows for it.)
	var samples []time.Duration
	for _, next := range []string{"11.22.33.3", "11.22.33.4", "11.22.33.2"} {
		start := time.Now()
		lab.SetWAN(netip.MustParseAddr(next))
		eventually(t, 2*time.Minute, "app answers "+next, func() error {
			return answers(addr, "app."+exampleDomain+".", dns.TypeA, []string{next})
		})
		samples = append(samples, time.Since(start))
	}
	logLatencies(t, "NAT-PMP announcement (uplink.Corefile, every 60s): WAN change to external answer", samples)
}
