package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/globaladdr/globaladdr/internal/corednstest"
	"github.com/globaladdr/globaladdr/internal/etcdtest"

	"github.com/miekg/dns"
)

// TestTryIt runs the demo's Corefile, on free ports, against the demo's
// records, and asks each query the demo prints: each view's answer (its
// addresses, CNAME targets, ownership text as dig prints it, TTLs, or its
// rcode) is what the demo says it is.
func TestTryIt(t *testing.T) {
	etcd := etcdtest.StartT(t)
	if err := putSampleRecords(context.Background(), etcd); err != nil {
		t.Fatal(err)
	}
	corefile := strings.NewReplacer(":1053", ":{port:internal}", ":1054", ":{port:external}").Replace(demoCorefile(etcd.Endpoint()))
	c := corednstest.Start(t, corefile)
	for _, q := range tryIt {
		name, qtype, _ := strings.Cut(q.query, " ")
		for view, said := range map[string]string{"internal": q.internal, "external": q.external} {
			m := new(dns.Msg)
			m.SetQuestion(dns.Fqdn(name), dns.StringToType[qtype])
			r, _, err := (&dns.Client{Timeout: 5 * time.Second}).Exchange(m, c.Addr(view))
			if err != nil {
				t.Fatalf("%s, %s view: %v", q.query, view, err)
			}
			for _, word := range answerWords(r) {
				if !strings.Contains(said, word) {
					t.Errorf("%s, %s view: the demo says %q, the answer holds %q:\n%v", q.query, view, said, word, r)
				}
			}
		}
	}
}

// answerWords returns what the demo's text must name of r: its rcode unless
// NOERROR, and each record's address, target or the start of its text as
// dig shows it, and its TTL.
func answerWords(r *dns.Msg) []string {
	if r.Rcode != dns.RcodeSuccess {
		return []string{dns.RcodeToString[r.Rcode]}
	}
	var words []string
	for _, rr := range r.Answer {
		switch rr := rr.(type) {
		case *dns.A:
			words = append(words, rr.A.String())
		case *dns.AAAA:
			words = append(words, rr.AAAA.String())
		case *dns.CNAME:
			words = append(words, strings.TrimSuffix(rr.Target, "."))
		case *dns.TXT:
			text := `"` + rr.Txt[0]
			words = append(words, text[:min(len(text), len(`"\"heritage=external-dns`))])
		}
		words = append(words, fmt.Sprintf("TTL %d", rr.Header().Ttl))
	}
	return words
}
