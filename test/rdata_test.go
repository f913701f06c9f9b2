package test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/globaladdr/globaladdr/internal/viewcheck"

	"github.com/miekg/dns"
)

// rdataZone holds, beside plain addresses, every kind of record whose data
// holds an address or a name: what the external view must rewrite, drop or
// hide, whatever the backend holds.
const rdataZone = `$ORIGIN example.com.
@	3600	IN	SOA	ns.example.com. hostmaster.example.com. 1 7200 1800 86400 300
	3600	IN	NS	ns.example.com.
ns	3600	IN	A	198.51.100.2
app	3600	IN	A	192.168.0.51
	3600	IN	HTTPS	1 . alpn="h2" ipv4hint=192.168.0.51 ipv6hint=fd00::51
pub	3600	IN	HTTPS	1 . alpn="h2" ipv4hint=198.51.100.7
svc	3600	IN	SVCB	1 app.example.com. port=8443 ipv4hint=192.168.0.51,192.168.0.52
hid	3600	IN	HTTPS	1 db.secret.example.com. alpn="h2"
	3600	IN	HTTPS	2 app.example.com. alpn="h2"
relay	3600	IN	AMTRELAY	10 0 1 192.168.0.61
loc	3600	IN	L32	10 192.168.0.62
	3600	IN	L64	10 fd00:0000:0000:0001
apl	3600	IN	APL	1:192.168.0.0/24
sip	3600	IN	NAPTR	100 10 "S" "SIP+D2U" "" _sip._udp.secret.example.com.
	3600	IN	NAPTR	100 20 "S" "SIP+D2T" "" _sip._tcp.example.com.
kx	3600	IN	KX	10 kx.secret.example.com.
db.secret	3600	IN	A	198.51.100.9
; miekg/dns reads an IPSECKEY record on to the next line: it stands last.
gw	3600	IN	IPSECKEY	10 1 2 192.168.0.1 AQNRU3mG7TVTO2BkR47usntb102uFJtugbo6BSGvgqt4AQ==
`

// rdataCorefile serves rdataZone (ZONE stands for its file) in an internal
// and an external view.
const rdataCorefile = `
example.com:{port:internal} {
	file ZONE
}

example.com:{port:external} {
	prometheus 127.0.0.1:{httpport:metrics}
	globaladdr 203.0.113.10 2001:db8::10 {
		ttl 900
		hide secret.example.com
	}
	file ZONE
}
`

// TestRecordData checks the external view of records that hold addresses
// and names in their data, served by the file plugin, over UDP and TCP:
// SVCB and HTTPS hints are rewritten like A and AAAA records, records with
// an internal address anywhere else in their data are removed (NODATA where
// nothing is left), and records naming a hidden name go. Every external
// reply is judged by viewcheck too; the internal view, the control, shows
// the zone as it is. The metrics count what was rewritten and dropped, by
// type.
func TestRecordData(t *testing.T) {
	t.Parallel()
	zone := filepath.Join(t.TempDir(), "db.example.com")
	if err := os.WriteFile(zone, []byte(rdataZone), 0o644); err != nil {
		t.Fatal(err)
	}
	c := startCoreDNS(t, strings.ReplaceAll(rdataCorefile, "ZONE", zone))
	before := scrape(t, "http://"+c.Addr("metrics")+"/metrics")
	spec := &viewcheck.Policy{Internal: viewcheck.DefaultInternal, Hide: []string{"secret.example.com"}}

	tests := []struct {
		name  string
		qtype uint16
		want  []string // the external answer; none: NODATA
	}{
		{"app", dns.TypeHTTPS, []string{`app.example.com. 900 IN HTTPS 1 . alpn="h2" ipv4hint="203.0.113.10" ipv6hint="2001:db8::10"`}},
		{"pub", dns.TypeHTTPS, []string{`pub.example.com. 3600 IN HTTPS 1 . alpn="h2" ipv4hint="198.51.100.7"`}},
		{"svc", dns.TypeSVCB, []string{`svc.example.com. 900 IN SVCB 1 app.example.com. port="8443" ipv4hint="203.0.113.10"`}},
		{"hid", dns.TypeHTTPS, []string{`hid.example.com. 3600 IN HTTPS 2 app.example.com. alpn="h2"`}},
		{"relay", dns.TypeAMTRELAY, nil},
		{"loc", dns.TypeL32, nil},
		{"loc", dns.TypeL64, nil},
		{"gw", dns.TypeIPSECKEY, nil},
		{"apl", dns.TypeAPL, nil},
		{"sip", dns.TypeNAPTR, []string{`sip.example.com. 3600 IN NAPTR 100 20 "S" "SIP+D2T" "" _sip._tcp.example.com.`}},
		{"kx", dns.TypeKX, nil},
	}
	for _, tc := range tests {
		name := tc.name + ".example.com."
		t.Run(tc.name+"/"+dns.TypeToString[tc.qtype], func(t *testing.T) {
			for _, network := range networks {
				internal := query(t, network, c.Addr("internal"), name, tc.qtype)
				if len(internal.Answer) == 0 {
					t.Fatalf("%s: the internal view has no %s record: the zone did not load as written", network, dns.TypeToString[tc.qtype])
				}
				r := query(t, network, c.Addr("external"), name, tc.qtype)
				if err := spec.Check(r); err != nil {
					t.Errorf("%s: %v", network, err)
				}
				if r.Rcode != dns.RcodeSuccess {
					t.Errorf("%s: rcode %s, want NOERROR", network, dns.RcodeToString[r.Rcode])
				}
				if got, want := presentation(r.Answer), normalized(t, tc.want); !slices.Equal(got, want) {
					t.Errorf("%s: answer\n%s\nwant\n%s", network, strings.Join(got, "\n"), strings.Join(want, "\n"))
				}
				if len(tc.want) == 0 && !hasSOA(r.Ns) {
					t.Errorf("%s: NODATA without the zone's SOA: %v", network, r.Ns)
				}
			}
		})
	}
	after := scrape(t, "http://"+c.Addr("metrics")+"/metrics")
	for _, m := range []struct {
		metric, typ string
		want        float64 // once over UDP, once over TCP
	}{
		{"rewritten_total", "HTTPS", 2},
		{"rewritten_total", "SVCB", 2},
		{"dropped_total", "AMTRELAY", 2},
		{"dropped_total", "L32", 2},
		{"dropped_total", "L64", 2},
		{"dropped_total", "IPSECKEY", 2},
		{"dropped_total", "APL", 2},
	} {
		if got := counted(before, after, "coredns_globaladdr_"+m.metric, c.Port("external"), m.typ); got != m.want {
			t.Errorf("%s{type=%q}: %v, want %v", m.metric, m.typ, got, m.want)
		}
	}
}

// presentation returns rrs in presentation form, sorted.
func presentation(rrs []dns.RR) []string {
	var out []string
	for _, rr := range rrs {
		out = append(out, rr.String())
	}
	slices.Sort(out)
	return out
}

// normalized parses records and returns them as presentation does.
func normalized(t *testing.T, rrs []string) []string {
	t.Helper()
	var parsed []dns.RR
	for _, s := range rrs {
		rr, err := dns.NewRR(s)
		if err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		parsed = append(parsed, rr)
	}
	return presentation(parsed)
}

func hasSOA(rrs []dns.RR) bool {
	return slices.ContainsFunc(rrs, func(rr dns.RR) bool { return rr.Header().Rrtype == dns.TypeSOA })
}
