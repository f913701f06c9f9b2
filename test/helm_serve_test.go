package test

import (
	"fmt"
	"net"
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
// hidden primary), and that the hidden names do not exist outside, then
// what the probes and Prometheus would. The publish values file's pod is
// made, not started: outside a cluster it has no API server to write to.
func TestHelmServe(t *testing.T) {
	helm(t)
	etcd := startEtcd(t)
	putRecords(t, etcd, a("app."+exampleDomain, exampleInternal), a("db.internal."+exampleDomain, "192.168.0.70"))
	putGlobal(t, etcd, exampleGlobal)
	upstream := startCoreDNS(t, upstreamCorefile)
	secondary := nameserver.FreeLoopbackAddr(t)
	site := writeValues(t, fmt.Sprintf(`
etcd: {endpoints: [%s]}
lan: {upstream: [%s], networks: [%s/32]}
hiddenPrimary: {secondaries: [%s]}
`, etcd.Endpoint(), upstream.Addr("upstream"), lanClient, secondary))
	k := testCluster(t)

	for _, c := range chartCases {
		t.Run(c.values, func(t *testing.T) {
			// Parallel: stopping CoreDNS takes the health plugin's lameduck.
			t.Parallel()
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
			if values["views"] == "hidden-primary" {
				checkHiddenPrimary(secondary)(t, external)
			} else {
				checkExternalFrom(t, internetClient, external)
			}
			for _, name := range strings.Fields(words(valueAt(values, "globaladdr.hide"))) {
				checkHidden(t, external, "db."+name)
			}
			checkProbes(t, srv, deploy.Spec.Template.Spec.Containers[0])
		})
	}
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
	site := writeValues(t, fmt.Sprintf(`
etcd: {endpoints: [%s]}
lan: {upstream: [%s], networks: [%s/32]}
hiddenPrimary: {secondaries: [%s]}
`, lab.Member.ClientURL, upstream, lanClient, secondary))
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
// and the uplink's address in a ConfigMap.
func testCluster(t *testing.T) cluster {
	ca := testpki.NewCA(t, "etcd")
	client := ca.Issue(t, "coredns")
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
