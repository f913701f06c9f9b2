package globaladdr

import (
	"context"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/coredns/coredns/plugin/pkg/dnstest"
	"github.com/coredns/coredns/plugin/test"
	"github.com/globaladdr/globaladdr/internal/viewcheck"

	"github.com/miekg/dns"
)

// internalSamples holds, for every record type whose data viewcheck.Rdata
// says holds an address, a record with an internal address in it.
var internalSamples = map[uint16][]string{
	dns.TypeA:        {"x.example.com. 30 IN A 192.168.0.51"},
	dns.TypeAAAA:     {"x.example.com. 30 IN AAAA fd00::51"},
	dns.TypeL32:      {"x.example.com. 30 IN L32 10 192.168.0.62"},
	dns.TypeL64:      {"x.example.com. 30 IN L64 10 fd00:0000:0000:0001"},
	dns.TypeAPL:      {"x.example.com. 30 IN APL 1:203.0.113.0/24 1:192.168.0.0/24", "x.example.com. 30 IN APL 1:0.0.0.0/0"},
	dns.TypeSVCB:     {"x.example.com. 30 IN SVCB 1 app.example.com. ipv4hint=192.168.0.51"},
	dns.TypeHTTPS:    {`x.example.com. 30 IN HTTPS 1 . alpn="h2" ipv6hint=fd00::51`},
	dns.TypeIPSECKEY: {"x.example.com. 30 IN IPSECKEY 10 1 2 192.168.0.1 AQNRU3mG7TVTO2BkR47usntb102uFJtugbo6BSGvgqt4AQ==", "x.example.com. 30 IN IPSECKEY 10 2 2 fd00::1 AQNRU3mG7TVTO2BkR47usntb102uFJtugbo6BSGvgqt4AQ=="},
	dns.TypeAMTRELAY: {"x.example.com. 30 IN AMTRELAY 10 0 1 192.168.0.61", "x.example.com. 30 IN AMTRELAY 10 0 2 fd00::61"},
}

// TestRdataFollowsTheSpec holds the plugin's table of names and addresses
// in record data (rdata.go) to the specification's, viewcheck.Rdata: for
// every type miekg/dns knows, a record with a hidden name in each of its name
// fields is removed, and a record with an internal address in its data comes
// out with none (rewritten or removed).
func TestRdataFollowsTheSpec(t *testing.T) {
	g := newTestPlugin(t, "globaladdr 203.0.113.10 {\n hide secret.example.com\n}", nil)
	spec := &viewcheck.Policy{Internal: viewcheck.DefaultInternal, Hide: []string{"secret.example.com"}}
	for typ, fields := range viewcheck.Rdata {
		name := dns.Type(typ).String()
		if len(fields.Names) > 0 {
			rr := withHiddenNames(t, typ, fields.Names)
			if got := g.policy.judge(rr); got != dropHidden {
				t.Errorf("%s with a hidden name in %v: judged %d, want it removed", name, fields.Names, got)
			}
		}
		if len(fields.Addrs) == 0 {
			continue
		}
		samples, ok := internalSamples[typ]
		if !ok {
			t.Errorf("%s: the spec says it holds addresses, and internalSamples has no sample of it", name)
		}
		for _, s := range samples {
			m := new(dns.Msg)
			m.Answer = []dns.RR{mustRR(t, s)}
			out, err := g.policy.rewrite(m, g.addrs.Load(), &tally{})
			if err != nil {
				t.Fatalf("%s: %v", s, err)
			}
			if out == m {
				t.Errorf("%s: passed unchanged", s)
			}
			if err := spec.Check(out); err != nil {
				t.Errorf("%s: %v", s, err)
			}
		}
	}
}

// withHiddenNames returns a record of type typ whose name fields all hold
// a name below the hidden secret.example.com (and whose gateway, if it has
// one, is that name).
func withHiddenNames(t *testing.T, typ uint16, fields []string) dns.RR {
	rr := dns.TypeToRR[typ]()
	*rr.Header() = dns.RR_Header{Name: "x.example.com.", Rrtype: typ, Class: dns.ClassINET, Ttl: 30}
	v := reflect.ValueOf(rr).Elem()
	if gw := v.FieldByName("GatewayType"); gw.IsValid() {
		gw.SetUint(uint64(dns.IPSECGatewayHost))
	}
	for _, f := range fields {
		switch fv := v.FieldByName(f); fv.Kind() {
		case reflect.String:
			fv.SetString("db.secret.example.com.")
		case reflect.Slice:
			fv.Set(reflect.ValueOf([]string{"rvs.example.com.", "db.secret.example.com."}))
		default:
			t.Fatalf("%s.%s: not a name field", dns.Type(typ), f)
		}
	}
	return rr
}

