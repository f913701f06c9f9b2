package test

import (
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/globaladdr/globaladdr/internal/netlab"
	"github.com/globaladdr/globaladdr/internal/routerlab"

	"github.com/miekg/dns"
)

// uplinkCorefile is an external view of example.com whose global addresses
// come from the sources FROM (lines of the globaladdr block), asked every
// 2s, over etcd at ETCD; its metrics on {httpport:metrics}, its readiness on
// {httpport:ready}.
const uplinkCorefile = `example.com:{port:dns} {
	prometheus 127.0.0.1:{httpport:metrics}
	ready 127.0.0.1:{httpport:ready}
	globaladdr {
		FROM
		every 2s
		ttl 60
	}
	etcdzone {
		ns ns1.example.net
	}
	etcd example.com {
		endpoint ETCD
	}
}
`

// startUplinkView starts etcd with app.example.com's internal address and
// the external view of uplinkCorefile with the from lines from.
func startUplinkView(t *testing.T, from ...string) *coreDNS {
	t.Helper()
	etcd := startEtcd(t)
	putRecords(t, etcd, a("app.example.com", "192.168.0.51"), aaaa("v6.example.com", "fd00::51"))
	return startCoreDNS(t, strings.NewReplacer(
		"FROM", strings.Join(from, "\n\t\t"),
		"ETCD", etcd.Endpoint(),
	).Replace(uplinkCorefile))
}

// TestUplinkSTUN learns the uplink's address by STUN from three servers in
// the lab's WAN, behind the router's NAT: Debian's coturn and two
// responders of the test's own. With one liar the majority is served, and a
// change of the router's WAN address follows within every; with two liars
// that disagree, the last good address stays, and the disagreement shows in
// the metric and the log; two liars that agree are a majority.
func TestUplinkSTUN(t *testing.T) {
	if !netlab.Enter(t) {
		return
	}
	logs := captureLog(t)
	lab := routerlab.New(t)
	liarA, liarB := wanAddr(lab, "11.22.33.11"), wanAddr(lab, "11.22.33.12")
	startCoturn(t, lab.WAN, routerlab.Upstream)
	a, b := startSTUNResponder(t, lab.WAN, liarA), startSTUNResponder(t, lab.WAN, liarB)
	b.tell(netip.MustParseAddr("198.51.100.66"))

	line := "stun " + routerlab.Upstream.String() + " " + liarA.String() + ":3478 " + liarB.String()
	c := startUplinkView(t, "from "+line)
	dnsAddr, metrics := c.Addr("dns"), "http://"+c.Addr("metrics")+"/metrics"
	watchLeaks(t, dnsAddr, "app.example.com.", "v6.example.com.")
	wan := routerlab.FirstWAN.String()
	uplinkLatency(t, dnsAddr, "app.example.com.", dns.TypeA, time.Now(), wan)

	// The WAN address changes: served within every (2s).
	var samples []time.Duration
	for i, next := range []string{"11.22.33.3", "11.22.33.4", "11.22.33.5", "11.22.33.2"} {
		start := time.Now()
		lab.SetWAN(netip.MustParseAddr(next))
		samples = append(samples, uplinkLatency(t, dnsAddr, "app.example.com.", dns.TypeA, start, next))
		if i == 0 {
			checkRcode(t, dnsAddr, "v6.example.com.", dns.TypeAAAA, dns.RcodeNameError) // no IPv6: withheld
		}
	}
	logLatencies(t, "STUN (every 2s): WAN change to external answer", samples)

	// Two liars that disagree: the last good address stays.
	a.tell(netip.MustParseAddr("203.0.113.77"))
	waitMetric(t, metrics, "coredns_globaladdr_source_disagreements_total", `source="`+line+`"`)
	waitLog(t, logs, "the servers disagree on the IPv4 address: stun 11.22.33.1:3478 says 11.22.33.2, stun 11.22.33.11:3478 says 203.0.113.77, stun 11.22.33.12:3478 says 198.51.100.66; no strict majority of the 3 that answered; keeping the last good address")
	if err := answers(dnsAddr, "app.example.com.", dns.TypeA, []string{wan}); err != nil {
		t.Fatalf("after a disagreement: %v; want the last good address", err)
	}

	// Two liars that agree out-vote the honest server: that is a vote.
	a.tell(netip.MustParseAddr("198.51.100.66"))
	uplinkLatency(t, dnsAddr, "app.example.com.", dns.TypeA, time.Now(), "198.51.100.66")
	if got := metricSum(scrape(t, metrics), "coredns_globaladdr_source_last_success_timestamp_seconds", `source="stun 11.22.33.1:3478"`); got < float64(time.Now().Add(-time.Minute).Unix()) {
		t.Errorf("coturn's last success: %v, want within the last minute", got)
	}
}

// TestUplinkCGNAT puts a router that reports carrier-grade NAT's address
// (a responder of the test's own in miniupnpd's place) behind from natpmp:
// at start-up nothing good is known, so the view answers SERVFAIL and is
// not ready, and the refusal shows in the log and the metric. A STUN server
// beside it, which sees the public address, then serves, and the log says
// that the router sits behind another NAT.
func TestUplinkCGNAT(t *testing.T) {
	if !netlab.Enter(t) {
		return
	}
	logs := captureLog(t)
	lab := routerlab.New(t)
	lab.Play(t, netip.MustParseAddr("100.64.3.4"))
	c := startUplinkView(t, "from natpmp "+routerlab.RouterLAN.String())
	dnsAddr, metrics := c.Addr("dns"), "http://"+c.Addr("metrics")+"/metrics"
	watchLeaks(t, dnsAddr, "app.example.com.", "v6.example.com.")

	waitMetric(t, metrics, "coredns_globaladdr_source_refused_total", `reason="cgnat",server="[^"]*",source="natpmp 10.77.0.1"`)
	waitLog(t, logs, "the router reports WAN address 100.64.3.4; this is carrier-grade NAT (shared address space 100.64.0.0/10, RFC 6598); the Internet cannot reach it; the external view has no IPv4 global address to serve")
	checkRcode(t, dnsAddr, "app.example.com.", dns.TypeA, dns.RcodeServerFailure)
	checkNotReady(t, "http://"+c.Addr("ready")+"/ready")

	// Beside a STUN server that sees the uplink: STUN's address is served.
	startCoturn(t, lab.WAN, routerlab.Upstream)
	c2 := startUplinkView(t, "from natpmp "+routerlab.RouterLAN.String(), "from stun "+routerlab.Upstream.String())
	watchLeaks(t, c2.Addr("dns"), "app.example.com.", "v6.example.com.")
	uplinkLatency(t, c2.Addr("dns"), "app.example.com.", dns.TypeA, time.Now(), routerlab.FirstWAN.String())
	waitLog(t, logs, "stun 11.22.33.1 sees the uplink as 11.22.33.2: the router sits behind another NAT (double NAT), and 11.22.33.2 is served")
	waitReady(t, "http://"+c2.Addr("ready")+"/ready")
}
