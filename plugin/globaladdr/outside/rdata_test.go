package outside

import (
	"reflect"
	"testing"

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

// TestRdataFollowsTheSpec holds the package's table of names and addresses
// in record data (rdata.go) to the specification's, viewcheck.Rdata: for
// every type miekg/dns knows, a record with a hidden name in each of its name
// fields is removed, and a record with an internal address in its data comes
// out with none (rewritten or removed).
func TestRdataFollowsTheSpec(t *testing.T) {
	p, g := at(Options{TTL: -1, Hide: []string{"secret.example.com."}}, "203.0.113.10")
	spec := &viewcheck.Policy{Internal: viewcheck.DefaultInternal, Hide: []string{"secret.example.com"}}
	for typ, fields := range viewcheck.Rdata {
		name := dns.Type(typ).String()
		if len(fields.Names) > 0 {
			rr := withHiddenNames(t, typ, fields.Names)
			if got := p.judge(rr); got != dropHidden {
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
			rr, err := dns.NewRR(s)
			if err != nil {
				t.Fatalf("%s: %v", s, err)
			}
			m.Answer = []dns.RR{rr}
			out, err := p.Rewrite(m, g, &Tally{})
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
