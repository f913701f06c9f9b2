package test

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/coredns/coredns/plugin/test"
	"github.com/globaladdr/globaladdr/internal/etcdtest"
	"github.com/globaladdr/globaladdr/internal/nameserver"

	"github.com/miekg/dns"
)

// The values the tests give the examples' placeholders.
const (
	exampleDomain   = "example.com"
	exampleGlobal   = "203.0.113.10"
	exampleInternal = "192.168.0.51"
	// exampleNS is the examples' NS set: two names in one variable, as a
	// user with a primary and a secondary gives them.
	exampleNS = "ns1.example.net ns2.example.net"
	// exampleHide is the subtree the external view of acme.Corefile hides.
	exampleHide = "lan." + exampleDomain
	// The two listening addresses of bind-split.Corefile.
	exampleInternalAddr = "127.0.0.1"
	exampleExternalAddr = "127.0.0.2"
)

// examplesDir is where the examples are, relative to this package.
const examplesDir = "../corefile-examples"

// examplePorts turns the examples' port placeholders into startCoreDNS's, so
// that each test gets free ports. CoreDNS itself expands the other
// placeholders from the environment, as it does for users.
var examplePorts = strings.NewReplacer(
	"{$DNS_PORT}", "{port:dns}",
	"{$XOT_PORT}", "{port:xot}",
	"{$INTERNAL_PORT}", "{port:internal}",
	"{$EXTERNAL_PORT}", "{port:external}",
	"{$HEALTH_PORT}", "{httpport:health}",
	"{$READY_PORT}", "{httpport:ready}",
	"{$METRICS_PORT}", "{httpport:metrics}",
	"{$WEBHOOK_PORT}", "{httpport:webhook}",
)

// envPlaceholder is an environment placeholder of a Corefile.
var envPlaceholder = regexp.MustCompile(`\{\$([A-Za-z0-9_]+)\}`)

// upstreamCorefile is the resolver the internal views forward to: it knows
// one name outside the examples' domain.
const upstreamCorefile = `example.org:{port:upstream} {
	hosts {
		198.51.100.7 www.example.org
	}
}
`

