package test

import (
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/globaladdr/globaladdr/internal/etcdtest"
	"github.com/globaladdr/globaladdr/internal/nameserver"
	"github.com/globaladdr/globaladdr/plugin/webhook/wire"

	"github.com/miekg/dns"
	corev1 "k8s.io/api/core/v1"
)

// The trees of the webhook pipeline test, in one etcd: the webhook's, at
// the webhook's default path (which the example Corefiles read), and the
// coredns provider's, the reference it is compared with.
const (
	webhookTree = "/skydns/"
	coreDNSTree = "/coredns/"
)

// pipelineFlags are the flags external-dns runs with in the webhook
// pipeline test besides runExternalDNS's: it reads DNSEndpoints besides the
// Ingresses and Services (given, the sources replace runExternalDNS's), and
// manages TXT records besides its default A, AAAA and CNAME.
var pipelineFlags = []string{
	"--source=ingress",
	"--source=service",
	"--source=crd",
	"--managed-record-types=A",
	"--managed-record-types=AAAA",
	"--managed-record-types=CNAME",
	"--managed-record-types=TXT",
}

// TestWebhookPipeline runs the real external-dns (with --provider=webhook)
// against the webhook sidecar started from webhook.Corefile, with the
// programs of `make kube-bins`: a kube-apiserver with external-dns's
// DNSEndpoint CRD, on an etcd of its own, and the records' etcd, which the
// example Corefiles' views read. Its phases share them, each starting from
// what the one before left:
//
//   - differential: the same Ingresses, Services and DNSEndpoint (A, AAAA,
//     CNAME and TXT records, a wildcard, several targets, both families at
//     one name) are written by external-dns's coredns provider and through
//     the webhook: the trees are the same but for the random labels and the
//     TXT record at the name of an A record, which the webhook keeps in a
//     key of its own; single-process.Corefile over each answers alike;
//   - no churn: a sync with nothing to do writes nothing;
//   - migration: the webhook takes over the coredns provider's tree
//     without a write, and takes back a copy of its own after the coredns
//     provider synced it (see migration for what that one writes);
//   - exposure: names marked "false" are missing from the external view,
//     its BIND secondary and an IXFR, not from the internal view, until
//     the mark is flipped; expose marked shows only names marked "true";
//   - routes: a name routed "tunnel" by its annotation is a CNAME to the
//     tunnel outside, one routed "address" is served by address, one with
//     a route no view has is missing, until the route is flipped;
//   - legacy annotations: the exposure mark under external-dns's old
//     prefix is lost by v0.23.0 (the name public where unmarked names
//     are), and holds with --enable-legacy-annotation-prefix;
//   - faults: etcd stopped, the webhook stopped, external-dns killed as a
//     change set arrives; the next sync converges, nothing lost or written
//     twice.
func TestWebhookPipeline(t *testing.T) {
	p := startWebhookPipeline(t)
	for _, phase := range []struct {
		name string
		run  func(*testing.T)
	}{
		{"differential", p.differential},
		{"no churn", p.noChurn},
		{"migration", p.migration},
		{"exposure", p.exposure},
		{"routes", p.routes},
		{"legacy annotations", p.legacyAnnotations},
		{"faults", p.faults},
	} {
		if !t.Run(phase.name, phase.run) {
			return // the next phases start from what this one left
		}
	}
}

// webhookPipeline is what the phases of TestWebhookPipeline share.
type webhookPipeline struct {
	// test is the whole test, whose end stops what the phases start to
	// last (the webhook, restarted).
	test *testing.T
	api  *apiServer
	k    *kubectl
	etcd *etcdtest.Server // the records' etcd
	env  map[string]string
	// webhook is the sidecar, started from webhook.Corefile, writing the
	// webhook tree; proxy stands between it and external-dns.
	webhook *coreDNS
	proxy   *webhookProxy
	// views and refViews are single-process.Corefile over the webhook tree
	// and over the coredns provider's.
	views, refViews *coreDNS
	// primary is hidden-primary.Corefile over the webhook tree, bind its
	// secondary; marked is external.Corefile with expose marked.
	primary, marked *coreDNS
	// plain and plainMarked are external.Corefile without etcdzone (the
	// etcd plugin as the backend), with expose unmarked and marked.
	plain, plainMarked *coreDNS
	// tunnelMarked and tunnelAll are external.Corefile with a tunnel for
	// the names routed through it, and for every name.
	tunnelMarked, tunnelAll *coreDNS
	bind                    *nameserver.Server
}

