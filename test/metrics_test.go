package test

import (
	"io"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// TestMetrics checks globaladdr's counters as Prometheus scrapes them: each
// record the external views rewrote or dropped, and each hidden name asked
// for, counted once under the server that answered.
func TestMetrics(t *testing.T) {
	t.Parallel()
	c, _ := startViews(t, directives{external: "prometheus 127.0.0.1:{httpport:metrics}"},
		a("app.example.com", "192.168.0.51"),
		aaaa("app.example.com", "fd00::51"),
		a("secret.example.com", "192.168.0.70"),
	)
	before := scrape(t, "http://"+c.Addr("metrics")+"/metrics")
	for _, q := range []struct {
		view, name string
		qtype      uint16
	}{
		{"external", "app.example.com.", dns.TypeA},
		{"external", "app.example.com.", dns.TypeAAAA},
		{"external", "a-app.example.com.", dns.TypeTXT},
		{"external", "secret.example.com.", dns.TypeA},
		{"external4", "app.example.com.", dns.TypeAAAA},
		{"internal", "app.example.com.", dns.TypeA},
	} {
		query(t, "udp", c.Addr(q.view), q.name, q.qtype)
	}

	after := scrape(t, "http://"+c.Addr("metrics")+"/metrics")
	external, external4 := c.Port("external"), c.Port("external4")
	for _, tc := range []struct {
		metric string
		port   int
		typ    string
		want   float64
	}{
		{"rewritten_total", external, "A", 1},
		{"rewritten_total", external, "AAAA", 1},
		{"dropped_total", external, "TXT", 1},
		{"dropped_total", external, "A", 0},
		{"hidden_total", external, "", 1},
		{"dropped_total", external4, "AAAA", 1},
		{"rewritten_total", external4, "AAAA", 0},
	} {
		if got := counted(before, after, "coredns_globaladdr_"+tc.metric, tc.port, tc.typ); got != tc.want {
			t.Errorf("%s of the server on port %d, type %q: %v, want %v", tc.metric, tc.port, tc.typ, got, tc.want)
		}
	}
	if got := counted(before, after, "coredns_globaladdr_rewritten_total", c.Port("internal"), "A"); got != 0 {
		t.Errorf("rewritten_total of the internal view: %v, want none", got)
	}
}

// scrape returns the body of a GET of url.
func scrape(t *testing.T, url string) string {
	t.Helper()
	c := &http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s, %v", url, resp.Status, err)
	}
	return string(body)
}

// counted returns how much metric, with the server label of port (and the
// type label typ, unless empty), grew from the exposition before to after.
// Counts only grow, and the server's label counts everything its server
// answered: the growth leaves out the queries that came before.
func counted(before, after, metric string, port int, typ string) float64 {
	return sample(after, metric, port, typ) - sample(before, metric, port, typ)
}

// sample returns the value of the metric with the server label of port (and
// the type label typ, unless empty) in a Prometheus text exposition, or 0
// when it has no such sample.
func sample(body, metric string, port int, typ string) float64 {
	labels := `server="dns://[^"]*` + regexp.QuoteMeta(net.JoinHostPort("", strconv.Itoa(port))) + `"`
	if typ != "" {
		labels += `,type="` + regexp.QuoteMeta(typ) + `"`
	}
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(metric) + `\{` + labels + `\} (\S+)$`).FindStringSubmatch(body)
	if m == nil {
		return 0
	}
	v, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		return -1
	}
	return v
}
