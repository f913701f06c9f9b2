package test

import (
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/globaladdr/globaladdr/internal/nameserver"
	"github.com/globaladdr/globaladdr/internal/netlab"
	"github.com/globaladdr/globaladdr/internal/routerlab"

	"github.com/miekg/dns"
)

// publishInterval is the second external-dns's --interval in
// TestUplinkPublish.
const publishInterval = 2 * time.Second

// TestUplinkPublish is source article 002's setup done by the product: the
// WAN address the router has now, at a DNS host that takes no zone transfer,
// with no DDNS daemon and no hook. uplink.Corefile with publish added
// learns the router's address (NAT-PMP, the router lab's miniupnpd) and the
// interface's IPv6 prefix, and keeps them in DNSEndpoints; a second
// external-dns, running as in a cluster, writes them into BIND (rfc2136,
// TSIG), which stands for Route53. When the router's WAN address changes,
// BIND answers the new one within the second external-dns's interval and a
// few seconds (the latencies are logged).
func TestUplinkPublish(t *testing.T) {
	t.Parallel()
	if !netlab.Enter(t) {
		return
	}
	lab := routerlab.New(t)
	lab.Link(lab.Self(), "up0", "", lab.Namespace("isp6"), "up1", "")
	lab.Self().IP("addr", "add", "2001:db8:aa:1::20/64", "dev", "up0", "nodad")
	l := startPublishLab(t)
	putRecords(t, l.etcd, a("app."+exampleDomain, exampleInternal), aaaa("app."+exampleDomain, "fd00:0:0:1::51"))
	env := withoutEtcdSecurity(map[string]string{
		"DOMAIN":            exampleDomain,
		"ETCD_ENDPOINT":     l.etcd.Endpoint(),
		"NS":                exampleNS,
		"ROUTER":            routerlab.RouterLAN.String(),
		"INTERFACE":         "up0",
		"ULA_PREFIX":        "fd00:0:0:1::/64",
		"KUBECONFIG":        l.api.kubeconfig,
		"PUBLISH_NAMESPACE": "default",
	})
	corefile := readExample(t, "uplink.Corefile")
	const etcdLine = "    etcd {$DOMAIN} {\n"
	if strings.Count(corefile, etcdLine) != 1 {
		t.Fatalf("uplink.Corefile does not hold %q once", etcdLine)
	}
	corefile = strings.Replace(corefile, etcdLine, "    publish {\n        kubeconfig {$KUBECONFIG}\n        namespace {$PUBLISH_NAMESPACE}\n    }\n"+etcdLine, 1)
	c := startCoreDNS(t, expandExample(t, examplePorts.Replace(corefile), env))
	waitServing(t, c.Addr("dns"))

	zone := dns.Fqdn(exampleDomain)
	bind := nameserver.StartDynamicPrimary(t, nameserver.FreeLoopbackAddr(t), zone, publishZone, nameserver.TestKey)
	startExternalDNS(t, l.api, rfc2136Provider(bind.Addr, zone, nameserver.TestKey), append(publishFlags, "--interval="+publishInterval.String())...)
	app := "app." + exampleDomain + "."
	uplinkLatency(t, bind.Addr, app, dns.TypeA, time.Now(), routerlab.FirstWAN.String())
	uplinkLatency(t, bind.Addr, app, dns.TypeAAAA, time.Now(), "2001:db8:aa:1::51")

	var samples []time.Duration
	for _, next := range []string{"11.22.33.3", "11.22.33.4"} {
		start := time.Now()
		lab.SetWAN(netip.MustParseAddr(next))
		samples = append(samples, uplinkLatency(t, bind.Addr, app, dns.TypeA, start, next))
	}
	logLatencies(t, "router's WAN change to BIND's answer (NAT-PMP announcement, publish, external-dns --interval="+publishInterval.String()+")", samples)
	for _, rr := range nameserver.AXFR(t, bind.Addr, zone, &nameserver.TestKey) {
		if text := rr.String(); strings.Contains(text, exampleInternal) || strings.Contains(text, "fd00:") {
			t.Errorf("BIND holds an internal address: %s", text)
		}
	}
}