// startWebhookPipeline starts the API server with external-dns's CRD and the
// fixtures, the records' etcd, the sidecar and the views.
func startWebhookPipeline(t *testing.T) *webhookPipeline {
	p := &webhookPipeline{test: t}
	p.api = startAPIServer(t, startEtcd(t).Endpoint())
	p.k = newKubectl(t, p.api)
	p.k.run(t, nil, "apply", "-f", dnsEndpointCRD(t))
	p.k.run(t, nil, "wait", "--for=condition=established", "crd/dnsendpoints.externaldns.k8s.io", "--timeout=1m")
	p.k.run(t, nil, "wait", "--for=create", "namespace/default", "--timeout=1m")
	p.applyFixtures(t)

	p.etcd = startEtcd(t)
	p.env, _ = exampleEnv(t, p.etcd)
	setEnv(t, p.env)
	p.webhook = p.startWebhook(t, webhookTree)
	p.proxy = startWebhookProxy(t, webhookURL(p.webhook))
	singleProcess := examplePorts.Replace(readExample(t, "single-process.Corefile"))
	p.views = startExample(t, singleProcess, p.env)
	p.refViews = startExample(t, corefileEdit(t, singleProcess, "path /skydns", "path "+strings.TrimSuffix(coreDNSTree, "/")), p.env)
	p.primary = startExample(t, examplePorts.Replace(readExample(t, "hidden-primary.Corefile")), p.env)
	p.bind = nameserver.StartBIND(t, p.env["SECONDARY"], nameserver.Primary{Zone: dns.Fqdn(exampleDomain), Addr: p.primary.Addr("dns"), Key: nameserver.TestKey})
	external := examplePorts.Replace(readExample(t, "external.Corefile"))
	p.marked = startExample(t, corefileEdit(t, external, "ttl 900", "ttl 900\n        expose marked"), p.env)
	plain := withoutEtcdzone(t, external)
	p.plain = startExample(t, plain, p.env)
	p.plainMarked = startExample(t, corefileEdit(t, plain, "ttl 900", "ttl 900\n        expose marked"), p.env)
	p.tunnelMarked = startExample(t, corefileEdit(t, external, "ttl 900", "ttl 900\n        tunnel "+tunnelTarget+" marked"), p.env)
	p.tunnelAll = startExample(t, corefileEdit(t, external, "ttl 900", "ttl 900\n        tunnel "+tunnelTarget), p.env)
	// Their health plugins wait 5 s in lame duck mode as they stop: stop
	// them together (before their own cleanups, which then do nothing).
	t.Cleanup(func() {
		var wg sync.WaitGroup
		for _, c := range []*coreDNS{p.views, p.refViews, p.primary, p.marked, p.plain, p.plainMarked, p.tunnelMarked, p.tunnelAll} {
			wg.Go(c.Stop)
		}
		wg.Wait()
	})
	return p
}

// startWebhook starts webhook.Corefile with the webhook writing the tree at
// path.
func (p *webhookPipeline) startWebhook(t *testing.T, path string) *coreDNS {
	t.Helper()
	corefile := examplePorts.Replace(readExample(t, "webhook.Corefile"))
	if path != webhookTree {
		line := "webhook 127.0.0.1:{httpport:webhook} {"
		corefile = corefileEdit(t, corefile, line, line+"\n        path "+strings.TrimSuffix(path, "/"))
	}
	return startExample(t, corefile, p.env)
}

// etcdzoneBlock is etcdzone's block in an example Corefile.
var etcdzoneBlock = regexp.MustCompile(`(?s)\n    etcdzone \{\n.*?\n    \}\n`)

// withoutEtcdzone returns corefile, an example, with the etcd plugin as the
// backend in place of etcdzone: the etcd plugin reads etcd itself.
func withoutEtcdzone(t *testing.T, corefile string) string {
	t.Helper()
	if !etcdzoneBlock.MatchString(corefile) {
		t.Fatalf("the Corefile has no etcdzone block:\n%s", corefile)
	}
	corefile = etcdzoneBlock.ReplaceAllString(corefile, "\n")
	return corefileEdit(t, corefile, "path /skydns", "path /skydns\n        endpoint {$ETCD_ENDPOINT}")
}

// corefileEdit returns corefile with each old replaced by new, and fails t
// at once when it has none: an example that changed.
func corefileEdit(t *testing.T, corefile, old, new string) string {
	t.Helper()
	if !strings.Contains(corefile, old) {
		t.Fatalf("the Corefile has no %q:\n%s", old, corefile)
	}
	return strings.ReplaceAll(corefile, old, new)
}

// webhookURL is the address of the webhook API of c, from webhook.Corefile.
func webhookURL(c *coreDNS) string { return "http://" + c.Addr("webhook") }

