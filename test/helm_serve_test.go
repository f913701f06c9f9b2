package test

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/coredns/coredns/plugin/test"
	"github.com/globaladdr/globaladdr/internal/etcdlab"
	"github.com/globaladdr/globaladdr/internal/nameserver"
	"github.com/globaladdr/globaladdr/internal/prereq"
	"github.com/globaladdr/globaladdr/internal/testpki"

	"github.com/miekg/dns"
)

// TestHelmServe runs the pod of the chart rendered with each values file of
// ci/, as the kubelet would (podCorefile), against an etcd holding an
// Ingress's record and a name the ports example hides, with the values that
// name other hosts (etcd, the LAN's resolver, the secondary, the LAN's
// networks) pointed at the test's on loopback. It asks each view what
// TestCorefileExamples asks (the internal address and a forwarded name in
// the LAN view; the global address, from whichever source the values give,
// and a refused name in the external view; a transfer by a secondary of the
// hidden primary, signed, also over TLS), and that the hidden names do
// not exist outside, then what the probes and Prometheus would, and runs
// the release's helm test against it (helm_hook_test.go), which must fail
// against a view that leaks or is down. The publish values file's pod is
// made, not started: outside a cluster it has no API server to write to.
// With webhook.enabled, the webhook sidecar's Corefile starts too, against
// the values' etcd.
func TestHelmServe(t *testing.T) {
	helm(t)
	busybox(t)
	etcd := startEtcd(t)
	putRecords(t, etcd, a("app."+exampleDomain, exampleInternal), a("db.internal."+exampleDomain, "192.168.0.70"))
	putGlobal(t, etcd, exampleGlobal)
	upstream := startCoreDNS(t, upstreamCorefile)
	secondary := nameserver.FreeLoopbackAddr(t)
	site := siteValues(t, etcd.Endpoint(), upstream.Addr("upstream"), secondary)
	k := testCluster(t)

	for _, c := range chartCases {
		t.Run(c.values, func(t *testing.T) {
			// Parallel: stopping CoreDNS takes the health plugin's lameduck.
			t.Parallel()
			if words(valueAt(chartValues(t, c.path()), "etcd.endpoints")) == "" {
				// It runs an etcd of its own, not the test's:
				// TestHelmBundledEtcd runs it as rendered.
				return
			}
			site, k := site, k
			if c.values == "etcd-tls-values.yaml" {
				site, k = secureSite(t, upstream.Addr("upstream"), secondary)
			}
			r := renderRelease(t, c.path(), site)
			deploy := r.only(t)
			corefile := r.podCorefile(t, deploy, k)
			if c.example == "publish.Corefile" {
				// Its publication needs the API server of the cluster it
				// runs in: TestPublishExample runs publish.Corefile
				// against one.
				return
			}
			srv := startCoreDNS(t, corefile)
			if c.example == "uplink.Corefile" {
				// Its sources need a router and an interface: it starts
				// here, and TestUplinkExample serves it in a lab.
				return
			}
			values := chartValues(t, c.path())
			externalPort := "dns"
			switch values["views"] {
			case "ports":
				externalPort = "external"
				fallthrough
			case "clients":
				waitServing(t, srv.Addr("dns"))
				checkInternal(t, srv.Addr("dns"))
			}
			// The external view, asked by a client outside the LAN.
			external := net.JoinHostPort(loopback(internetClient).String(), strconv.Itoa(srv.Port(externalPort)))
			waitServing(t, external)
			switch {
			case values["views"] == "hidden-primary":
				checkHiddenPrimary(secondary)(t, external)
			case valueAt(values, "globaladdr.tunnel") != "":
				checkTunnelExample(t, external)
			default:
				checkExternalFrom(t, internetClient, external)
			}
			for _, name := range strings.Fields(words(valueAt(values, "globaladdr.hide"))) {
				checkHidden(t, external, "db."+name)
			}
			checkProbes(t, srv, deploy.Spec.Template.Spec.Containers[0])
			checkChartHelmTest(t, r, values["views"], srv.Addr("dns"), external)
			if hook, ok := r.configMaps[helmRelease+"-webhook"]; ok {
				checkChartWebhook(t, r.inPod(t, deploy, k, hook.Data["Corefile"]))
			}
		})
	}
}

// siteValues writes the values that point the chart at the test's etcd, the
// LAN's resolver and the secondary, with the helm test's name and NOTIFY's
// source the address the secondary knows the primary by.
func siteValues(t *testing.T, etcd, upstream, secondary string) string {
	t.Helper()
	return writeValues(t, fmt.Sprintf(`
etcd: {endpoints: [%s]}
lan: {upstream: [%s], networks: [%s/32]}
hiddenPrimary: {secondaries: [%s], notifySource: %s}
helmTest: {name: app.%s}
`, etcd, upstream, lanClient, secondary, loopback(internetClient), exampleDomain))
}

// checkChartHelmTest runs r's helm test against the views of a release of
// views: the LAN view at lan, the external one at external (with clients,
// the test asks lan from a LAN client). With ports, it must fail when the
// external view is the LAN's, which answers the internal address, and
// when it is down.
func checkChartHelmTest(t *testing.T, r *release, views any, lan, external string) {
	t.Helper()
	served := map[string]string{"external": external}
	switch views {
	case "clients":
		served = map[string]string{"client": lan}
	case "ports":
		served["lan"] = lan
		checkHelmTestFails(t, r, map[string]string{"lan": lan, "external": lan}, "FAIL: the external view ("+lan+") answers app.example.com with internal addresses: "+exampleInternal)
		checkHelmTestFails(t, r, map[string]string{"lan": lan, "external": closedAddr(t)}, "FAIL: the external view")
	}
	checkHelmTestPod(t, r, served)
}

