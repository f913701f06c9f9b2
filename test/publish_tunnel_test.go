package test

import (
	"slices"
	"strings"
	"testing"

	"github.com/globaladdr/globaladdr/internal/nameserver"

	"github.com/miekg/dns"
)

// TestPublishTunnel publishes the view of a user behind CGNAT: publish.Corefile
// with a tunnel instead of a global address, and Cloudflare's proxy asked
// for the tunnelled names, in the canonical name external-dns v0.23.0 reads
// (cloudflare/proxied) and in the legacy one older releases read (and
// v0.23.0 maps to it). The objects hold the CNAME to the tunnel with both
// properties, and a name with a public address with neither; the second
// external-dns writes the CNAME into BIND (rfc2136) and PowerDNS (pdns).
func TestPublishTunnel(t *testing.T) {
	t.Parallel()
	l := startPublishLab(t)
	zone := dns.Fqdn(exampleDomain)
	putRecords(t, l.etcd, a("app."+exampleDomain, exampleInternal), a("www."+exampleDomain, "198.51.100.80"))
	corefile := readExample(t, "publish.Corefile")
	for old, new := range map[string]string{
		"    globaladdr {$GLOBAL_ADDR} {\n": "    globaladdr {\n        tunnel {$TUNNEL_TARGET}\n",
		"        namespace {$PUBLISH_NAMESPACE}\n": "        namespace {$PUBLISH_NAMESPACE}\n" +
			"        property cloudflare/proxied true tunnelled\n" +
			"        property external-dns.alpha.kubernetes.io/cloudflare-proxied true tunnelled\n",
	} {
		if strings.Count(corefile, old) != 1 {
			t.Fatalf("publish.Corefile does not hold %q once", old)
		}
		corefile = strings.Replace(corefile, old, new, 1)
	}
	startCoreDNS(t, expandExample(t, examplePorts.Replace(corefile), l.env))

	app, www := "app."+exampleDomain, "www."+exampleDomain
	l.awaitPublished(t, []string{app + " CNAME 900 " + tunnelTarget, www + " A 300 198.51.100.80"})
	for _, o := range l.objects(t) {
		for _, e := range o.Spec.Endpoints {
			var props []string
			for _, p := range e.ProviderSpecific {
				props = append(props, p.Name+"="+p.Value)
			}
			slices.Sort(props)
			want := ""
			if e.DNSName == app {
				want = "cloudflare/proxied=true external-dns.alpha.kubernetes.io/cloudflare-proxied=true"
			}
			if got := strings.Join(props, " "); got != want {
				t.Errorf("%s %s: providerSpecific %q, want %q", e.DNSName, e.RecordType, got, want)
			}
		}
	}

	bind := nameserver.StartDynamicPrimary(t, nameserver.FreeLoopbackAddr(t), zone, publishZone, nameserver.TestKey)
	pdns := nameserver.StartPowerDNS(t, nameserver.FreeLoopbackAddr(t))
	pdns.CreateZone(t, zone, publishNameServer)
	runExternalDNS(t, l.api, rfc2136Provider(bind.Addr, zone, nameserver.TestKey), publishFlags...)
	runExternalDNS(t, l.api, pdnsProvider(pdns.API, pdns.APIKey), publishFlags...)
	want := app + ".\t900\tIN\tCNAME\t" + tunnelTarget + "."
	for name, rrs := range map[string][]dns.RR{
		"BIND (rfc2136)":  nameserver.AXFR(t, bind.Addr, zone, &nameserver.TestKey),
		"PowerDNS (pdns)": pdns.Records(t, zone),
	} {
		got, _ := publishedOf(rrs, zone)
		if !slices.Contains(got, want) {
			t.Errorf("%s's zone lacks %q:\n%s", name, want, strings.Join(got, "\n"))
		}
	}
}
