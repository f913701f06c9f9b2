package etcdzone

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/coredns/coredns/plugin/test"
	"github.com/globaladdr/globaladdr/internal/poll"

	"github.com/miekg/dns"
)

// TestServeSRVAndMX answers SRV and MX keys: the records with the weights
// as shares, the addresses of targets in the zone in Additional, and no
// CNAME for a mail host (which hid every other record of its name).
func TestServeSRVAndMX(t *testing.T) {
	x, s := newTestZone(t)
	for key, value := range map[string]string{
		"/skydns/com/example/_tcp/_minecraft":   `{"host":"mc1.example.com","port":25565,"weight":1}`,
		"/skydns/com/example/_tcp/_minecraft/b": `{"host":"fd00::62","port":25565,"weight":3,"targetstrip":1}`,
		"/skydns/com/example/mc1":               `{"host":"192.168.0.61"}`,
		"/skydns/com/example/_udp/_game":        `{"host":"192.168.0.70","port":27015}`,
		"/skydns/com/example/corp":              `{"host":"mail.example.com","priority":10,"mail":true}`,
		"/skydns/com/example/corp/txt":          `{"text":"v=spf1 mx -all","targetstrip":1}`,
		"/skydns/com/example/mail":              `{"host":"192.168.0.25"}`,
	} {
		if _, err := s.Client().Put(context.Background(), key, value); err != nil {
			t.Fatal(err)
		}
	}
	soa := test.SOA("example.com. 3600 IN SOA ns1.example.net. hostmaster.example.com. 0 3600 600 1209600 300")
	cases := []test.Case{
		{Qname: "_minecraft._tcp.example.com.", Qtype: dns.TypeSRV,
			Answer: []dns.RR{
				test.SRV("_minecraft._tcp.example.com. 300 IN SRV 10 25 25565 mc1.example.com."),
				test.SRV("_minecraft._tcp.example.com. 300 IN SRV 10 75 25565 _minecraft._tcp.example.com."),
			},
			Extra: []dns.RR{test.AAAA("_minecraft._tcp.example.com. 300 IN AAAA fd00::62"), test.A("mc1.example.com. 300 IN A 192.168.0.61")},
		},
		{Qname: "_minecraft._tcp.example.com.", Qtype: dns.TypeA, Ns: []dns.RR{soa}},
		{Qname: "_minecraft._tcp.example.com.", Qtype: dns.TypeAAAA, Answer: []dns.RR{test.AAAA("_minecraft._tcp.example.com. 300 IN AAAA fd00::62")}},
		{Qname: "_game._udp.example.com.", Qtype: dns.TypeSRV,
			Answer: []dns.RR{test.SRV("_game._udp.example.com. 300 IN SRV 10 100 27015 _game._udp.example.com.")},
			Extra:  []dns.RR{test.A("_game._udp.example.com. 300 IN A 192.168.0.70")},
		},
		{Qname: "_game._udp.example.com.", Qtype: dns.TypeA, Answer: []dns.RR{test.A("_game._udp.example.com. 300 IN A 192.168.0.70")}},
		{Qname: "corp.example.com.", Qtype: dns.TypeMX,
			Answer: []dns.RR{test.MX("corp.example.com. 300 IN MX 10 mail.example.com.")},
			Extra:  []dns.RR{test.A("mail.example.com. 300 IN A 192.168.0.25")},
		},
		{Qname: "corp.example.com.", Qtype: dns.TypeTXT, Answer: []dns.RR{test.TXT(`corp.example.com. 300 IN TXT "v=spf1 mx -all"`)}},
		{Qname: "corp.example.com.", Qtype: dns.TypeA, Ns: []dns.RR{soa}},
		{Qname: "corp.example.com.", Qtype: dns.TypeCNAME, Ns: []dns.RR{soa}},
	}
	poll.Until(t, 10*time.Second, "the SRV and MX records", func() error {
		for _, tc := range cases {
			m := exchange(t, x, tc.Qname, tc.Qtype)
			for _, rr := range m.Ns {
				if soa, ok := rr.(*dns.SOA); ok {
					soa.Serial = 0
				}
			}
			if err := test.SortAndCheck(m, tc); err != nil {
				return fmt.Errorf("%s %s: %v\n%v", tc.Qname, dns.TypeToString[tc.Qtype], err, m)
			}
		}
		return nil
	})
}
