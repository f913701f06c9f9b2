package globaladdr

import (
	"bytes"
	"context"
	golog "log"
	"strings"
	"testing"

	"github.com/coredns/coredns/plugin/pkg/dnstest"
	"github.com/coredns/coredns/plugin/test"

	"github.com/miekg/dns"
)

func TestWithholds(t *testing.T) {
	g := newTestPlugin(t, "globaladdr 203.0.113.10 {\n hide lan.example.com\n map 192.168.1.0/24 198.51.100.0/24\n}", nil)
	for rr, want := range map[string]bool{
		"app.example.com. 300 IN A 192.168.0.51":                                               false, // rewritten
		"pub.example.com. 300 IN A 198.51.100.80":                                              false,
		"m.example.com. 300 IN AAAA fd00::1":                                                   true,  // no IPv6 global address
		"m.example.com. 300 IN A 192.168.1.7":                                                  false, // mapped
		"x.lan.example.com. 300 IN A 198.51.100.80":                                            true,  // hidden owner
		"www.example.com. 300 IN CNAME app.lan.example.com.":                                   true,  // hidden target
		`a-app.example.com. 300 IN TXT "\"heritage=external-dns,external-dns/owner=default\""`: true,
		`info.example.com. 300 IN TXT "hello"`:                                                 false,
	} {
		r, err := dns.NewRR(rr)
		if err != nil {
			t.Fatal(err)
		}
		if got := g.Withholds(r); got != want {
			t.Errorf("Withholds(%s) = %v", rr, got)
		}
	}
}

// TestWithhold checks that a hidden name is answered by a backend that
// withholds, with what it gives for the question's own name (a wildcard's
// records), and by globaladdr itself otherwise.
func TestWithhold(t *testing.T) {
	var asked []string
	wildcard := reply{answer: []dns.RR{test.A("x.lan.example.com. 300 IN A 192.168.0.80")}}
	g := newTestPlugin(t, "globaladdr 203.0.113.10 {\n hide lan.example.com\n}", backend(wildcard, &asked))
	ask := func() *dns.Msg {
		rec := dnstest.NewRecorder(&test.ResponseWriter{})
		g.ServeDNS(context.Background(), rec, new(dns.Msg).SetQuestion("x.lan.example.com.", dns.TypeA))
		return rec.Msg
	}
	if m := ask(); m.Rcode != dns.RcodeNameError || len(asked) != 1 || !strings.HasSuffix(asked[0], "SOA") {
		t.Errorf("without a withholding backend: %s, the backend was asked %v", dns.RcodeToString[m.Rcode], asked)
	}
	undo := g.Withhold([]string{"example.com."})
	if m := ask(); m.Rcode != dns.RcodeSuccess || len(m.Answer) != 1 || m.Answer[0].(*dns.A).A.String() != "203.0.113.10" {
		t.Errorf("with a withholding backend: want the wildcard's record, rewritten:\n%v", m)
	}
	undo()
	if m := ask(); m.Rcode != dns.RcodeNameError {
		t.Errorf("after undo: %s", dns.RcodeToString[m.Rcode])
	}
}

// TestTransferLog checks the log line of a transfer: the records sent, of
// those the plugins below gave.
func TestTransferLog(t *testing.T) {
	var asked []string
	zone := reply{answer: []dns.RR{
		test.SOA(zoneSOA),
		test.A("app.example.com. 300 IN A 192.168.0.51"),
		test.TXT(`a-app.example.com. 300 IN TXT "\"heritage=external-dns,external-dns/owner=default\""`),
		test.SOA(zoneSOA),
	}}
	g := newTestPlugin(t, v4only, backend(zone, &asked))
	var out bytes.Buffer
	golog.SetOutput(&out)
	defer golog.SetOutput(golog.Writer())
	rec := dnstest.NewRecorder(&test.ResponseWriter{})
	g.ServeDNS(context.Background(), rec, new(dns.Msg).SetQuestion("example.com.", dns.TypeAXFR))
	if want := "transfer of example.com. to 10.240.0.1:40212: 3 records sent of the 4 given"; !strings.Contains(out.String(), want) {
		t.Errorf("log %q lacks %q", out.String(), want)
	}
}
