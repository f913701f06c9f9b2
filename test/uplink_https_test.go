package test

import (
	"net/netip"
	"testing"
	"time"

	"github.com/globaladdr/globaladdr/internal/netlab"
	"github.com/globaladdr/globaladdr/internal/routerlab"

	"github.com/miekg/dns"
)

// TestUplinkHTTPS learns the uplink's address from HTTPS echoes of the
// test's own in the lab's WAN, behind the router's NAT: one answering the
// address in plain text, one as Cloudflare's trace (ip=), both with
// certificates of the test's CA, given by https_ca; a third one's
// certificate is of another CA, and never verifies. The two that answer
// agree, a change of the router's WAN address follows within every, and the
// third one's errors are counted as tls. When one echo lies, one against
// one is no majority: the last good address stays.
func TestUplinkHTTPS(t *testing.T) {
	if !netlab.Enter(t) {
		return
	}
	logs := captureLog(t)
	lab := routerlab.New(t)
	trace, untrusted := wanAddr(lab, "11.22.33.13"), wanAddr(lab, "11.22.33.14")
	ca := newTestCA(t)
	plain := startHTTPSEcho(t, lab.WAN, routerlab.Upstream, ca)
	traced := startHTTPSEcho(t, lab.WAN, trace, ca)
	other := startHTTPSEcho(t, lab.WAN, untrusted, newTestCA(t))

	line := "https " + plain.url + "/ " + traced.url + "/cdn-cgi/trace " + other.url + "/"
	c := startUplinkView(t, "from "+line, "https_ca "+ca.file)
	dnsAddr, metrics := c.Addr("dns"), "http://"+c.Addr("metrics")+"/metrics"
	watchLeaks(t, dnsAddr, "app.example.com.", "v6.example.com.")
	uplinkLatency(t, dnsAddr, "app.example.com.", dns.TypeA, time.Now(), routerlab.FirstWAN.String())
	waitMetric(t, metrics, "coredns_globaladdr_source_errors_total", `reason="tls",server="[^"]*",source="https `+other.url+`/"`)
	waitLog(t, logs, "the certificate of "+other.url+"/ does not verify")

	var samples []time.Duration
	for _, next := range []string{"11.22.33.3", "11.22.33.4", "11.22.33.5", "11.22.33.2"} {
		start := time.Now()
		lab.SetWAN(netip.MustParseAddr(next))
		samples = append(samples, uplinkLatency(t, dnsAddr, "app.example.com.", dns.TypeA, start, next))
	}
	logLatencies(t, "HTTPS (every 2s): WAN change to external answer", samples)

	traced.tell(netip.MustParseAddr("198.51.100.99"))
	waitMetric(t, metrics, "coredns_globaladdr_source_disagreements_total", `source="`+line+`"`)
	if err := answers(dnsAddr, "app.example.com.", dns.TypeA, []string{routerlab.FirstWAN.String()}); err != nil {
		t.Fatalf("one liar against one: %v; want the last good address", err)
	}
}
