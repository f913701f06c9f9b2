package test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/globaladdr/globaladdr/internal/nameserver"
	"github.com/globaladdr/globaladdr/plugin/webhook/wire"

	"github.com/miekg/dns"
)

// exposureAnnotation is the annotation that marks a resource's records for
// the external view: "false" withholds them, "true" exposes them (see
// globaladdr's expose).
const exposureAnnotation = "external-dns.kubernetes.io/webhook-globaladdr-external"

// The names of the exposure phase: two marked (an Ingress by its
// annotation, a DNSEndpoint's endpoint by its property), one not.
var (
	pipeGrafana = "grafana." + exampleDomain
	pipeWiki    = "wiki." + exampleDomain
	pipeBlog    = "blog." + exampleDomain
	// A CNAME, not marked, to wiki.
	pipeWikiAlias = "wiki-alias." + exampleDomain
)

// exposure creates an Ingress marked "false" by its annotation, and a
// DNSEndpoint whose endpoint is marked by its property (external-dns reads
// no annotation of a DNSEndpoint), beside an Ingress not marked: the mark
// is stored, the internal view answers the names, and the external view,
// its BIND secondary's copy and an IXFR lack them. The Ingress's
// annotation flipped to "true", after one sync the external view has it,
// and the secondary follows by NOTIFY. The view with expose marked shows
// that name alone.
func (p *webhookPipeline) exposure(t *testing.T) {
	zone := dns.Fqdn(exampleDomain)
	primary := p.primary.Addr("dns")
	before := soaRecord(t, primary)

	grafana, blog := ingress("grafana", pipeGrafana), ingress("blog", pipeBlog)
	grafana.Annotations = map[string]string{exposureAnnotation: "false"}
	wiki := dnsEndpoint("wiki", &wire.Endpoint{
		DNSName: pipeWiki, RecordType: "A", Targets: []string{"192.168.0.59"},
		ProviderSpecific: []wire.Property{{Name: "webhook/globaladdr-external", Value: "false"}},
	}, &wire.Endpoint{DNSName: pipeWikiAlias, RecordType: "CNAME", Targets: []string{pipeWiki}})
	p.k.apply(t, grafana, blog, wiki)
	p.k.setStatus(t, "ingress/grafana", ingressStatus("192.168.0.52"))
	p.k.setStatus(t, "ingress/blog", ingressStatus("192.168.0.54"))
	p.sync(t)
	p.checkMark(t, pipeGrafana, `"globaladdr-external":"false"`)
	p.checkMark(t, pipeWiki, `"globaladdr-external":"false"`)
	awaitViews(t, p.views, []pipelineCase{
		{pipeGrafana, addressed(pipeGrafana, "192.168.0.52"), nxdomain},
		{pipeWiki, addressed(pipeWiki, "192.168.0.59"), nxdomain},
		{pipeBlog, addressed(pipeBlog, "192.168.0.54"), addressed(pipeBlog, exampleGlobal)},
	})
	// blog, written by the same sync, tells when the primary and the
	// secondary have it.
	serial := p.awaitSecondary(t, pipeBlog)
	copied, changed := owners(nameserver.AXFR(t, p.bind.Addr, zone, nil)), owners(ixfr(t, primary, before).Answer)
	for _, name := range []string{pipeGrafana, pipeWiki} {
		if err := answers(primary, name+".", dns.TypeA, nil); err != nil {
			t.Errorf("the primary: %v", err)
		}
		if copied[name] || changed[name] {
			t.Errorf("%s, marked false, is in BIND's copy (%v) or in the IXFR (%v)", name, copied[name], changed[name])
		}
	}
	if !copied[pipeBlog] || !changed[pipeBlog] {
		t.Errorf("%s is missing from BIND's copy (%v) or from the IXFR (%v)", pipeBlog, copied[pipeBlog], changed[pipeBlog])
	}
	for _, name := range []string{pipeGrafana, pipeWiki, pipeBlog, pipeApp} {
		if err := nxdomain.check(p.marked.Addr("dns"), name); err != nil {
			t.Errorf("expose marked, with no name marked true: %s: %v", name, err)
		}
	}
	p.checkPlainViews(t)

	before = soaRecord(t, primary)
	notifies := strings.Count(p.bind.Output(), "received notify for zone '"+exampleDomain+"'")
	grafana.Annotations[exposureAnnotation] = "true"
	p.k.apply(t, grafana)
	p.sync(t)
	p.checkMark(t, pipeGrafana, `"globaladdr-external":"true"`)
	next := p.awaitSecondary(t, pipeGrafana)
	if !serialNewer(next, serial) {
		t.Errorf("serial %d after the flip, was %d", next, serial)
	}
	out := p.bind.Output()
	if strings.Count(out, "received notify for zone '"+exampleDomain+"'") == notifies || !strings.Contains(out, fmt.Sprintf("transferred serial %d", next)) {
		t.Errorf("BIND did not transfer serial %d on a NOTIFY:\n%s", next, out)
	}
	if !owners(nameserver.AXFR(t, p.bind.Addr, zone, nil))[pipeGrafana] {
		t.Errorf("BIND's copy lacks %s, marked true", pipeGrafana)
	}
	if changed := owners(ixfr(t, primary, before).Answer); !changed[pipeGrafana] || changed[pipeBlog] {
		t.Errorf("the IXFR of the flip holds %s: %v, %s (unchanged): %v", pipeGrafana, changed[pipeGrafana], pipeBlog, changed[pipeBlog])
	}
	awaitViews(t, p.views, []pipelineCase{{pipeGrafana, addressed(pipeGrafana, "192.168.0.52"), addressed(pipeGrafana, exampleGlobal)}})
	eventually(t, 10*time.Second, "expose marked shows grafana", func() error {
		return addressed(pipeGrafana, exampleGlobal).check(p.marked.Addr("dns"), pipeGrafana)
	})
	for _, name := range []string{pipeBlog, pipeApp, pipeWiki} {
		if err := nxdomain.check(p.marked.Addr("dns"), name); err != nil {
			t.Errorf("expose marked: %s, not marked true: %v", name, err)
		}
	}
	// Behind the etcd plugin, the flip takes effect within the same bound.
	for _, c := range []*coreDNS{p.plain, p.plainMarked} {
		eventually(t, 10*time.Second, "the etcd plugin's view shows grafana", func() error {
			return addressed(pipeGrafana, exampleGlobal).check(c.Addr("dns"), pipeGrafana)
		})
	}
	for _, name := range []string{pipeBlog, pipeApp, pipeWiki} {
		if err := nxdomain.check(p.plainMarked.Addr("dns"), name); err != nil {
			t.Errorf("expose marked behind the etcd plugin: %s, not marked true: %v", name, err)
		}
	}
}