// TestCorefileExamples starts CoreDNS from every Corefile in
// corefile-examples/, with its placeholders set, against an etcd holding an
// Ingress's record as external-dns writes it, and asks each listener: an
// internal view answers the internal address and forwards other names (to a
// resolver of the test, on loopback), an external view answers the global
// address and refuses other names; the DNSSEC examples sign the rewritten
// answer. Each example's health, ready and metrics listeners answer too.
func TestCorefileExamples(t *testing.T) {
	etcd := startEtcd(t)
	putRecords(t, etcd, a("app."+exampleDomain, exampleInternal))
	env, key := exampleEnv(t, etcd)
	secondary := env["SECONDARY"]
	certs := writeXoTCerts(t)
	env["TLS_CERT"], env["TLS_KEY"] = certs.certFile, certs.keyFile
	setEnv(t, env)
	signed := func(t *testing.T, addr string) {
		checkExternalView(t, addr, exampleDomain, exampleGlobal)
		checkSigned(t, addr, "app."+exampleDomain, key)
	}

	examples := []struct {
		file  string
		views func(c *coreDNS) []view
	}{
		{"external.Corefile", func(c *coreDNS) []view {
			return []view{{"external", c.Addr("dns"), checkExternal}}
		}},
		{"internal.Corefile", func(c *coreDNS) []view {
			return []view{{"internal", c.Addr("dns"), checkInternal}}
		}},
		{"single-process.Corefile", func(c *coreDNS) []view {
			return []view{{"internal", c.Addr("internal"), checkInternal}, {"external", c.Addr("external"), checkExternal}}
		}},
		{"acme.Corefile", func(c *coreDNS) []view {
			return []view{{"internal", c.Addr("internal"), checkACMEInternal}, {"external", c.Addr("external"), checkExternal}}
		}},
		{"bind-split.Corefile", func(c *coreDNS) []view {
			_, port, _ := net.SplitHostPort(c.Addr("dns"))
			return []view{
				{"internal", net.JoinHostPort(exampleInternalAddr, port), checkInternal},
				{"external", net.JoinHostPort(exampleExternalAddr, port), checkExternal},
			}
		}},
		{"client-split.Corefile", func(c *coreDNS) []view {
			// The LAN is 127.0.0.1; an IPv6 client is outside it.
			_, port, _ := net.SplitHostPort(c.Addr("dns"))
			return []view{
				{"internal", c.Addr("dns"), checkInternal},
				{"external", net.JoinHostPort("::1", port), checkExternal},
			}
		}},
		{"tunnel.Corefile", func(c *coreDNS) []view {
			return []view{{"external", c.Addr("dns"), checkTunnelExample}}
		}},
		{"dnssec.Corefile", func(c *coreDNS) []view {
			return []view{{"external", c.Addr("dns"), signed}}
		}},
		{"hidden-primary.Corefile", func(c *coreDNS) []view {
			return []view{{"external", c.Addr("dns"), checkHiddenPrimary(secondary)}}
		}},
		{"signed-primary.Corefile", func(c *coreDNS) []view {
			// Its secondaries' part: TestSignedPrimarySecondaries.
			return []view{{"external", c.Addr("dns"), func(t *testing.T, addr string) {
				signed(t, addr)
				checkTSIGKey(t, addr, nameserver.TestKey)
			}}}
		}},
		{"xot-primary.Corefile", func(c *coreDNS) []view {
			return []view{{"external", c.Addr("dns"), checkXoTPrimary(c.Addr("xot"), certs)}}
		}},
		// It needs a router and an interface: TestUplinkExample runs it in
		// a lab of network namespaces.
		{"uplink.Corefile", nil},
		// It needs two uplinks: TestDualUplink runs it in the dual-WAN
		// lab.
		{"dual-uplink.Corefile", nil},
		// It answers no DNS: TestWebhookExample sends it external-dns's
		// changes.
		{"webhook.Corefile", nil},
		// It needs a Kubernetes API server with external-dns's DNSEndpoint
		// CRD: TestPublishExample (test/publish_test.go) runs it against
		// one, with a second external-dns publishing its objects.
		{"publish.Corefile", nil},
	}
	files, err := filepath.Glob(filepath.Join(examplesDir, "*.Corefile"))
	if err != nil || len(files) != len(examples) {
		t.Fatalf("%s holds %d Corefiles, %v; this test knows %d", examplesDir, len(files), err, len(examples))
	}
	for _, ex := range examples {
		if ex.views == nil {
			continue
		}
		t.Run(ex.file, func(t *testing.T) {
			// Parallel: stopping CoreDNS takes the health plugin's lameduck.
			t.Parallel()
			corefile := readExample(t, ex.file)
			checkHeader(t, ex.file, corefile)
			c := startExample(t, examplePorts.Replace(corefile), env)
			for _, v := range ex.views(c) {
				waitServing(t, v.addr)
				t.Run(v.name, func(t *testing.T) { v.check(t, v.addr) })
			}
			checkHTTP(t, "http://"+c.Addr("health")+"/health", "")
			waitReady(t, "http://"+c.Addr("ready")+"/ready")
			checkHTTP(t, "http://"+c.Addr("metrics")+"/metrics", "coredns_dns_requests_total")
		})
	}
}

// exampleEnv returns the values the tests give the examples' {$NAME}
// placeholders, for examples reading their records from etcd: it starts the
// resolver the internal views forward to, chooses the hidden primary's
// secondary's address (SECONDARY) and writes the DNSSEC example's key, which
// it returns too.
func exampleEnv(t *testing.T, etcd *etcdtest.Server) (map[string]string, *dns.DNSKEY) {
	t.Helper()
	upstream := startCoreDNS(t, upstreamCorefile)
	key, keyFile := writeKey(t, dns.Fqdn(exampleDomain))
	return withoutEtcdSecurity(map[string]string{
		"DOMAIN":        exampleDomain,
		"GLOBAL_ADDR":   exampleGlobal,
		"ETCD_ENDPOINT": etcd.Endpoint(),
		"UPSTREAM":      upstream.Addr("upstream"),
		"INTERNAL_ADDR": exampleInternalAddr,
		"EXTERNAL_ADDR": exampleExternalAddr,
		"DNSSEC_KEY":    keyFile,
		"LAN_NETWORKS":  exampleInternalAddr + "/32",
		"SECONDARY":     nameserver.FreeLoopbackAddr(t),
		"NS":            exampleNS,
		"TSIG_KEY":      nameserver.TestKey.Name,
		"TSIG_SECRET":   nameserver.TestKey.Secret,
		"HIDE":          exampleHide,
		"TUNNEL_TARGET": tunnelTarget,
	}), key
}

