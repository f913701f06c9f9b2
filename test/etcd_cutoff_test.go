package test

import (
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/globaladdr/globaladdr/internal/corednstest"

	"github.com/miekg/dns"
)

// cutOffWithin is how soon a replica that hears nothing from etcd must say
// so: a warning in its log, coredns_etcdzone_etcd_silence_seconds above the
// alert's threshold (EtcdzoneEtcdCutOff: 10 s), errors counted.
const cutOffWithin = 15 * time.Second

// cutOffCorefile is the external view with the SOA expire EXPIRE, on the etcd
// endpoints ETCD.
const cutOffCorefile = `example.com:{port:dns} {
	ready :{httpport:ready} {
		monitor continuously
	}
	prometheus :{httpport:metrics}
	globaladdr 203.0.113.10
	etcdzone {
		ns ns1.example.net
		expire EXPIRE
		endpoint ETCD
	}
	etcd example.com
}
`

// zoneMetric returns the value of metric for zone example.com. of the
// server on port in the exposition body, and whether there is one.
func zoneMetric(body, metric string, port int) (float64, bool) {
	re := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(metric) + `\{server="[^"]*:` + strconv.Itoa(port) + `",zone="example\.com\."\} (\S+)$`)
	m := re.FindStringSubmatch(body)
	if m == nil {
		return 0, false
	}
	v, err := strconv.ParseFloat(m[1], 64)
	return v, err == nil
}

// readyStatus returns the HTTP status of the ready plugin at addr.
func readyStatus(t *testing.T, addr string) int {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/ready")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// expectCutOff waits until the replica c tells that it is cut off from etcd
// (the warning in logs from mark on, the silence metric above the alert's
// threshold, errors counted), within cutOffWithin of began, while it
// answers from memory.
func expectCutOff(t *testing.T, c *coreDNS, logs interface{ String() string }, mark int, began time.Time) {
	t.Helper()
	errorsBefore, _ := zoneMetric(scrape(t, "http://"+c.Addr("metrics")+"/metrics"), "coredns_etcdzone_etcd_errors_total", c.Port("dns"))
	eventually(t, cutOffWithin-time.Since(began), "the warning, the metric and the alert's expression", func() error {
		body := scrape(t, "http://"+c.Addr("metrics")+"/metrics")
		silence, _ := zoneMetric(body, "coredns_etcdzone_etcd_silence_seconds", c.Port("dns"))
		errs, _ := zoneMetric(body, "coredns_etcdzone_etcd_errors_total", c.Port("dns"))
		switch {
		case !strings.Contains(logs.String()[mark:], "not heard from for"):
			return fmt.Errorf("no warning yet")
		case silence <= 10: // EtcdzoneEtcdCutOff's expression
			return fmt.Errorf("coredns_etcdzone_etcd_silence_seconds %v", silence)
		case errs <= errorsBefore:
			return fmt.Errorf("coredns_etcdzone_etcd_errors_total did not grow")
		}
		return nil
	})
	t.Logf("cut off: told after %v", time.Since(began).Round(100*time.Millisecond))
	if err := answers(c.Addr("dns"), "app.example.com.", dns.TypeA, []string{"203.0.113.10"}); err != nil {
		t.Errorf("cut off, before the expire: %v, want the answer from memory", err)
	}
	if s := readyStatus(t, c.Addr("ready")); s != http.StatusOK {
		t.Errorf("cut off, before the expire: /ready %d, want 200", s)
	}
}

// TestEtcdzoneCutOff stops every etcd member of a replica: it says so
// within 15 s and answers from memory; after the SOA expire (20 s here) it
// answers SERVFAIL and is not ready; once etcd is back it answers again,
// with what changed meanwhile.
func TestEtcdzoneCutOff(t *testing.T) {
	logs := captureLog(t)
	etcd := startEtcd(t)
	putRecords(t, etcd, a("app.example.com", "192.168.0.51"))
	c := startCoreDNS(t, strings.NewReplacer("ETCD", etcd.Endpoint(), "EXPIRE", "20").Replace(cutOffCorefile))
	eventually(t, 30*time.Second, "the zone", func() error {
		return answers(c.Addr("dns"), "app.example.com.", dns.TypeA, []string{"203.0.113.10"})
	})

	mark, began := len(logs.String()), time.Now()
	etcd.Stop()
	expectCutOff(t, c, logs, mark, began)
	eventually(t, 25*time.Second-time.Since(began), "SERVFAIL after the expire", func() error {
		m := new(dns.Msg)
		m.SetQuestion("app.example.com.", dns.TypeA)
		r, _, err := (&dns.Client{Timeout: time.Second}).Exchange(m, c.Addr("dns"))
		if err != nil || r.Rcode != dns.RcodeServerFailure {
			return fmt.Errorf("%v %v, want SERVFAIL", r, err)
		}
		return nil
	})
	if s := readyStatus(t, c.Addr("ready")); s != http.StatusServiceUnavailable {
		t.Errorf("after the expire: /ready %d, want 503", s)
	}

	if err := etcd.Restart(); err != nil {
		t.Fatal(err)
	}
	putRecords(t, etcd, a("new.example.com", "192.168.0.52"))
	eventually(t, 15*time.Second, "answers once etcd is back", func() error {
		return answers(c.Addr("dns"), "new.example.com.", dns.TypeA, []string{"203.0.113.10"})
	})
	if s := readyStatus(t, c.Addr("ready")); s != http.StatusOK {
		t.Errorf("etcd back: /ready %d, want 200", s)
	}
}

// TestEtcdWrongEndpoint starts the external view on an etcd endpoint where
// nothing listens: within cutOffWithin the log says that etcd never
// answered, naming the endpoint and the Corefile's line, and does not
// claim answers from memory, which it has none of; the zone is SERVFAIL.
func TestEtcdWrongEndpoint(t *testing.T) {
	closed, err := corednstest.FreeTCPPort()
	if err != nil {
		t.Fatal(err)
	}
	endpoint := "http://127.0.0.1:" + strconv.Itoa(closed)
	corefile := `example.com:{port:dns} {
	globaladdr 203.0.113.10
	etcdzone {
		ns ns1.example.net
		endpoint ` + endpoint + `
	}
	etcd example.com
}
`
	logs := captureLog(t)
	mark := len(logs.String())
	c := startCoreDNS(t, corefile)
	want := fmt.Sprintf("etcd at %s (Corefile:5, endpoint): no answer in the ", endpoint)
	eventually(t, cutOffWithin, "a warning that etcd never answered", func() error {
		if !strings.Contains(logs.String()[mark:], want) {
			return fmt.Errorf("no line saying %q", want)
		}
		return nil
	})
	for _, line := range strings.Split(logs.String()[mark:], "\n") {
		if strings.Contains(line, endpoint) && strings.Contains(line, "answering from memory") {
			t.Errorf("a line claims answers from memory, though nothing was read: %s", line)
		}
	}
	m := new(dns.Msg)
	m.SetQuestion("app.example.com.", dns.TypeA)
	if r, _, err := (&dns.Client{Timeout: 2 * time.Second}).Exchange(m, c.Addr("dns")); err != nil || r.Rcode != dns.RcodeServerFailure {
		t.Errorf("a query with nothing loaded: %v %v, want SERVFAIL", r, err)
	}
}
