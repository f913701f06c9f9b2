package conformance

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/globaladdr/globaladdr/internal/corednstest"
	"github.com/globaladdr/globaladdr/internal/externaldns"
	"github.com/globaladdr/globaladdr/internal/nameserver"
	"github.com/globaladdr/globaladdr/internal/viewcheck"

	"github.com/miekg/dns"
)

// viewsCorefile serves one etcd tree (ETCD stands for its endpoint) as
// etcdzone's authoritative zones, in an internal view, which takes ACME
// challenges signed with the TSIG key KEY (secret SECRET), and in an external
// view with globaladdr's global addresses.
const viewsCorefile = `
example.com:{port:internal} 168.192.in-addr.arpa:{port:internal} {
	tsig {
		secret KEY SECRET
		require_opcode UPDATE
	}
	etcdzone {
		update KEY
	}
	etcd example.com 168.192.in-addr.arpa {
		endpoint ETCD
	}
}

example.com:{port:external} 168.192.in-addr.arpa:{port:external} {
	globaladdr 203.0.113.10 2001:db8::10 {
		ttl 900
	}
	etcdzone {
		ns ns1.example.net ns2.example.net
	}
	etcd example.com 168.192.in-addr.arpa {
		endpoint ETCD
	}
}
`

// The global addresses of viewsCorefile's external view.
const (
	global4 = "203.0.113.10"
	global6 = "2001:db8::10"
)

// externalPolicy is what the external view must never show.
var externalPolicy = viewcheck.Policy{Internal: viewcheck.DefaultInternal}

// views is a CoreDNS serving viewsCorefile.
type views struct{ c *corednstest.Server }

// startViews starts a CoreDNS serving the etcd at endpoint through
// viewsCorefile.
func startViews(t *testing.T, endpoint string) views {
	return views{corednstest.Start(t, strings.NewReplacer(
		"ETCD", endpoint,
		"KEY", nameserver.TestKey.Name,
		"SECRET", nameserver.TestKey.Secret,
	).Replace(viewsCorefile))}
}

// check asks both views about every name of before and after, and fails t
// unless each answers what the records of after say, once r has written
// them. The views follow etcd through a watch: each question is asked again
// until the answer is right, for up to 10 s.
func (v views) check(t *testing.T, r Release, before, after []externaldns.Record) {
	t.Helper()
	for _, q := range questions(r, before, after) {
		for _, view := range []string{"internal", "external"} {
			want := q.internal
			if view == "external" {
				want = q.external
			}
			reply, err := v.ask(view, q.name, q.qtype, want)
			if err != nil {
				t.Errorf("%s view, %s %s: %v", view, q.name, dns.TypeToString[q.qtype], err)
				continue
			}
			if got := summary(reply); got != want {
				t.Errorf("%s view, %s %s:\n\tgot  %s\n\twant %s", view, q.name, dns.TypeToString[q.qtype], got, want)
			}
			if view == "external" {
				if err := externalPolicy.Check(reply); err != nil {
					t.Errorf("external view, %s %s: %v", q.name, dns.TypeToString[q.qtype], err)
				}
			}
		}
	}
}

// ask asks view about name's records of qtype until the answer's summary is
// want, for up to 10 s, and returns the last answer.
func (v views) ask(view, name string, qtype uint16, want string) (*dns.Msg, error) {
	m := new(dns.Msg)
	m.SetQuestion(dns.Fqdn(name), qtype)
	deadline := time.Now().Add(10 * time.Second)
	for {
		reply, _, err := (&dns.Client{Timeout: 5 * time.Second}).Exchange(m, v.c.Addr(view))
		if err != nil || summary(reply) == want || time.Now().After(deadline) {
			return reply, err
		}
		time.Sleep(20 * time.Millisecond) // polling the watch's effect
	}
}

// summary returns reply's rcode and its Answer records' types and data.
func summary(reply *dns.Msg) string {
	return answer(reply.Rcode, reply.Answer...)
}

// answer returns rcode and the types and data of rrs (without owner names
// and TTLs), sorted: "NOERROR A 192.168.0.51 A 192.168.0.52".
func answer(rcode int, rrs ...dns.RR) string {
	var data []string
	for _, rr := range rrs {
		data = append(data, dns.TypeToString[rr.Header().Rrtype]+" "+strings.TrimPrefix(rr.String(), rr.Header().String()))
	}
	slices.Sort(data)
	return strings.Join(append([]string{dns.RcodeToString[rcode]}, data...), " ")
}

// challenge writes two values of an ACME challenge through the internal
// view, as cert-manager does for a name and its wildcard, runs resync
// (external-dns's controller), deletes one value, runs resync again, and
// fails t unless after each step both views answer the values left, as TXT
// records that no view takes for ownership records; then deletes the rest.
func (v views) challenge(t *testing.T, resync func() error) {
	t.Helper()
	const name = "_acme-challenge.www.example.com."
	token := func(text string) dns.RR {
		return &dns.TXT{Hdr: dns.RR_Header{Name: name, Rrtype: dns.TypeTXT, Class: dns.ClassINET, Ttl: 60}, Txt: []string{text}}
	}
	one, two := token("token-one"), token("token-two")
	update := func(f func(m *dns.Msg)) {
		m := new(dns.Msg)
		m.SetUpdate("example.com.")
		f(m)
		m.SetTsig(nameserver.TestKey.Name, dns.HmacSHA256, 300, time.Now().Unix())
		c := &dns.Client{Timeout: 5 * time.Second, TsigSecret: map[string]string{nameserver.TestKey.Name: nameserver.TestKey.Secret}}
		if r, _, err := c.Exchange(m, v.c.Addr("internal")); err != nil || r.Rcode != dns.RcodeSuccess {
			t.Fatalf("UPDATE: %v %v", err, r)
		}
	}
	expect := func(what, want string) {
		t.Helper()
		for _, view := range []string{"internal", "external"} {
			if reply, err := v.ask(view, name, dns.TypeTXT, want); err != nil || summary(reply) != want {
				t.Errorf("%s, %s view: %v %v, want %s", what, view, err, reply, want)
			}
		}
	}
	externalDNSSync := func() {
		t.Helper()
		if err := resync(); err != nil {
			t.Fatalf("external-dns: %v", err)
		}
	}
	update(func(m *dns.Msg) { m.Insert([]dns.RR{one}) })
	update(func(m *dns.Msg) { m.Insert([]dns.RR{two}) })
	expect("two values", answer(dns.RcodeSuccess, one, two))
	externalDNSSync()
	expect("two values after external-dns's sync", answer(dns.RcodeSuccess, one, two))
	update(func(m *dns.Msg) { m.Remove([]dns.RR{one}) })
	externalDNSSync()
	expect("one value deleted, then external-dns's sync", answer(dns.RcodeSuccess, two))
	update(func(m *dns.Msg) { m.RemoveRRset([]dns.RR{two}) })
	expect("the challenge deleted", answer(dns.RcodeNameError))
}