// etcdSecurityPlaceholders are the examples' placeholders of etcd's
// credentials and TLS client certificate: unset, they give none.
var etcdSecurityPlaceholders = []string{"ETCD_USERNAME", "ETCD_PASSWORD", "ETCD_CERT", "ETCD_KEY", "ETCD_CA"}

// withoutEtcdSecurity returns env with the examples' placeholders of etcd's
// credentials and TLS client certificate that it does not set empty, as
// CoreDNS expands them when they are unset: no credentials, no TLS.
func withoutEtcdSecurity(env map[string]string) map[string]string {
	for _, name := range etcdSecurityPlaceholders {
		if _, ok := env[name]; !ok {
			env[name] = ""
		}
	}
	return env
}

// view is a DNS listener of an example and the check of what it answers.
type view struct {
	name  string // "internal" or "external"
	addr  string
	check func(t *testing.T, addr string)
}

// waitServing waits until the view at addr answers the SOA query of the
// examples' domain with NOERROR, over TCP (which rrl never limits). A bound
// listener does not tell that the plugins behind it can reach etcd: in a
// loaded CI run (the race detector, every example at once) an example's
// first query once went unanswered for the 5 s a test query waits.
func waitServing(t *testing.T, addr string) {
	t.Helper()
	m := new(dns.Msg)
	m.SetQuestion(exampleDomain+".", dns.TypeSOA)
	c := &dns.Client{Net: "tcp", Timeout: 5 * time.Second}
	eventually(t, time.Minute, "the view at "+addr+" answers", func() error {
		r, _, err := c.Exchange(m, addr)
		if err != nil {
			return err
		}
		if r.Rcode != dns.RcodeSuccess {
			return fmt.Errorf("rcode %s", dns.RcodeToString[r.Rcode])
		}
		return nil
	})
}

// checkInternal checks an internal view at addr: the etcd zone answers the
// internal address, other names are forwarded.
func checkInternal(t *testing.T, addr string) {
	checkCase(t, addr, test.Case{
		Qname: "app." + exampleDomain + ".", Qtype: dns.TypeA,
		Answer: []dns.RR{test.A("app." + exampleDomain + ". 303 IN A " + exampleInternal)},
	})
	checkCase(t, addr, test.Case{
		Qname: "www.example.org.", Qtype: dns.TypeA,
		Answer: []dns.RR{test.A("www.example.org. 303 IN A 198.51.100.7")},
	})
}

// checkACMEInternal checks acme.Corefile's internal view at addr, which
// knows the examples' TSIG key for the ACME clients' UPDATEs: as an internal
// view, and what it answers queries signed with that key.
func checkACMEInternal(t *testing.T, addr string) {
	checkInternal(t, addr)
	checkTSIGKey(t, addr, nameserver.TestKey)
}

// checkExternal checks an external view of the examples' domain at addr.
func checkExternal(t *testing.T, addr string) {
	checkExternalView(t, addr, exampleDomain, exampleGlobal)
}

// checkExternalView checks an external view at addr: app.DOMAIN answers the
// global address (with the TTL the view's cache gives, so any TTL), names
// outside the domain are refused, so that it is no open resolver, a query
// signed with a key it does not know gets RFC 8945's BADKEY, and DNS
// Cookies are answered.
func checkExternalView(t *testing.T, addr, domain, global string) {
	checkCase(t, addr, test.Case{
		Qname: "app." + domain + ".", Qtype: dns.TypeA,
		Answer: []dns.RR{test.A("app." + domain + ". 303 IN A " + global)},
	})
	checkCase(t, addr, test.Case{Qname: "www.example.org.", Qtype: dns.TypeA, Rcode: dns.RcodeRefused})
	checkUnknownTSIGKey(t, netip.Addr{}, addr)
	checkCookies(t, netip.Addr{}, addr)
}

