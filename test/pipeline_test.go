package test

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/globaladdr/globaladdr/internal/etcdtest"

	"github.com/miekg/dns"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The load balancers' addresses in the pipeline test, besides
// exampleInternal (the Ingress app's).
const (
	wildcardInternal = "192.168.0.80"   // the Ingress apps's, for *.apps.example.com
	serviceInternal  = "192.168.0.60"   // the Service svc's, once it has an address
	serviceHostname  = "lb.example.net" // the Service svc's before: a cloud load balancer's name
)

// TestKubernetesPipeline runs the whole pipeline as a cluster runs it, with
// the programs of `make kube-bins`: a real kube-apiserver on the test's
// etcd, where first every manifest of corefile-examples/kubernetes (but
// cert-manager's, whose kinds this API server lacks), the chart rendered
// with each values file of its ci/ directory, and external-dns's own chart
// rendered with the values for its webhook sidecar pass strict
// server-side validation. Then two Ingresses (one for a wildcard
// host) and a LoadBalancer Service are created and given their load
// balancers' addresses (the Service a hostname) through the status
// subresource; the real external-dns writes their records into the same
// etcd under /skydns, and CoreDNS, started from single-process.Corefile,
// answers them (the wildcard for a name it covers): the internal view with
// the load balancers' addresses, the external view with the global
// address. Then an Ingress is deleted and the
// Service's status changes to an address: after external-dns's next run,
// both views follow.
func TestKubernetesPipeline(t *testing.T) {
	etcd := startEtcd(t)
	api := startAPIServer(t, etcd.Endpoint())
	k := newKubectl(t, api)
	k.run(t, nil, "wait", "--for=create", "namespace/default", "--timeout=1m")
	t.Run("manifests", func(t *testing.T) { checkServerDryRun(t, k, manifestFiles(t)...) })
	t.Run("chart", func(t *testing.T) {
		// The helm test Pod runs as the release's service account, which
		// helm install has made by the time helm test runs; a dry run makes
		// nothing, so it is made here.
		k.run(t, nil, "create", "serviceaccount", "globaladdr")
		checkServerDryRun(t, k, chartManifestFiles(t, t.TempDir())...)
	})
	t.Run("external-dns chart", func(t *testing.T) {
		f := filepath.Join(t.TempDir(), externalDNSWebhookValues)
		chart, _ := externalDNSChart(t)
		writeSecret(t, f, []byte(renderExternalDNS(t, chart, externalDNSWebhookValues)))
		checkServerDryRun(t, k, f)
	})

	env, _ := exampleEnv(t, etcd)
	setEnv(t, env)
	c := startExample(t, examplePorts.Replace(readExample(t, "single-process.Corefile")), env)
	waitServing(t, c.Addr("internal"))
	waitServing(t, c.Addr("external"))

	app, apps, svc := "app."+exampleDomain, "*.apps."+exampleDomain, "svc."+exampleDomain
	shop := "shop.apps." + exampleDomain // a name the wildcard covers
	k.apply(t, ingress("app", app), ingress("apps", apps), loadBalancer("svc", svc))
	k.setStatus(t, "ingress/app", ingressStatus(exampleInternal))
	k.setStatus(t, "ingress/apps", ingressStatus(wildcardInternal))
	k.setStatus(t, "service/svc", serviceStatus(corev1.LoadBalancerIngress{Hostname: serviceHostname}))
	runExternalDNS(t, api, coreDNSProvider(etcd.Endpoint(), "/skydns/"))
	checkStored(t, etcd, map[string][]string{
		app:            {exampleInternal},
		"a-" + app:     {ownershipText("ingress/default/app")},
		apps:           {wildcardInternal},
		svc:            {serviceHostname},
		"cname-" + svc: {ownershipText("service/default/svc")},
	})
	// The zone publishes a change a moment after etcd holds it: wait for
	// the views before checking them.
	awaitViews(t, c, []pipelineCase{
		{app, addressed(app, exampleInternal), addressed(app, exampleGlobal)},
		{shop, addressed(shop, wildcardInternal), addressed(shop, exampleGlobal)},
		{svc, aliased(svc, serviceHostname), aliased(svc, serviceHostname)},
	})
	checkInternal(t, c.Addr("internal"))
	checkExternal(t, c.Addr("external"))

	k.run(t, nil, "delete", "ingress/app")
	k.setStatus(t, "service/svc", serviceStatus(corev1.LoadBalancerIngress{IP: serviceInternal}))
	runExternalDNS(t, api, coreDNSProvider(etcd.Endpoint(), "/skydns/"))
	checkStored(t, etcd, map[string][]string{
		app:  nil,
		apps: {wildcardInternal},
		svc:  {serviceInternal},
	})
	awaitViews(t, c, []pipelineCase{
		{app, nxdomain, nxdomain},
		{shop, addressed(shop, wildcardInternal), addressed(shop, exampleGlobal)},
		{svc, addressed(svc, serviceInternal), addressed(svc, exampleGlobal)},
	})
}

