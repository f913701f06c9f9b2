package viewcheck

import (
	"net"
	"reflect"
	"slices"
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
		// Reverse names of internal addresses tell the address.
		{"51.0.168.192.in-addr.arpa. 30 IN PTR app.example.com.", true},
		{"0.168.192.in-addr.arpa. 30 IN NS ns.example.com.", true},
		{"51.0/25.0.168.192.in-addr.arpa. 30 IN PTR app.example.com.", true},
		{"www.example.com. 30 IN CNAME 51.0.168.192.in-addr.arpa.", true},
		{"1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.d.f.ip6.arpa. 30 IN PTR app.example.com.", true},
		{"192.in-addr.arpa. 30 IN NS ns.example.com.", false}, // 192/8 holds public addresses too
		{"20.100.51.198.in-addr.arpa. 30 IN PTR shop.example.com.", false},
		{"in-addr.arpa. 30 IN NS ns.example.com.", false},
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

// TestRdataCoversEveryType checks Rdata against miekg/dns's own structs:
// every type it knows has an entry, every field its struct tags as a domain
// name is listed as a name, every field of an address kind as an address,
// and every listed field exists. A type or field miekg/dns adds later fails
// here until someone decides how the view handles it.
func TestRdataCoversEveryType(t *testing.T) {
	for typ, newRR := range dns.TypeToRR {
		name := dns.TypeToString[typ]
		f, ok := Rdata[typ]
		if !ok {
			t.Errorf("%s: no entry in Rdata: decide whether it holds names or addresses", name)
			continue
		}
		st := reflect.TypeOf(newRR()).Elem()
		names, addrs := classify(st)
		if !slices.Equal(sorted(f.Names), sorted(names)) {
			t.Errorf("%s: Rdata lists names %v, miekg/dns's struct has %v", name, f.Names, names)
		}
		if !slices.Equal(sorted(f.Addrs), sorted(addrs)) {
			t.Errorf("%s: Rdata lists addresses %v, miekg/dns's struct has %v", name, f.Addrs, addrs)
		}
	}
	for typ := range Rdata {
		if _, ok := dns.TypeToRR[typ]; !ok {
			t.Errorf("%s: in Rdata, unknown to miekg/dns", dns.Type(typ))
		}
	}
}

// classify returns the fields of a record struct (embedded structs walked)
// that hold domain names, by their struct tags, and those of address kinds,
// by their Go types: net.IP, APL prefixes, SVCB parameters, and the ILNP
// locator of L64.
func classify(st reflect.Type) (names, addrs []string) {
	for i := range st.NumField() {
		f := st.Field(i)
		switch tag := f.Tag.Get("dns"); {
		case f.Name == "Hdr":
		case f.Anonymous:
			n, a := classify(f.Type)
			names, addrs = append(names, n...), append(addrs, a...)
		case tag == "domain-name" || tag == "cdomain-name" || tag == "ipsechost" || tag == "amtrelayhost":
			names = append(names, f.Name)
		case f.Type == reflect.TypeOf(net.IP(nil)),
			f.Type == reflect.TypeOf([]dns.APLPrefix(nil)),
			f.Type == reflect.TypeOf([]dns.SVCBKeyValue(nil)),
			st == reflect.TypeOf(dns.L64{}) && f.Name == "Locator64":
			addrs = append(addrs, f.Name)
		}
	}
	return names, addrs
}

func sorted(s []string) []string {
	return slices.Sorted(slices.Values(s))
}

// TestCheckRdata checks that every kind of field Rdata lists is judged.
func TestCheckRdata(t *testing.T) {
	p := &Policy{Internal: DefaultInternal, Hide: []string{"secret.example.com"}}
	tests := []struct {
		rr   string
		leak bool
	}{
		{`app.example.com. 30 IN HTTPS 1 . alpn="h2" ipv4hint=192.168.0.51`, true},
		{`app.example.com. 30 IN HTTPS 1 . alpn="h2" ipv6hint=fd00::51`, true},
		{`app.example.com. 30 IN HTTPS 1 . alpn="h2" ipv4hint=203.0.113.10 ipv6hint=2001:db8::1`, false},
		{`svc.example.com. 30 IN SVCB 1 db.secret.example.com. ipv4hint=203.0.113.10`, true},
		{`relay.example.com. 30 IN AMTRELAY 10 0 1 192.168.0.61`, true},
		{`relay.example.com. 30 IN AMTRELAY 10 0 1 203.0.113.61`, false},
		{`relay.example.com. 30 IN AMTRELAY 10 0 3 relay.secret.example.com.`, true},
		{`loc.example.com. 30 IN L32 10 192.168.0.62`, true},
		{`loc.example.com. 30 IN L32 10 203.0.113.62`, false},
		{`loc.example.com. 30 IN L64 10 fd00:0000:0000:0001`, true},
		{`loc.example.com. 30 IN L64 10 2001:0db8:0000:0001`, false},
		{`gw.example.com. 30 IN IPSECKEY 10 1 2 192.168.0.1 AQNRU3mG7TVTO2BkR47usntb102uFJtugbo6BSGvgqt4AQ==`, true},
		{`gw.example.com. 30 IN IPSECKEY 10 3 2 gw.secret.example.com. AQNRU3mG7TVTO2BkR47usntb102uFJtugbo6BSGvgqt4AQ==`, true},
		{`apl.example.com. 30 IN APL 1:192.168.0.0/24`, true},
		{`apl.example.com. 30 IN APL 1:0.0.0.0/0`, true}, // it holds internal addresses too
		{`apl.example.com. 30 IN APL 1:203.0.113.0/24 2:2001:db8::/32`, false},
		{`example.com. 30 IN NAPTR 100 10 "S" "SIP+D2U" "" _sip._udp.secret.example.com.`, true},
		{`example.com. 30 IN KX 10 kx.secret.example.com.`, true},
		{`example.com. 30 IN HIP 2 200100107B1A74DF365639CC39F1D578 AwEAAbdxyhNuSutc5EMzxTs9LBPCIkOFH8cIvM4p9+LrV4e19WzK00+CI6zBCQTdtWsuxKbWIy87UOoJTwkUs7lBu+Upr1gsNrut79ryra+bSRGQb1slImA8YVJyuIDsj7kwzG7jnERNqnWxZ48AWkskmdHaVDP4BcelrTI3rMXdXF5D rvs.example.com. rvs.secret.example.com.`, true},
		{`example.com. 30 IN TALINK prev.example.com. next.secret.example.com.`, true},
	}
	for _, tc := range tests {
		rr, err := dns.NewRR(tc.rr)
		if err != nil {
			t.Fatalf("%s: %v", tc.rr, err)
		}
		if err := p.CheckRR(rr); (err != nil) != tc.leak {
			t.Errorf("%s: %v, want a leak: %v", tc.rr, err, tc.leak)
		}
	}
}
