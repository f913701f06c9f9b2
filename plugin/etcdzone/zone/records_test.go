package zone

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/coredns/coredns/plugin/etcd/msg"
	"github.com/coredns/coredns/plugin/test"

	"github.com/miekg/dns"
)

// TestServiceRecords reads SkyDNS values into the records of their owner
// name: each type of the etcd plugin, with its defaults and its target
// rules, and no record at all for a value no rule serves whole.
func TestServiceRecords(t *testing.T) {
	const owner = "_minecraft._tcp.example.com."
	for _, tc := range []struct {
		value string
		want  []string // the records, TTLs aside; none: an error
	}{
		{`{"host":"192.168.0.51"}`, []string{owner + " IN A 192.168.0.51"}},
		{`{"host":"fd00::51"}`, []string{owner + " IN AAAA fd00::51"}},
		{`{"host":"App.Example.com"}`, []string{owner + " IN CNAME app.example.com."}},
		{`{"text":"hello"}`, []string{owner + ` IN TXT "hello"`}},
		{`{"host":"192.168.0.51","text":"owned"}`, []string{owner + " IN A 192.168.0.51", owner + ` IN TXT "owned"`}},
		// SRV: priority 10 when none, the weight as written (srvShares
		// makes it a share), the host the target.
		{`{"host":"mc.example.com","port":25565}`, []string{owner + " IN SRV 10 0 25565 mc.example.com."}},
		{`{"host":"mc.example.com.","port":25565,"priority":20,"weight":5}`, []string{owner + " IN SRV 20 5 25565 mc.example.com."}},
		// An address: the target is the owner, which holds the address.
		{`{"host":"192.168.0.51","port":25565}`, []string{owner + " IN A 192.168.0.51", owner + " IN SRV 10 0 25565 " + owner}},
		{`{"host":"fd00::51","port":25565}`, []string{owner + " IN AAAA fd00::51", owner + " IN SRV 10 0 25565 " + owner}},
		// MX: the priority the preference, 10 when none.
		{`{"host":"mail.example.com","priority":20,"mail":true}`, []string{owner + " IN MX 20 mail.example.com."}},
		{`{"host":"mail.example.com","mail":true}`, []string{owner + " IN MX 10 mail.example.com."}},
		{`{"host":"192.168.0.25","mail":true}`, []string{owner + " IN A 192.168.0.25", owner + " IN MX 10 " + owner}},
		{`{"host":"mail.example.com","mail":true,"port":25}`, []string{owner + " IN SRV 10 0 25 mail.example.com.", owner + " IN MX 10 mail.example.com."}},
		// targetstrip strips the name host's labels too, as the etcd
		// plugin's SRV and MX records do.
		{`{"host":"x1.mail.example.com","mail":true,"targetstrip":1}`, []string{owner + " IN MX 10 mail.example.com."}},
		// A priority or weight alone makes no SRV record.
		{`{"host":"192.168.0.51","priority":20,"weight":5}`, []string{owner + " IN A 192.168.0.51"}},
		// Nothing rather than a record of another type.
		{`{"mail":true,"priority":10}`, nil},
		{`{"text":"t","port":80}`, nil},
		{`{"host":"not a name!","mail":true}`, nil},
		{`{"host":"mc.example.com","port":65536}`, nil},
		{`{"host":"mc.example.com","port":-1}`, nil},
		{`{"host":"mc.example.com","port":80,"priority":-1}`, nil},
		{`{"host":"mail.example.com","mail":true,"priority":70000}`, nil},
		{`{"host":"mc.example.com","port":80,"weight":65536}`, nil},
		{`{}`, nil},
	} {
		s := new(msg.Service)
		if err := json.Unmarshal([]byte(tc.value), s); err != nil {
			t.Fatal(err)
		}
		rrs, err := serviceRecords(s, owner)
		var got []string
		for _, rr := range rrs {
			got = append(got, withoutTTL(rr))
		}
		switch {
		case tc.want == nil && err == nil:
			t.Errorf("%s: %q, want an error", tc.value, got)
		case tc.want != nil && !slices.Equal(got, tc.want):
			t.Errorf("%s: %q (%v), want %q", tc.value, got, err, tc.want)
		}
	}
}

// withoutTTL returns rr as text, without its TTL.
func withoutTTL(rr dns.RR) string {
	h := rr.Header()
	return h.Name + " IN " + dns.TypeToString[h.Rrtype] + " " + strings.TrimPrefix(rr.String(), h.String())
}

// TestSRVShares makes SRV weights shares of their priority's, as the etcd
// plugin does: a missing weight counts as 100, a share is at least 1, and
// the records given are left as they are.
func TestSRVShares(t *testing.T) {
	srv := func(priority, weight uint16, target string) *dns.SRV {
		return &dns.SRV{Hdr: dns.RR_Header{Name: "_x._tcp.example.com.", Rrtype: dns.TypeSRV, Class: dns.ClassINET}, Priority: priority, Weight: weight, Port: 80, Target: target}
	}
	a := test.A("_x._tcp.example.com. 300 IN A 192.168.0.51")
	rrs := []dns.RR{srv(10, 1, "a."), srv(10, 3, "b."), a, srv(20, 0, "c."), srv(20, 0, "d."), srv(30, 7, "e."), srv(40, 1, "f."), srv(40, 1000, "g.")}
	got := srvShares(rrs)
	var weights []uint16
	for _, rr := range got {
		if s, ok := rr.(*dns.SRV); ok {
			weights = append(weights, s.Weight)
		}
	}
	if want := []uint16{25, 75, 50, 50, 100, 1, 99}; !slices.Equal(weights, want) {
		t.Errorf("weights %v, want %v", weights, want)
	}
	if got[2] != a || rrs[0].(*dns.SRV).Weight != 1 {
		t.Errorf("the records given changed: %v", rrs)
	}
	if none := []dns.RR{a}; &srvShares(none)[0] != &none[0] {
		t.Error("a name without SRV records got a copy")
	}
}
