package test

import (
	"net"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/miekg/dns"
)

// TestMetricsWithEtcdzone checks globaladdr's counters in the recommended
// setup, the external view answered by etcdzone, whose zone holds none of
// what the view withholds: a query for a hidden name counts as one, and the
// records the zone left out of an answer count as the rewrite counts what it
// drops: the hidden name's record, an ownership record, an internal AAAA
// record without a global IPv6 address.
func TestMetricsWithEtcdzone(t *testing.T) {
	etcd := startEtcd(t)
	putRecords(t, etcd,
		a("app.example.com", "192.168.0.51"),
		aaaa("app.example.com", "fd00::51"),
		a("secret.example.com", "192.168.0.70"),
	)
	c := startCoreDNS(t, `example.com:{port:external} {
	prometheus 127.0.0.1:{httpport:metrics}
	globaladdr 203.0.113.10 {
		hide secret.example.com
	}
	etcdzone {
		ns ns1.example.net
	}
	etcd example.com {
		endpoint `+etcd.Endpoint()+`
	}
}`)
	waitServing(t, c.Addr("external"))
	before := scrape(t, "http://"+c.Addr("metrics")+"/metrics")
	for _, q := range []struct {
		name  string
		qtype uint16
	}{
		{"secret.example.com.", dns.TypeA},
		{"a-app.example.com.", dns.TypeTXT},
		{"app.example.com.", dns.TypeAAAA},
		{"app.example.com.", dns.TypeA},
	} {
		query(t, "udp", c.Addr("external"), q.name, q.qtype)
	}
	after := scrape(t, "http://"+c.Addr("metrics")+"/metrics")
	port := c.Port("external")
	for _, tc := range []struct {
		metric, typ string
		want        float64
	}{
		{"hidden_total", "", 2}, // the query, and the hidden name's record
		{"dropped_total", "TXT", 1},
		{"dropped_total", "AAAA", 1},
		{"rewritten_total", "A", 1},
	} {
		if got := counted(before, after, "coredns_globaladdr_"+tc.metric, port, tc.typ); got != tc.want {
			t.Errorf("%s, type %q: %v, want %v", tc.metric, tc.typ, got, tc.want)
		}
	}
}

// TestServerLabelPerAddress serves a block on two addresses: each of its
// plugins' metrics carries the server label CoreDNS's own carry for each
// address (dns://127.0.0.2:PORT), so that a dashboard joins them on server.
func TestServerLabelPerAddress(t *testing.T) {
	etcd := startEtcd(t)
	putRecords(t, etcd, a("app.example.com", "192.168.0.51"))
	c := startCoreDNS(t, `example.com:{port:dns} {
	bind 127.0.0.1 127.0.0.2
	prometheus 127.0.0.1:{httpport:metrics}
	globaladdr 203.0.113.10
	etcdzone {
		ns ns1.example.net
	}
	etcd example.com {
		endpoint `+etcd.Endpoint()+`
	}
}`)
	port := strconv.Itoa(c.Port("dns"))
	second := net.JoinHostPort("127.0.0.2", port)
	waitServing(t, second)
	query(t, "udp", second, "app.example.com.", dns.TypeA)
	body := scrape(t, "http://"+c.Addr("metrics")+"/metrics")
	for _, host := range []string{"127.0.0.1", "127.0.0.2"} {
		server := `server="dns://` + net.JoinHostPort(host, port) + `"`
		for _, series := range []string{
			`coredns_etcdzone_loaded{` + server + `,zone="example.com."} 1`,
			`coredns_globaladdr_addresses{family="ipv4",` + server + `} 1`,
		} {
			if !strings.Contains(body, series) {
				t.Errorf("no %s", series)
			}
		}
	}
	if want := `server="dns://` + second + `"`; !regexp.MustCompile(`coredns_dns_requests_total\{[^}]*` + regexp.QuoteMeta(want)).MatchString(body) {
		t.Errorf("CoreDNS's own metrics have no %s", want)
	}
}
