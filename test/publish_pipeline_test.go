package test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/globaladdr/globaladdr/internal/nameserver"
	"github.com/globaladdr/globaladdr/plugin/webhook/wire"

	corev1 "k8s.io/api/core/v1"

	"github.com/miekg/dns"
)

// publishPipeline is the whole road of issue 40: Ingresses and Services in
// a real API server; the first external-dns writing them into etcd (the
// coredns provider); publish.Corefile's external view publishing its zone
// as DNSEndpoints; the second external-dns (--source=crd) writing those
// into BIND (rfc2136, TSIG) and PowerDNS (pdns).
type publishPipeline struct {
	*publishLab
	view  *coreDNS
	bind  *nameserver.Server
	pdns  *nameserver.PowerDNS
	zone  string
	addrs string // the file the view reads its global addresses from
}

// TestPublishPipeline runs the pipeline and checks, after the first
// synchronization, a change of the global address (a write of the file
// globaladdr reads) and a deleted Ingress: the objects hold the external
// view's records, each provider's zone equals the external view's AXFR
// record for record (TTLs included, SOA and apex NS aside, and the second
// external-dns's own registry aside), and no internal address, hidden name,
// internal-only name or ownership record of the first external-dns reaches
// either.
func TestPublishPipeline(t *testing.T) {
	t.Parallel()
	p := startPublishPipeline(t)

	p.sync(t)
	p.check(t)
	view := strings.Join(p.viewRecords(t), "\n")
	for _, name := range []string{"app", "svc", "alias", "dual", "v6", "spf"} {
		if !strings.Contains(view, "\n"+name+"."+exampleDomain+".\t") && !strings.HasPrefix(view, name+".") {
			t.Errorf("the external view lacks %s:\n%s", name, view)
		}
	}

	start := time.Now()
	p.writeAddresses(t, "203.0.113.20 2001:db8::20")
	eventually(t, time.Minute, "the objects hold the new global address", func() error {
		if lines := endpointLines(p.objects(t)); !slices.Contains(lines, "app."+exampleDomain+" A 900 203.0.113.20") {
			return fmt.Errorf("the objects hold\n%s", strings.Join(lines, "\n"))
		}
		return nil
	})
	// The file is read once a second, and the writing replica looks at the
	// zone's serial every half second.
	t.Logf("the objects held the new global address %s after the file's write", time.Since(start).Round(time.Millisecond))
	p.awaitObjects(t)
	p.publishToProviders(t)
	p.check(t)
	if got := p.answer(t, "dual."+exampleDomain+".", dns.TypeAAAA); got != "2001:db8::20" {
		t.Errorf("the view answers dual's AAAA with %q after the change", got)
	}

	p.k.run(t, nil, "delete", "ingress/app")
	p.sync(t)
	p.check(t)
	if axfr := p.viewRecords(t); slices.ContainsFunc(axfr, func(rr string) bool { return strings.HasPrefix(rr, "app."+exampleDomain+".\t") }) {
		t.Errorf("the external view still holds app after its Ingress went:\n%s", strings.Join(axfr, "\n"))
	}
}

// startPublishPipeline starts the lab, the providers with an empty zone,
// the cluster's resources, and the external view: publish.Corefile with
// its global addresses from a file, hide of the examples' hidden subtree,
// and transfer, so that its AXFR can be compared with the providers'.
func startPublishPipeline(t *testing.T) *publishPipeline {
	p := &publishPipeline{publishLab: startPublishLab(t), zone: dns.Fqdn(exampleDomain)}
	p.bind = nameserver.StartDynamicPrimary(t, nameserver.FreeLoopbackAddr(t), p.zone, publishZone, nameserver.TestKey)
	p.pdns = nameserver.StartPowerDNS(t, nameserver.FreeLoopbackAddr(t))
	p.pdns.CreateZone(t, p.zone, publishNameServer)

	app, svc, alias, nas := "app."+exampleDomain, "svc."+exampleDomain, "alias."+exampleDomain, "nas."+exampleHide
	p.k.apply(t, ingress("app", app), ingress("nas", nas), loadBalancer("svc", svc), loadBalancer("alias", alias))
	p.k.setStatus(t, "ingress/app", ingressStatus(exampleInternal))
	p.k.setStatus(t, "ingress/nas", ingressStatus("192.168.0.60"))
	p.k.setStatus(t, "service/svc", serviceStatus(corev1.LoadBalancerIngress{IP: "198.51.100.7"}))
	p.k.setStatus(t, "service/alias", serviceStatus(corev1.LoadBalancerIngress{Hostname: "lb.example.net"}))
	// What no Ingress gives, each under a label of its own as external-dns
	// writes (targetstrip): a name with both families, internal; a public
	// IPv6 address; a text; a name the webhook marked internal-only.
	putKeys(t, p.etcd, map[string]string{
		"/skydns/com/example/dual/a":    `{"host":"192.168.0.53","ttl":303,"targetstrip":1}`,
		"/skydns/com/example/dual/aaaa": `{"host":"fd00::53","ttl":303,"targetstrip":1}`,
		"/skydns/com/example/v6/x":      `{"host":"2001:db8::7","ttl":600,"targetstrip":1}`,
		"/skydns/com/example/spf/x":     `{"text":"v=spf1 -all","ttl":120,"targetstrip":1}`,
		"/skydns/com/example/grafana/x": `{"host":"192.168.0.52","ttl":303,"globaladdr-external":"false","targetstrip":1}`,
	})

	p.addrs = filepath.Join(t.TempDir(), "addresses")
	p.writeAddresses(t, exampleGlobal+" 2001:db8::10")
	corefile := readExample(t, "publish.Corefile")
	for old, new := range map[string]string{
		"    globaladdr {$GLOBAL_ADDR} {\n": "    globaladdr {\n        from file " + p.addrs + "\n        hide {$HIDE}\n",
		"    etcdzone {\n":                  "    transfer {\n        to *\n    }\n    etcdzone {\n",
	} {
		if strings.Count(corefile, old) != 1 {
			t.Fatalf("publish.Corefile does not hold %q once", old)
		}
		corefile = strings.Replace(corefile, old, new, 1)
	}
	p.view = startCoreDNS(t, expandExample(t, examplePorts.Replace(corefile), p.env))
	waitServing(t, p.view.Addr("dns"))
	return p
}