// sync runs external-dns once through the webhook (through the proxy) and
// returns the records' etcd revision after it.
func (p *webhookPipeline) sync(t *testing.T) int64 {
	t.Helper()
	runExternalDNS(t, p.api, webhookProvider(p.proxy.url), pipelineFlags...)
	return currentRevision(t, p.etcd)
}

// syncCoreDNS runs external-dns once with the coredns provider on the tree
// at prefix and returns the records' etcd revision after it.
func (p *webhookPipeline) syncCoreDNS(t *testing.T, prefix string) int64 {
	t.Helper()
	runExternalDNS(t, p.api, coreDNSProvider(p.etcd.Endpoint(), prefix), pipelineFlags...)
	return currentRevision(t, p.etcd)
}

// The fixtures' names and addresses.
var (
	pipeApp    = "app." + exampleDomain
	pipeApps   = "*.apps." + exampleDomain
	pipeShop   = "shop.apps." + exampleDomain // a name the wildcard covers
	pipeDual   = "dual." + exampleDomain      // A and AAAA
	pipeSvc    = "svc." + exampleDomain       // CNAME, out of the zone
	pipeMulti  = "multi." + exampleDomain     // several A targets, and an AAAA
	pipeMixed  = "mixed." + exampleDomain     // A and TXT, of a DNSEndpoint
	pipeText   = "txt." + exampleDomain       // TXT alone
	pipeV6     = "v6." + exampleDomain        // several AAAA targets
	pipeAlias  = "alias." + exampleDomain     // CNAME, in the zone
	pipeNames  = []string{pipeApp, pipeShop, pipeDual, pipeSvc, pipeMulti, pipeMixed, pipeText, pipeV6, pipeAlias, "none." + exampleDomain}
	multiAddrs = []string{"192.168.0.61", "192.168.0.62", "fd00::61"}
)

// applyFixtures creates the Ingresses, Services and the DNSEndpoint the
// differential writes, with their load balancers' addresses.
func (p *webhookPipeline) applyFixtures(t *testing.T) {
	app := ingress("app", pipeApp)
	app.Annotations = map[string]string{"external-dns.kubernetes.io/ttl": "60"}
	p.k.apply(t,
		app, ingress("apps", pipeApps), ingress("dual", pipeDual),
		loadBalancer("svc", pipeSvc), loadBalancer("multi", pipeMulti),
		dnsEndpoint("records",
			&wire.Endpoint{DNSName: pipeMixed, RecordType: "A", Targets: []string{"192.168.0.70"}},
			&wire.Endpoint{DNSName: pipeMixed, RecordType: "TXT", Targets: []string{"v=spf1 -all"}},
			&wire.Endpoint{DNSName: pipeText, RecordType: "TXT", Targets: []string{"hello world"}},
			&wire.Endpoint{DNSName: pipeV6, RecordType: "AAAA", Targets: []string{"fd00::71", "fd00::72"}, RecordTTL: 300},
			&wire.Endpoint{DNSName: pipeAlias, RecordType: "CNAME", Targets: []string{pipeApp}},
		),
	)
	p.k.setStatus(t, "ingress/app", ingressStatus(exampleInternal))
	p.k.setStatus(t, "ingress/apps", ingressStatus(wildcardInternal))
	p.k.setStatus(t, "ingress/dual", ingressStatus("192.168.0.53", "fd00::53"))
	p.k.setStatus(t, "service/svc", serviceStatus(corev1.LoadBalancerIngress{Hostname: serviceHostname}))
	p.setServiceIPs(t, "multi", multiAddrs...)
}

// setServiceIPs gives the Service name's load balancer the addresses ips.
func (p *webhookPipeline) setServiceIPs(t *testing.T, name string, ips ...string) {
	var lbs []corev1.LoadBalancerIngress
	for _, ip := range ips {
		lbs = append(lbs, corev1.LoadBalancerIngress{IP: ip})
	}
	p.k.setStatus(t, "service/"+name, serviceStatus(lbs...))
}

// dnsEndpoint returns a DNSEndpoint of the default namespace holding
// endpoints: external-dns's CRD has the fields of the webhook's endpoints.
func dnsEndpoint(name string, endpoints ...*wire.Endpoint) map[string]any {
	return map[string]any{
		"apiVersion": "externaldns.k8s.io/v1alpha1",
		"kind":       "DNSEndpoint",
		"metadata":   map[string]any{"name": name, "namespace": "default"},
		"spec":       map[string]any{"endpoints": endpoints},
	}
}

