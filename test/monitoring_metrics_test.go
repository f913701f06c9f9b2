package test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/netip"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/globaladdr/globaladdr/internal/corednstest"
	"github.com/globaladdr/globaladdr/internal/nameserver"
	"github.com/globaladdr/globaladdr/internal/netlab"

	"github.com/miekg/dns"
)

// metricsCorefile makes every metric of the plugins: an external view on
// the etcd plugin (which withholds nothing, so globaladdr rewrites, drops and
// hides), with a low rrl rate; an external view on etcdzone with global
// addresses from an etcd key and a file, signed, notifying a secondary that
// does not answer; a view learning its address from HTTPS echoes, two that
// disagree (whose answers succeed) and one that answers a loopback address
// (refused); two uplinks whose checks fail (a closed port), so that both are
// down; a zone whose etcd does not answer, so that it never loads. ETCD,
// FILE, SECONDARY, NOWHERE, CLOSED, ECHO_A, ECHO_B, ECHO_LOOPBACK, HTTPS_CA
// and DNSKEYPREFIX are replaced.
const metricsCorefile = `example.com:{port:plain} {
	prometheus 127.0.0.1:{httpport:metrics}
	rrl {
		responses-per-second 1
		slip 2
	}
	globaladdr 203.0.113.10 {
		hide secret.example.com
	}
	etcd example.com {
		endpoint ETCD
	}
}

example.com:{port:zone} {
	prometheus 127.0.0.1:{httpport:metrics}
	globaladdr {
		from etcd /globaladdr/example.com
		from file FILE
	}
	etcdzone {
		ns ns1.example.net
		dnssec DNSKEYPREFIX
	}
	transfer {
		to * SECONDARY
	}
	etcd example.com {
		endpoint ETCD
	}
}

uplink.example:{port:uplink} {
	prometheus 127.0.0.1:{httpport:metrics}
	globaladdr {
		from https ECHO_A ECHO_B
		from https ECHO_LOOPBACK
		https_ca HTTPS_CA
		every 30s
	}
}

uplinks.example:{port:uplinks} {
	prometheus 127.0.0.1:{httpport:metrics}
	globaladdr {
		uplink wan1 static 203.0.113.20
		uplink wan1 check tcp CLOSED
		uplink wan2 static 198.51.100.20
		uplink wan2 check tcp CLOSED
		failover after 1
		every 1s
	}
}

broken.example:{port:broken} {
	prometheus 127.0.0.1:{httpport:metrics}
	etcdzone {
		ns ns1.example.net
	}
	transfer {
		to *
	}
	etcd broken.example {
		endpoint NOWHERE
	}
}
`

// metricName is a metric name of this build in PromQL.
var metricName = regexp.MustCompile(`\bcoredns_[a-z0-9_]+`)

// grafanaVariables are the values the test gives the dashboard's variables:
// Grafana's rate interval, and every job.
var grafanaVariables = strings.NewReplacer("$__rate_interval", "1m", "$job", ".+")

// TestMonitoringPrometheus runs a real Prometheus that scrapes CoreDNS
// serving metricsCorefile, and evaluates monitoring/'s rules. Once queries
// have made every metric, each metric that the rules and the dashboard name
// has a series, each expression of the rules and the dashboard evaluates
// without error, and Prometheus has evaluated every rule without error: no
// alert or panel refers to a metric this build does not export, or a label
// it lacks in a way PromQL rejects.
func TestMonitoringPrometheus(t *testing.T) {
	etcd := startEtcd(t)
	putRecords(t, etcd,
		a("app.example.com", "192.168.0.51"),
		aaaa("app.example.com", "fd00::51"),
		a("secret.example.com", "192.168.0.70"),
	)
	if _, err := etcd.Client().Put(context.Background(), "/skydns/com/example/garbage", "not a record"); err != nil {
		t.Fatal(err)
	}
	putGlobal(t, etcd, exampleGlobal)
	file := filepath.Join(t.TempDir(), "addresses")
	writeSecret(t, file, []byte("198.51.100.10\n"))
	nowhere, err := corednstest.FreeTCPPort()
	if err != nil {
		t.Fatal(err)
	}
	ca, loopback := newTestCA(t), netip.MustParseAddr("127.0.0.1")
	echoA, echoB, echoLoopback := startHTTPSEcho(t, netlab.New(t).Self(), loopback, ca), startHTTPSEcho(t, netlab.New(t).Self(), loopback, ca), startHTTPSEcho(t, netlab.New(t).Self(), loopback, ca)
	echoA.tell(netip.MustParseAddr("203.0.113.1"))
	echoB.tell(netip.MustParseAddr("203.0.113.2"))
	_, keyFile := writeKey(t, "example.com.")
	srv := startCoreDNS(t, strings.NewReplacer(
		"ETCD", etcd.Endpoint(),
		"FILE", file,
		"SECONDARY", nameserver.FreeLoopbackAddr(t),
		"NOWHERE", "http://127.0.0.1:"+strconv.Itoa(nowhere),
		"CLOSED", "127.0.0.1:"+strconv.Itoa(nowhere),
		"ECHO_A", echoA.url, "ECHO_B", echoB.url, "ECHO_LOOPBACK", echoLoopback.url, "HTTPS_CA", ca.file,
		"DNSKEYPREFIX", keyFile,
	).Replace(metricsCorefile))
	prom := startPrometheus(t, "coredns", []string{srv.Addr("metrics")}, filepath.Join(repoRoot(t), "monitoring", rulesFile))

	exprs, names := monitoringQueries(t)
	makeMetrics(t, srv, file)
	eventually(t, time.Minute, "Prometheus has scraped every metric", func() error {
		var missing []string
		for _, name := range names {
			if n, err := prom.query(name); err != nil || n == 0 {
				missing = append(missing, name)
			}
		}
		if len(missing) > 0 {
			return fmt.Errorf("no series of %q (failed scrapes: %q)", missing, prom.scrapeErrors())
		}
		return nil
	})
	for _, expr := range exprs {
		if _, err := prom.query(expr); err != nil {
			t.Errorf("%v", err)
		}
	}
	eventually(t, time.Minute, "Prometheus has evaluated every rule", func() error { return prom.evaluated(t) })
}