// TestServeDNSRdata checks the answers with addresses and names in other
// records' data, and map-only blocks.
func TestServeDNSRdata(t *testing.T) {
	soa := zoneSOA
	const mapsOnly = "globaladdr {\n map 192.168.0.0/24 198.51.100.0/24\n}"
	tests := []struct {
		name     string
		corefile string
		qtype    uint16
		answer   []string
		want     []string // the answer, or the authority section when it is empty
	}{
		{
			name: "HTTPS hints: internal ones become the global address of their family, once", corefile: dual, qtype: dns.TypeHTTPS,
			answer: []string{`app.example.com. 30 IN HTTPS 1 . alpn="h2" ipv4hint="192.168.0.51,203.0.113.10,192.168.0.52" ipv6hint="fd00::51"`},
			want:   []string{`app.example.com.	900	IN	HTTPS	1 . alpn="h2" ipv4hint="203.0.113.10" ipv6hint="2001:db8::10"`},
		},
		{
			name: "a hint key with no global address of its family is removed, from mandatory too", corefile: v4only, qtype: dns.TypeHTTPS,
			answer: []string{`app.example.com. 30 IN HTTPS 1 . mandatory=ipv6hint alpn="h2" ipv6hint="fd00::51"`},
			want:   []string{`app.example.com.	900	IN	HTTPS	1 . alpn="h2"`},
		},
		{
			name: "SVCB hints follow map", corefile: "globaladdr 203.0.113.10 {\n map 192.168.0.0/24 198.51.100.0/24\n}", qtype: dns.TypeSVCB,
			answer: []string{`svc.example.com. 30 IN SVCB 1 app.example.com. port="8443" ipv4hint="192.168.0.51,192.168.1.7"`},
			want:   []string{`svc.example.com.	30	IN	SVCB	1 app.example.com. port="8443" ipv4hint="198.51.100.51,203.0.113.10"`},
		},
		{
			name: "public hints pass unchanged", corefile: v4only, qtype: dns.TypeHTTPS,
			answer: []string{`app.example.com. 30 IN HTTPS 1 . alpn="h2" ipv4hint="198.51.100.1"`},
			want:   []string{`app.example.com.	30	IN	HTTPS	1 . alpn="h2" ipv4hint="198.51.100.1"`},
		},
		{
			name: "HTTPS naming a hidden target is removed", corefile: "globaladdr 203.0.113.10 {\n hide secret.example.com\n}", qtype: dns.TypeHTTPS,
			answer: []string{`app.example.com. 30 IN HTTPS 1 db.secret.example.com. alpn="h2"`, `app.example.com. 30 IN HTTPS 2 . alpn="h2"`},
			want:   []string{`app.example.com.	30	IN	HTTPS	2 . alpn="h2"`},
		},
		{
			name: "records with an internal address in their data are removed: NODATA", corefile: v4only, qtype: dns.TypeANY,
			answer: []string{"app.example.com. 30 IN AMTRELAY 10 0 1 192.168.0.61", "app.example.com. 30 IN L32 10 192.168.0.62", "app.example.com. 30 IN APL 1:10.0.0.0/8"},
			want:   []string{soa},
		},
		{
			name: "records with public addresses in their data pass", corefile: v4only, qtype: dns.TypeANY,
			answer: []string{"app.example.com. 30 IN AMTRELAY 10 0 1 198.51.100.61", "app.example.com. 30 IN L32 10 198.51.100.62"},
			want:   []string{"app.example.com.	30	IN	AMTRELAY	10 0 1 198.51.100.61", "app.example.com.	30	IN	L32	10 198.51.100.62"},
		},
		{
			name: "NAPTR replacement and KX exchanger are names that hide applies to", corefile: "globaladdr 203.0.113.10 {\n hide secret.example.com\n}", qtype: dns.TypeANY,
			answer: []string{`app.example.com. 30 IN NAPTR 100 10 "S" "SIP+D2U" "" _sip._udp.secret.example.com.`, "app.example.com. 30 IN KX 10 kx.secret.example.com.", "app.example.com. 30 IN KX 20 kx.example.com."},
			want:   []string{"app.example.com.	30	IN	KX	20 kx.example.com."},
		},
		{
			name: "an RRSIG over a rewritten HTTPS RRset is removed", corefile: v4only, qtype: dns.TypeHTTPS,
			answer: []string{`app.example.com. 30 IN HTTPS 1 . ipv4hint="192.168.0.51"`, "app.example.com. 30 IN RRSIG HTTPS 13 3 30 20300101000000 20200101000000 1234 example.com. c2lnbmF0dXJl"},
			want:   []string{`app.example.com.	900	IN	HTTPS	1 . ipv4hint="203.0.113.10"`},
		},
		{
			name: "map-only: mapped addresses are translated, others dropped", corefile: mapsOnly, qtype: dns.TypeA,
			answer: []string{"app.example.com. 30 IN A 192.168.0.51", "app.example.com. 30 IN A 192.168.1.51", "app.example.com. 30 IN A 198.51.100.200"},
			want:   []string{"app.example.com.	30	IN	A	198.51.100.51", "app.example.com.	30	IN	A	198.51.100.200"},
		},
		{
			name: "map-only: an answer of unmapped internal addresses is NODATA", corefile: mapsOnly, qtype: dns.TypeA,
			answer: []string{"app.example.com. 30 IN A 192.168.1.51", "app.example.com. 30 IN AAAA fd00::51"},
			want:   []string{soa},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var asked []string
			var answer []dns.RR
			for _, s := range tc.answer {
				answer = append(answer, mustRR(t, s))
			}
			g := newTestPlugin(t, tc.corefile, backend(reply{answer: answer}, &asked))
			req := new(dns.Msg)
			req.SetQuestion("app.example.com.", tc.qtype)
			rec := dnstest.NewRecorder(&test.ResponseWriter{})
			if _, err := g.ServeDNS(context.Background(), rec, req); err != nil {
				t.Fatal(err)
			}
			got := rec.Msg.Answer
			if len(got) == 0 {
				got = rec.Msg.Ns
			}
			var gotS, wantS []string
			for _, rr := range got {
				gotS = append(gotS, rr.String())
			}
			for _, s := range tc.want {
				wantS = append(wantS, mustRR(t, s).String())
			}
			slices.Sort(gotS)
			slices.Sort(wantS)
			if !slices.Equal(gotS, wantS) {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(gotS, "\n"), strings.Join(wantS, "\n"))
			}
		})
	}
}

func mustRR(t *testing.T, s string) dns.RR {
	t.Helper()
	rr, err := dns.NewRR(s)
	if err != nil {
		t.Fatalf("%s: %v", s, err)
	}
	return rr
}