// checkTunnelExample checks tunnel.Corefile's external view at addr: app.DOMAIN
// is a CNAME to the tunnel, over UDP and TCP, and names outside the domain
// are refused.
func checkTunnelExample(t *testing.T, addr string) {
	checkCase(t, addr, test.Case{
		Qname: "app." + exampleDomain + ".", Qtype: dns.TypeA,
		Answer: []dns.RR{test.CNAME("app." + exampleDomain + ". 900 IN CNAME " + tunnelTarget + ".")},
	})
	if r := query(t, "udp", addr, "www.example.org.", dns.TypeA); r.Rcode != dns.RcodeRefused {
		t.Errorf("a name outside the domain: want REFUSED, got\n%v", r)
	}
}

// checkSigned checks that the A records of name at addr come with an RRSIG
// that verifies with key.
func checkSigned(t *testing.T, addr, name string, key *dns.DNSKEY) {
	m := new(dns.Msg)
	m.SetQuestion(dns.Fqdn(name), dns.TypeA)
	m.SetEdns0(4096, true)
	r := exchange(t, "udp", addr, m)
	if !slices.ContainsFunc(r.Answer, func(rr dns.RR) bool {
		sig, ok := rr.(*dns.RRSIG)
		return ok && sig.TypeCovered == dns.TypeA
	}) {
		t.Fatalf("no RRSIG of the A records of %s:\n%v", name, r)
	}
	verifySignatures(t, key, r.Answer)
}

// readExample returns the content of the example file name.
func readExample(t *testing.T, name string) string {
	b, err := os.ReadFile(filepath.Join(examplesDir, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// checkHeader fails t unless corefile begins with one comment line, saying
// when to use it, and has no other comment.
func checkHeader(t *testing.T, name, corefile string) {
	lines := strings.Split(corefile, "\n")
	if !strings.HasPrefix(lines[0], "# ") {
		t.Errorf("%s does not begin with a comment saying when to use it", name)
	}
	for i, l := range lines[1:] {
		if strings.HasPrefix(strings.TrimSpace(l), "#") {
			t.Errorf("%s:%d: a comment beyond the one-line header", name, i+2)
		}
	}
}

// setEnv sets env in the environment, for CoreDNS to expand the {$NAME}
// placeholders of the Corefiles t starts, until t ends.
func setEnv(t *testing.T, env map[string]string) {
	for k, v := range env {
		t.Setenv(k, v)
	}
}

// startExample starts CoreDNS with startCoreDNS from corefile, whose {$NAME}
// placeholders setEnv has set to env. t fails if the Corefile names a
// variable env lacks, but for etcd's credentials and client certificate,
// which unset give none.
func startExample(t *testing.T, corefile string, env map[string]string) *coreDNS {
	t.Helper()
	for _, m := range envPlaceholder.FindAllStringSubmatch(corefile, -1) {
		if _, ok := env[m[1]]; !ok && !slices.Contains(etcdSecurityPlaceholders, m[1]) {
			t.Fatalf("the Corefile uses {$%s}, which the test does not set", m[1])
		}
	}
	return startCoreDNS(t, corefile)
}

// waitReady waits until the ready endpoint url answers 200 OK. The ready
// plugin keeps one list of plugins for the whole process: the examples run
// side by side, and each one's endpoint reports on the plugins of the one
// that started last, whose zone may still be loading.
func waitReady(t *testing.T, url string) {
	t.Helper()
	eventually(t, time.Minute, url, func() error { return getOK(url) })
}

// getOK returns nil when a GET of url answers 200 OK within 5 s, else why
// not.
func getOK(url string) error {
	c := &http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return errors.New(resp.Status)
	}
	return nil
}

// checkHTTP fails t unless a GET of url answers 200 OK with a body that
// contains want.
func checkHTTP(t *testing.T, url, want string) {
	t.Helper()
	if body := scrape(t, url); !strings.Contains(body, want) {
		t.Errorf("GET %s: body lacks %q:\n%.500s", url, want, body)
	}
}