// checkPlainViews checks the external view behind the etcd plugin (no
// etcdzone) while grafana and wiki are marked "false": neither is answered
// with the global address, over UDP and TCP, for A and ANY, at the end of
// wiki-alias's CNAME, nor in the apex's answer of its subtree; blog is; and
// with expose marked, no name is.
func (p *webhookPipeline) checkPlainViews(t *testing.T) {
	t.Helper()
	zone := dns.Fqdn(exampleDomain)
	plain, marked := p.plain.Addr("dns"), p.plainMarked.Addr("dns")
	for _, addr := range []string{plain, marked} {
		for _, name := range []string{pipeGrafana, pipeWiki} {
			for _, qtype := range []uint16{dns.TypeA, dns.TypeANY} {
				checkMarked(t, addr, name+".", qtype, dns.RcodeNameError, nil, []string{exampleGlobal})
			}
		}
		checkMarked(t, addr, zone, dns.TypeA, -1, nil, []string{exampleGlobal})
	}
	checkMarked(t, plain, pipeWikiAlias+".", dns.TypeA, dns.RcodeSuccess, []string{"CNAME " + pipeWiki + "."}, []string{exampleGlobal})
	checkMarked(t, plain, pipeBlog+".", dns.TypeA, dns.RcodeSuccess, []string{"A " + exampleGlobal}, nil)
	for _, name := range []string{pipeBlog, pipeApp, pipeWikiAlias} {
		checkMarked(t, marked, name+".", dns.TypeA, dns.RcodeNameError, nil, []string{exampleGlobal})
	}
}

// checkMark fails t unless each key of name in the webhook's tree holds
// field (the mark, as JSON).
func (p *webhookPipeline) checkMark(t *testing.T, name, field string) {
	t.Helper()
	tree, _ := skydnsTree(t, p.etcd, webhookTree)
	n := 0
	for _, l := range tree {
		if strings.HasPrefix(l, name+" ") {
			n++
			if !strings.Contains(l, field) {
				t.Errorf("etcd holds %s, without %s", l, field)
			}
		}
	}
	if n == 0 {
		t.Errorf("etcd holds no key of %s", name)
	}
}

// awaitSecondary waits until the hidden primary answers name's A record
// with the global address, and BIND serves the primary's serial then, and
// returns that serial.
func (p *webhookPipeline) awaitSecondary(t *testing.T, name string) uint32 {
	t.Helper()
	zone, primary := dns.Fqdn(exampleDomain), p.primary.Addr("dns")
	eventually(t, 10*time.Second, "the primary publishes "+name, func() error {
		return answers(primary, name+".", dns.TypeA, []string{exampleGlobal})
	})
	serial := soaSerial(t, primary, zone)
	eventually(t, 10*time.Second, fmt.Sprintf("BIND serves serial %d", serial), func() error {
		if got, err := serialAt(p.bind.Addr, zone); err != nil || got != serial {
			return fmt.Errorf("serial %d (%v)", got, err)
		}
		return answers(p.bind.Addr, name+".", dns.TypeA, []string{exampleGlobal})
	})
	return serial
}

// soaRecord returns the SOA record the zone has at addr.
func soaRecord(t *testing.T, addr string) *dns.SOA {
	t.Helper()
	for _, rr := range query(t, "udp", addr, dns.Fqdn(exampleDomain), dns.TypeSOA).Answer {
		if soa, ok := rr.(*dns.SOA); ok {
			return soa
		}
	}
	t.Fatalf("no SOA at %s", addr)
	return nil
}

// owners returns the owner names of rrs, lower case and without the final
// dot.
func owners(rrs []dns.RR) map[string]bool {
	names := map[string]bool{}
	for _, rr := range rrs {
		names[strings.TrimSuffix(strings.ToLower(rr.Header().Name), ".")] = true
	}
	return names
}