// ingress returns an Ingress of the default namespace for host, with no
// backend: external-dns reads the hosts and the status only.
func ingress(name, host string) *networkingv1.Ingress {
	return &networkingv1.Ingress{
		TypeMeta:   metav1.TypeMeta{APIVersion: "networking.k8s.io/v1", Kind: "Ingress"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec:       networkingv1.IngressSpec{Rules: []networkingv1.IngressRule{{Host: host}}},
	}
}

// loadBalancer returns a Service of type LoadBalancer of the default
// namespace, which external-dns publishes as hostname (its annotation's
// prefix is external-dns's default since v0.22.0; before, it was
// external-dns.alpha.kubernetes.io/).
func loadBalancer(name, hostname string) *corev1.Service {
	return &corev1.Service{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Namespace:   "default",
			Annotations: map[string]string{"external-dns.kubernetes.io/hostname": hostname},
		},
		Spec: corev1.ServiceSpec{
			Type:  corev1.ServiceTypeLoadBalancer,
			Ports: []corev1.ServicePort{{Port: 80}},
		},
	}
}

// ingressStatus is the status of an Ingress whose load balancer is at ips.
func ingressStatus(ips ...string) networkingv1.IngressStatus {
	var lbs []networkingv1.IngressLoadBalancerIngress
	for _, ip := range ips {
		lbs = append(lbs, networkingv1.IngressLoadBalancerIngress{IP: ip})
	}
	return networkingv1.IngressStatus{LoadBalancer: networkingv1.IngressLoadBalancerStatus{Ingress: lbs}}
}

// serviceStatus is the status of a Service whose load balancers are lbs.
func serviceStatus(lbs ...corev1.LoadBalancerIngress) corev1.ServiceStatus {
	return corev1.ServiceStatus{LoadBalancer: corev1.LoadBalancerStatus{Ingress: lbs}}
}

// ownershipText is the text of the TXT registry's ownership record of the
// records of resource (e.g. "ingress/default/app"), with its quotes.
func ownershipText(resource string) string {
	return fmt.Sprintf(`"heritage=external-dns,external-dns/owner=%s,external-dns/resource=%s"`, externalDNSOwner, resource)
}

// checkStored fails t unless etcd holds, for each name, the values of want
// (see stored); nil means nothing.
func checkStored(t *testing.T, etcd *etcdtest.Server, want map[string][]string) {
	t.Helper()
	for name, values := range want {
		if got := stored(t, etcd, name); !slices.Equal(got, values) {
			t.Errorf("etcd holds %q for %s, want %q", got, name, values)
		}
	}
}

// viewAnswer is a view's reply to an A query: its rcode and its Answer
// section, each record as "OWNER TYPE DATA", sorted.
type viewAnswer struct {
	rcode   int
	records []string
}

// nxdomain is the reply for a name that does not exist.
var nxdomain = viewAnswer{rcode: dns.RcodeNameError}

// addressed is the reply of name's A record ip.
func addressed(name, ip string) viewAnswer {
	return viewAnswer{dns.RcodeSuccess, []string{dns.Fqdn(name) + " A " + ip}}
}

// aliased is the reply of name's CNAME record to target, outside the zone.
func aliased(name, target string) viewAnswer {
	return viewAnswer{dns.RcodeSuccess, []string{dns.Fqdn(name) + " CNAME " + dns.Fqdn(target)}}
}

// pipelineCase is a name and what each view answers for its A records.
type pipelineCase struct {
	name               string
	internal, external viewAnswer
}

// awaitViews waits until each view of c, started from
// single-process.Corefile, answers each case as it says: external-dns's
// write reaches the views' zones through their etcd watches.
func awaitViews(t *testing.T, c *coreDNS, cases []pipelineCase) {
	t.Helper()
	for _, pc := range cases {
		for _, v := range []struct {
			name string
			want viewAnswer
		}{{"internal", pc.internal}, {"external", pc.external}} {
			addr := c.Addr(v.name)
			eventually(t, time.Minute, fmt.Sprintf("the %s view answers %s A", v.name, pc.name), func() error {
				return v.want.check(addr, pc.name)
			})
		}
	}
}

// check asks addr for name's A records over TCP, which rrl does not limit,
// and returns nil when the reply is want.
func (want viewAnswer) check(addr, name string) error {
	m := new(dns.Msg)
	m.SetQuestion(dns.Fqdn(name), dns.TypeA)
	r, _, err := (&dns.Client{Net: "tcp", Timeout: 5 * time.Second}).Exchange(m, addr)
	if err != nil {
		return err
	}
	var got []string
	for _, rr := range r.Answer {
		h := rr.Header()
		got = append(got, h.Name+" "+dns.TypeToString[h.Rrtype]+" "+strings.TrimPrefix(rr.String(), h.String()))
	}
	slices.Sort(got)
	if r.Rcode != want.rcode || !slices.Equal(got, want.records) {
		return fmt.Errorf("%s %q, want %s %q", dns.RcodeToString[r.Rcode], got, dns.RcodeToString[want.rcode], want.records)
	}
	return nil
}
