package test

import (
	"slices"
	"strings"
	"testing"

	"github.com/coredns/coredns/plugin/test"

	"github.com/miekg/dns"
)

// TestSRVAdditional checks the addresses the etcd plugin puts in the
// Additional section of an SRV answer (SkyDNS semantics: one SRV record per
// host below the name, its addresses in Additional).
func TestSRVAdditional(t *testing.T) {
	t.Parallel()
	c, _ := startViews(t, directives{},
		a("app.example.com", "192.168.0.51"),
		aaaa("app.example.com", "fd00::51"),
		a("mixed.example.com", "192.168.0.61", "198.51.100.20"),
	)
	runCases(t, c, []viewCase{
		{"internal view Additional keeps the internal addresses", "internal", test.Case{
			Qname: "app.example.com.", Qtype: dns.TypeSRV,
			Answer: []dns.RR{test.SRV("app.example.com. 300 IN SRV 10 50 0 app.example.com.")},
			Extra: []dns.RR{
				test.A("app.example.com. 300 IN A 192.168.0.51"),
				test.AAAA("app.example.com. 300 IN AAAA fd00::51"),
			},
		}},
		{"external view Additional has the global addresses", "external", test.Case{
			Qname: "app.example.com.", Qtype: dns.TypeSRV,
			Answer: []dns.RR{test.SRV("app.example.com. 300 IN SRV 10 50 0 app.example.com.")},
			Extra: []dns.RR{
				test.A("app.example.com. 900 IN A 203.0.113.10"),
				test.AAAA("app.example.com. 900 IN AAAA 2001:db8::10"),
			},
		}},
		{"external view Additional keeps a public address beside the global one", "external", test.Case{
			Qname: "mixed.example.com.", Qtype: dns.TypeSRV,
			Answer: []dns.RR{test.SRV("mixed.example.com. 300 IN SRV 10 50 0 mixed.example.com.")},
			Extra: []dns.RR{
				test.A("mixed.example.com. 300 IN A 203.0.113.10"), // one TTL per RRset: the lowest
				test.A("mixed.example.com. 300 IN A 198.51.100.20"),
			},
		}},
	})
}

// srvMXKeys are SRV and MX keys as homelab users write them by hand, each
// owner's keys alone in their subtree, so that the etcd plugin's answers
// for a name hold the keys of etcdzone's owner of that name: records of an
// address (the target is the key's name, which holds the address) and of a
// name in the zone and out of it, priorities and weights (made shares of
// their priority's), targetstrip (which strips a name target's labels
// too), and MX records of the value ({"host":..., "mail":true}).
var srvMXKeys = map[string]string{
	"/skydns/com/example/_tcp/_minecraft/x1": `{"host":"192.168.0.60","port":25565,"weight":3,"targetstrip":1}`,
	"/skydns/com/example/_tcp/_minecraft/x2": `{"host":"fd00::61","port":25566,"priority":20,"weight":1,"targetstrip":1}`,
	"/skydns/com/example/_udp/_sip/a":        `{"host":"192.168.0.70","port":5060,"weight":3,"targetstrip":1}`,
	"/skydns/com/example/_udp/_sip/b":        `{"host":"192.168.0.71","port":5061,"weight":1,"targetstrip":1}`,
	"/skydns/com/example/_tcp/_http":         `{"host":"web.example.com","port":80}`,
	"/skydns/com/example/web":                `{"host":"192.168.0.80"}`,
	"/skydns/com/example/_tcp/_xmpp-server":  `{"host":"xmpp.example.net","port":5269,"priority":5}`,
	"/skydns/com/example/_tcp/_ldap/a":       `{"host":"a.ldap1.example.com","port":389,"targetstrip":1}`,
	"/skydns/com/example/_tcp/_ldap/b":       `{"host":"b.ldap2.example.com","port":389,"targetstrip":1}`,
	"/skydns/com/example/corp":               `{"host":"mail.example.com","priority":10,"mail":true}`,
	"/skydns/com/example/mail":               `{"host":"192.168.0.25"}`,
	"/skydns/com/example/mx/a":               `{"host":"192.168.0.26","mail":true,"targetstrip":1}`,
	"/skydns/com/example/mx/b":               `{"host":"fd00::27","priority":20,"mail":true,"targetstrip":1}`,
	"/skydns/com/example/relay":              `{"host":"relay.example.net","priority":30,"mail":true}`,
}

