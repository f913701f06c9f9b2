package viewcheck

import (
	"testing"

	"github.com/miekg/dns"
)

// TestCheckRR checks what the checker counts as a leak, and what not.
func TestCheckRR(t *testing.T) {
	p := &Policy{
		Internal: append(MustPrefixes("198.51.100.7", "2001:db8:1::/48"), DefaultInternal...),
		Hide:     []string{"secret.example.com"},
	}
	tests := []struct {
		rr   string
		leak bool
	}{
		{"app.example.com. 30 IN A 192.168.0.51", true},
		{"app.example.com. 30 IN A 198.51.100.7", true}, // a map source
		{"app.example.com. 30 IN A 198.51.100.8", false},
		{"app.example.com. 30 IN AAAA fd00::1", true},
		{"app.example.com. 30 IN AAAA ::ffff:10.0.0.1", true},
		{"app.example.com. 30 IN AAAA 2001:db8:1::5", true},
		{"app.example.com. 30 IN AAAA 2001:db8::10", false},
		{"SECRET.Example.COM. 30 IN A 203.0.113.10", true},
		{"x.secret.example.com. 30 IN TXT \"hello\"", true},
		{"notsecret.example.com. 30 IN A 203.0.113.10", false},
		{`a\.secret.example.com. 30 IN A 203.0.113.10`, false}, // one label "a.secret" below example.com
		{"example.com. 30 IN SRV 10 50 0 db.secret.example.com.", true},
		{"www.example.com. 30 IN CNAME Secret.example.com.", true},
		{"example.com. 30 IN MX 10 mail.secret.example.com.", true},
		{"example.com. 30 IN NS ns.secret.example.com.", true},
		{"example.com. 30 IN DNAME secret.example.com.", true},
		{"example.com. 30 IN NSEC db.secret.example.com. A", true},
		{"51.0.168.192.in-addr.arpa. 30 IN PTR db.secret.example.com.", true},
		{"example.com. 30 IN SRV 10 50 0 app.example.com.", false},
		{`a-app.example.com. 30 IN TXT "heritage=external-dns,external-dns/owner=default"`, true},
		{`a-app.example.com. 30 IN TXT "\"heritage=external-dns,external-dns/owner=default\""`, true},
		{`app.example.com. 30 IN TXT "v=spf1 -all"`, false},
	}
	for _, tc := range tests {
		rr, err := dns.NewRR(tc.rr)
		if err != nil {
			t.Fatal(err)
		}
		if err := p.CheckRR(rr); (err != nil) != tc.leak {
			t.Errorf("%s: %v, want a leak: %v", tc.rr, err, tc.leak)
		}
	}
}

// TestKeepRegistryAndOPT checks that keep_registry lets ownership records
// through, and that the OPT record is no record of the view (its owner, the
// root, is hidden here).
func TestKeepRegistryAndOPT(t *testing.T) {
	p := &Policy{Hide: []string{"."}}
	m := new(dns.Msg)
	m.SetEdns0(1232, true)
	rr, _ := dns.NewRR(`. 30 IN TXT "heritage=external-dns"`)
	if err := (&Policy{KeepRegistry: true}).CheckRR(rr); err != nil {
		t.Errorf("keep_registry: %v", err)
	}
	if err := p.Check(m); err != nil {
		t.Errorf("the OPT record judged: %v", err)
	}
}