// dnsEndpointCRD returns the path of external-dns's DNSEndpoint CRD in the
// source of the release the tests run (externalDNSSource).
func dnsEndpointCRD(t *testing.T) string {
	t.Helper()
	dir, _ := externalDNSSource(t)
	return filepath.Join(dir, "config", "crd", "standard", "dnsendpoints.externaldns.k8s.io.yaml")
}

// differential writes the fixtures with the coredns provider and through
// the webhook, and compares the trees and the views over them.
func (p *webhookPipeline) differential(t *testing.T) {
	refRev := p.syncCoreDNS(t, coreDNSTree)
	rev := p.sync(t)

	ref, refLabels := skydnsTree(t, p.etcd, coreDNSTree)
	got, labels := skydnsTree(t, p.etcd, webhookTree)
	for _, l := range slices.Concat(refLabels, labels) {
		if !randomLabel.MatchString(l) {
			t.Errorf("random label %q is not 8 hexadecimal digits", l)
		}
	}
	unfolded, folded := unfoldTexts(t, ref)
	if !slices.Equal(got, unfolded) {
		t.Errorf("the webhook's tree differs from the coredns provider's (with each text in a key of its own):\n%s", diffText(unfolded, got))
	}
	// The one deliberate difference: the coredns provider folds the
	// DNSEndpoint's TXT record into the key of the A record of its name.
	if want := []string{pipeMixed}; !slices.Equal(folded, want) {
		t.Errorf("the coredns provider folded a text into a host key at %q, want %q", folded, want)
	}
	if t.Failed() {
		t.Logf("the coredns provider's tree:\n%s\nthe webhook's:\n%s", strings.Join(ref, "\n"), strings.Join(got, "\n"))
	}

	// Once each internal view published its tree as etcd held it after the
	// sync, both views answer alike.
	awaitSerial(t, p.refViews.Addr("internal"), refRev)
	awaitSerial(t, p.views.Addr("internal"), rev)
	for _, v := range []string{"internal", "external"} {
		eventually(t, 10*time.Second, "the "+v+" views over both trees answer alike", func() error {
			want, err := viewReplies(p.refViews.Addr(v), pipeNames)
			if err != nil {
				return err
			}
			got, err := viewReplies(p.views.Addr(v), pipeNames)
			if err != nil {
				return err
			}
			if !slices.Equal(got, want) {
				return fmt.Errorf("over the webhook's tree, then the coredns provider's:\n%s", diffText(want, got))
			}
			return nil
		})
	}
}

// noChurn syncs again: external-dns finds nothing to change, and etcd's
// revision stays.
func (p *webhookPipeline) noChurn(t *testing.T) {
	before := currentRevision(t, p.etcd)
	if after := p.sync(t); after != before {
		t.Errorf("a sync with nothing to change wrote to etcd: revision %d, was %d", after, before)
	}
}

// awaitSerial waits until the zone of the view at addr has the serial of
// etcd's revision rev: it has read every change up to rev.
func awaitSerial(t *testing.T, addr string, rev int64) {
	t.Helper()
	want := zoneSerial(rev)
	eventually(t, 10*time.Second, fmt.Sprintf("the zone at %s publishes serial %d", addr, want), func() error {
		if got, err := serialAt(addr, dns.Fqdn(exampleDomain)); err != nil || got != want {
			return fmt.Errorf("serial %d (%v)", got, err)
		}
		return nil
	})
}

// pipelineQuestions are the types the views are asked for each name.
var pipelineQuestions = []uint16{dns.TypeA, dns.TypeAAAA, dns.TypeCNAME, dns.TypeTXT}

// viewReplies asks the view at addr for each of names's records of each
// type of pipelineQuestions, over TCP (which rrl does not limit), and
// returns a line per question: the question, the rcode and the Answer
// section, sorted.
func viewReplies(addr string, names []string) ([]string, error) {
	var lines []string
	c := &dns.Client{Net: "tcp", Timeout: 5 * time.Second}
	for _, name := range names {
		for _, qtype := range pipelineQuestions {
			m := new(dns.Msg)
			m.SetQuestion(dns.Fqdn(name), qtype)
			r, _, err := c.Exchange(m, addr)
			if err != nil {
				return nil, err
			}
			var answer []string
			for _, rr := range r.Answer {
				answer = append(answer, rr.String())
			}
			slices.Sort(answer)
			lines = append(lines, fmt.Sprintf("%s %s: %s %s", name, dns.TypeToString[qtype], dns.RcodeToString[r.Rcode], strings.Join(answer, " | ")))
		}
	}
	return lines, nil
}