// monitoringQueries returns the PromQL expressions of monitoring/'s rules
// and dashboard (with grafanaVariables), and the metric names they and the
// dashboard's variables name.
func monitoringQueries(t *testing.T) (exprs, names []string) {
	t.Helper()
	for _, g := range readRules(t).Groups {
		for _, r := range g.Rules {
			exprs = append(exprs, r.Expr)
		}
	}
	var dashboard struct {
		Panels []struct {
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	board := readMonitoring(t, dashboardFile)
	if err := json.Unmarshal(board, &dashboard); err != nil {
		t.Fatal(err)
	}
	for _, p := range dashboard.Panels {
		for _, target := range p.Targets {
			exprs = append(exprs, grafanaVariables.Replace(target.Expr))
		}
	}
	for _, name := range metricName.FindAllString(strings.Join(exprs, "\n")+string(board), -1) {
		if !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	return exprs, names
}

// makeMetrics sends srv, serving metricsCorefile, what makes every metric
// of its plugins (an UPDATE, refused, among them), and turns file, its from
// file source, invalid.
func makeMetrics(t *testing.T, srv *coreDNS, file string) {
	t.Helper()
	plain, zone := srv.Addr("plain"), srv.Addr("zone")
	for _, q := range []struct {
		name  string
		qtype uint16
	}{
		{"app.example.com.", dns.TypeA},     // rewritten
		{"app.example.com.", dns.TypeAAAA},  // rewritten
		{"a-app.example.com.", dns.TypeTXT}, // dropped: an ownership record
		{"secret.example.com.", dns.TypeA},  // hidden
		{"app.example.com.", dns.TypeMX},    // NODATA
	} {
		query(t, "tcp", plain, q.name, q.qtype)
	}
	flood(t, plain, "app.example.com.", 20)
	waitServing(t, zone)
	if _, err := nameserver.TryAXFR(zone, "example.com.", nil); err != nil {
		t.Errorf("AXFR of the loaded zone: %v", err)
	}
	nameserver.TryAXFR(srv.Addr("broken"), "broken.example.", nil) // refused: not loaded
	update := new(dns.Msg)
	update.SetUpdate("example.com.")
	update.Insert([]dns.RR{&dns.TXT{Hdr: dns.RR_Header{Name: "_acme-challenge.example.com.", Rrtype: dns.TypeTXT, Class: dns.ClassINET, Ttl: 60}, Txt: []string{"token"}}})
	exchange(t, "tcp", zone, update) // refused: the block takes no UPDATE
	writeSecret(t, file, []byte("not-an-address\n"))
}

// flood sends n queries for name over UDP to addr from one socket without
// waiting for the replies, as a forged flood does, so that rrl limits them.
func flood(t *testing.T, addr, name string, n int) {
	t.Helper()
	conn, err := net.Dial("udp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	m := new(dns.Msg)
	m.SetQuestion(name, dns.TypeA)
	for range n {
		m.Id = dns.Id()
		b, err := m.Pack()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := conn.Write(b); err != nil {
			t.Fatal(err)
		}
	}
	// The replies, a few answered and truncated ones, are of no interest:
	// rrl counts what it drops and slips.
	conn.SetReadDeadline(time.Now().Add(time.Second))
	buf := make([]byte, dns.MaxMsgSize)
	for {
		if _, err := conn.Read(buf); err != nil {
			return
		}
	}
}