// etcdAndZoneCorefile serves one etcd tree (ETCD stands for its endpoint) by
// the etcd plugin and by etcdzone, on ports of their own.
const etcdAndZoneCorefile = `example.com:{port:etcd} {
	etcd example.com {
		endpoint ETCD
	}
}

example.com:{port:etcdzone} {
	etcdzone {
		ns ns1.example.net
	}
	etcd example.com {
		endpoint ETCD
	}
}
`

// TestSRVAndMXAsEtcd asks the etcd plugin and etcdzone, reading the same
// etcd, for the SRV and MX records of srvMXKeys: etcdzone's answers hold the
// etcd plugin's records, TTLs included, and the same address records in
// Additional, compared without their owner names: the etcd plugin names the
// address of an MX value's address by the key's name without targetstrip
// (a.mx.example.com), etcdzone by the MX's target (mx.example.com), which
// the etcd plugin's MX names too. They are authoritative answers, without
// the CNAME the etcd plugin gives an address query for a name with a name
// target.
func TestSRVAndMXAsEtcd(t *testing.T) {
	t.Parallel()
	etcd := startEtcd(t)
	putKeys(t, etcd, srvMXKeys)
	c := startCoreDNS(t, strings.ReplaceAll(etcdAndZoneCorefile, "ETCD", etcd.Endpoint()))
	waitServing(t, c.Addr("etcdzone"))
	for _, q := range []struct {
		name  string
		qtype uint16
	}{
		{"_minecraft._tcp.example.com.", dns.TypeSRV},
		{"_sip._udp.example.com.", dns.TypeSRV},
		{"_http._tcp.example.com.", dns.TypeSRV},
		{"_xmpp-server._tcp.example.com.", dns.TypeSRV},
		{"_ldap._tcp.example.com.", dns.TypeSRV},
		{"corp.example.com.", dns.TypeMX},
		{"mx.example.com.", dns.TypeMX},
		{"relay.example.com.", dns.TypeMX},
	} {
		want := query(t, "udp", c.Addr("etcd"), q.name, q.qtype)
		got := query(t, "udp", c.Addr("etcdzone"), q.name, q.qtype)
		what := q.name + " " + dns.TypeToString[q.qtype]
		switch {
		case len(want.Answer) == 0:
			t.Errorf("%s: the etcd plugin answers nothing:\n%v", what, want)
		case got.Rcode != dns.RcodeSuccess || !got.Authoritative:
			t.Errorf("%s: etcdzone answers %s, AA %v", what, dns.RcodeToString[got.Rcode], got.Authoritative)
		}
		for _, s := range []struct {
			section   string
			got, want []string
		}{{"Answer", rrTexts(got.Answer, true), rrTexts(want.Answer, true)}, {"Additional", rrTexts(got.Extra, false), rrTexts(want.Extra, false)}} {
			if !slices.Equal(s.got, s.want) {
				t.Errorf("%s: etcdzone's %s\n\t%q\nthe etcd plugin's\n\t%q", what, s.section, s.got, s.want)
			}
		}
	}
	for _, name := range []string{"corp.example.com.", "_http._tcp.example.com."} {
		if m := query(t, "udp", c.Addr("etcdzone"), name, dns.TypeA); len(m.Answer) > 0 {
			t.Errorf("%s A: %v, want NODATA: a name with an MX or SRV record holds no CNAME", name, m.Answer)
		}
	}
}

// rrTexts returns rrs as sorted text, in lower case, with their owner
// names or without them.
func rrTexts(rrs []dns.RR, owners bool) []string {
	texts := make([]string, len(rrs))
	for i, rr := range rrs {
		texts[i] = strings.ToLower(rr.String())
		if !owners {
			texts[i] = strings.ToLower(strings.TrimPrefix(rr.String(), rr.Header().Name))
		}
	}
	slices.Sort(texts)
	return texts
}