// closedAddr returns a loopback address and port where nothing listens.
func closedAddr(t *testing.T) string {
	t.Helper()
	l, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.LocalAddr().String()
	l.Close()
	return addr
}

// checkChartWebhook starts corefile, the webhook sidecar's as the chart
// renders it (with the pod's files and environment), and asks its API and
// /healthz what external-dns and the kubelet would.
func checkChartWebhook(t *testing.T, corefile string) {
	t.Helper()
	corefile = strings.NewReplacer("127.0.0.1:8888 {", "127.0.0.1:{httpport:webhook} {", "health :8080", "health :{httpport:webhookhealth}").Replace(corefile)
	srv := startCoreDNS(t, corefile)
	api := "http://" + srv.Addr("webhook")
	checkNegotiation(t, api, exampleDomain)
	if resp, body := webhookCall(t, "GET", api+"/records", ""); resp.StatusCode != http.StatusOK || !strings.Contains(body, exampleInternal) {
		t.Errorf("GET /records: %d %s", resp.StatusCode, body)
	}
	checkHTTP(t, "http://"+srv.Addr("webhookhealth")+"/healthz", "ok")
}

// secureSite starts an etcd as operators run it (Debian's etcd-server, TLS
// client certificates, auth), holding what TestHelmServe's embedded one
// holds, with a read-only user on /skydns/; it returns the values that point
// at it and the Secrets of its client certificate and the user's
// credentials.
func secureSite(t *testing.T, upstream, secondary string) (string, cluster) {
	t.Helper()
	lab := etcdlab.StartLab(t, prereq.Program(t, "etcd", "etcd-server"))
	lab.AddUser(t, "coredns", "coredns-secret", etcdlab.Perm{Prefix: "/skydns/"})
	putRecords2(t, lab, a("app."+exampleDomain, exampleInternal), a("db.internal."+exampleDomain, "192.168.0.70"))
	site := siteValues(t, lab.Member.ClientURL, upstream, secondary)
	k := testCluster(t)
	k.secrets["etcd-credentials"] = map[string]string{"username": "coredns", "password": "coredns-secret"}
	k.secrets["etcd-client-tls"] = map[string]string{
		"tls.crt": readFile(t, lab.Client.CertFile),
		"tls.key": readFile(t, lab.Client.KeyFile),
		"ca.crt":  readFile(t, lab.CA.CertFile),
	}
	return site, k
}

// readFile returns the file's text.
func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// testCluster returns the Secrets and ConfigMaps that the ci/ values files
// name: the TSIG keys, etcd's client certificate, its CA's and credentials,
// the XoT listener's certificate, the zone's signing key (a CSK), and the
// uplink's address in a ConfigMap.
func testCluster(t *testing.T) cluster {
	ca := testpki.NewCA(t, "etcd")
	client := ca.Issue(t, "coredns")
	xot := writeXoTCerts(t)
	_, csk := writeKeyIn(t, t.TempDir(), dns.Fqdn(exampleDomain), 257)
	return cluster{
		secrets: map[string]map[string]string{
			"globaladdr-tsig":  {"secret": nameserver.TestKey.Secret},
			"globaladdr-acme":  {"secret": nameserver.TestKey.Secret},
			"etcd-credentials": {"username": "coredns", "password": "not-checked"},
			"etcd-client-tls": {
				"tls.crt": readFile(t, client.CertFile),
				"tls.key": readFile(t, client.KeyFile),
				"ca.crt":  readFile(t, ca.CertFile),
			},
			"globaladdr-xot-tls": {"tls.crt": readFile(t, xot.certFile), "tls.key": readFile(t, xot.keyFile)},
			"globaladdr-dnssec":  {"csk.key": readFile(t, csk+".key"), "csk.private": readFile(t, csk+".private")},
		},
		configMaps: map[string]map[string]string{
			"uplink": {"addresses": exampleGlobal + "\n"},
		},
	}
}

// checkExternalFrom is checkExternalView of the examples' domain and global
// address, asked from the address client.
func checkExternalFrom(t *testing.T, client netip.Addr, addr string) {
	t.Helper()
	checkCaseFrom(t, client, addr, test.Case{
		Qname: "app." + exampleDomain + ".", Qtype: dns.TypeA,
		Answer: []dns.RR{test.A("app." + exampleDomain + ". 303 IN A " + exampleGlobal)},
	})
	checkCaseFrom(t, client, addr, test.Case{Qname: "www.example.org.", Qtype: dns.TypeA, Rcode: dns.RcodeRefused})
	checkUnknownTSIGKey(t, client, addr)
	checkCookies(t, client, addr)
}

// checkHidden fails t unless the view at addr answers name NXDOMAIN.
func checkHidden(t *testing.T, addr, name string) {
	t.Helper()
	if r := query(t, "tcp", addr, name, dns.TypeA); r.Rcode != dns.RcodeNameError || len(r.Answer) != 0 {
		t.Errorf("the external view answers %s, a hidden name:\n%v", name, r)
	}
}