// writeAddresses writes the global addresses the view reads.
func (p *publishPipeline) writeAddresses(t *testing.T, addrs string) {
	t.Helper()
	if err := os.WriteFile(p.addrs, []byte(addrs+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// sync runs the first external-dns, waits until the objects hold the
// external view, and runs the second one into each provider.
func (p *publishPipeline) sync(t *testing.T) {
	t.Helper()
	runExternalDNS(t, p.api, coreDNSProvider(p.etcd.Endpoint(), "/skydns/"))
	p.awaitObjects(t)
	p.publishToProviders(t)
}

// publishToProviders runs the second external-dns once into each provider.
func (p *publishPipeline) publishToProviders(t *testing.T) {
	t.Helper()
	runExternalDNS(t, p.api, rfc2136Provider(p.bind.Addr, p.zone, nameserver.TestKey), publishFlags...)
	runExternalDNS(t, p.api, pdnsProvider(p.pdns.API, p.pdns.APIKey), publishFlags...)
}

// viewRecords returns the external view's AXFR as publishedOf gives it.
func (p *publishPipeline) viewRecords(t *testing.T) []string {
	t.Helper()
	rrs, _ := publishedOf(nameserver.AXFR(t, p.view.Addr("dns"), p.zone, nil), p.zone)
	return rrs
}

// awaitObjects waits until the objects' endpoints, as records, are the
// external view's AXFR.
func (p *publishPipeline) awaitObjects(t *testing.T) {
	t.Helper()
	eventually(t, time.Minute, "the objects hold the external view's AXFR", func() error {
		var eps []*wire.Endpoint
		for _, o := range p.objects(t) {
			for i := range o.Spec.Endpoints {
				eps = append(eps, &o.Spec.Endpoints[i])
			}
		}
		if want, got := p.viewRecords(t), endpointRecords(t, eps, 0); !slices.Equal(got, want) {
			return fmt.Errorf("the objects differ from the view:\n%s", diffText(want, got))
		}
		return nil
	})
}

// check compares each provider's zone with the external view's AXFR, and
// looks for what must never leave the view.
func (p *publishPipeline) check(t *testing.T) {
	t.Helper()
	want := p.viewRecords(t)
	for _, provider := range []struct {
		name string
		rrs  []dns.RR
	}{
		{"BIND (rfc2136)", nameserver.AXFR(t, p.bind.Addr, p.zone, &nameserver.TestKey)},
		{"PowerDNS (pdns)", p.pdns.Records(t, p.zone)},
	} {
		got, owners := publishedOf(provider.rrs, p.zone)
		if !slices.Equal(got, want) {
			t.Errorf("%s's zone differs from the external view's AXFR:\n%s", provider.name, diffText(want, got))
		}
		if owners == 0 {
			t.Errorf("%s's zone holds no ownership record of the second external-dns", provider.name)
		}
		for _, rr := range provider.rrs {
			text := rr.String()
			for _, never := range []string{"192.168.", "fd00:", exampleHide + ".", "grafana.", "external-dns/owner=" + externalDNSOwner} {
				if strings.Contains(text, never) {
					t.Errorf("%s's zone holds %q: %s", provider.name, never, text)
				}
			}
		}
	}
}

// answer returns the first address the external view answers for name.
func (p *publishPipeline) answer(t *testing.T, name string, qtype uint16) string {
	t.Helper()
	m := new(dns.Msg)
	m.SetQuestion(name, qtype)
	r := exchange(t, "tcp", p.view.Addr("dns"), m)
	for _, rr := range r.Answer {
		switch rr := rr.(type) {
		case *dns.A:
			return rr.A.String()
		case *dns.AAAA:
			return rr.AAAA.String()
		}
	}
	return ""
}
