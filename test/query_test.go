package test

import (
	"net"
	"net/netip"
	"sort"
	"testing"
	"time"

	"github.com/coredns/coredns/plugin/test"

	"github.com/miekg/dns"
)

// networks are the transports every end-to-end case is asked over.
var networks = []string{"udp", "tcp"}

// exchange sends m to addr over network ("udp" or "tcp") and returns the
// reply. The test fails at once when no reply comes.
func exchange(t testing.TB, network, addr string, m *dns.Msg) *dns.Msg {
	t.Helper()
	return exchangeFrom(t, network, netip.Addr{}, addr, m)
}

// exchangeFrom is exchange from the local address src, or from the address
// the system chooses when src is the zero Addr.
func exchangeFrom(t testing.TB, network string, src netip.Addr, addr string, m *dns.Msg) *dns.Msg {
	t.Helper()
	c := &dns.Client{Net: network, Timeout: 5 * time.Second}
	if src.IsValid() {
		local := netip.AddrPortFrom(src, 0)
		c.Dialer = &net.Dialer{Timeout: c.Timeout, LocalAddr: net.TCPAddrFromAddrPort(local)}
		if network == "udp" {
			c.Dialer.LocalAddr = net.UDPAddrFromAddrPort(local)
		}
	}
	r, _, err := c.Exchange(m, addr)
	if err != nil {
		t.Fatalf("%s query %s %s to %s: %v", network, m.Question[0].Name, dns.TypeToString[m.Question[0].Qtype], addr, err)
	}
	return r
}

// query asks addr over network for name's records of type qtype.
func query(t testing.TB, network, addr, name string, qtype uint16) *dns.Msg {
	t.Helper()
	m := new(dns.Msg)
	m.SetQuestion(dns.Fqdn(name), qtype)
	return exchange(t, network, addr, m)
}

// checkCase asks addr tc's question over UDP and over TCP, and fails t unless
// each reply has tc's rcode and exactly tc's records in each section, in any
// order. A record's TTL is compared too, except where tc gives 303 (the
// convention of CoreDNS's test package for "any TTL"). Each reply is then
// handed to the further checks, if any.
func checkCase(t *testing.T, addr string, tc test.Case, checks ...func(*testing.T, *dns.Msg)) {
	t.Helper()
	checkCaseFrom(t, netip.Addr{}, addr, tc, checks...)
}

// checkCaseFrom is checkCase asking from the local address src (see
// exchangeFrom).
func checkCaseFrom(t *testing.T, src netip.Addr, addr string, tc test.Case, checks ...func(*testing.T, *dns.Msg)) {
	t.Helper()
	sortSections(tc.Answer, tc.Ns, tc.Extra)
	for _, network := range networks {
		reply := exchangeFrom(t, network, src, addr, tc.Msg())
		sortSections(reply.Answer, reply.Ns, reply.Extra)
		if err := compare(tc, reply); err != nil {
			t.Errorf("%s %s over %s: %v\nreply:\n%v", tc.Qname, dns.TypeToString[tc.Qtype], network, err, reply)
		}
		for _, check := range checks {
			check(t, reply)
		}
	}
}

// compare is test.SortAndCheck without its sorting, which orders records by
// TTL too and so cannot match a TTL of 303 (any) with the actual TTL.
func compare(tc test.Case, reply *dns.Msg) error {
	if err := test.Header(tc, reply); err != nil {
		return err
	}
	if err := test.Section(tc, test.Answer, reply.Answer); err != nil {
		return err
	}
	if err := test.Section(tc, test.Ns, reply.Ns); err != nil {
		return err
	}
	return test.Section(tc, test.Extra, reply.Extra)
}

// sortSections sorts each section by its records' text without their TTLs.
func sortSections(sections ...[]dns.RR) {
	for _, rrs := range sections {
		keys := make(map[dns.RR]string, len(rrs))
		for _, rr := range rrs {
			c := dns.Copy(rr)
			c.Header().Ttl = 0
			keys[rr] = c.String()
		}
		sort.SliceStable(rrs, func(i, j int) bool { return keys[rrs[i]] < keys[rrs[j]] })
	}
}

// viewCase is a query to one listener of a CoreDNS and the reply it must get.
type viewCase struct {
	name string
	// view is the listener's placeholder name in the Corefile: "internal"
	// stands for {port:internal}.
	view string
	tc   test.Case
}

// runCases runs each case, in order, as a subtest named after it, over UDP
// and TCP.
func runCases(t *testing.T, c *coreDNS, cases []viewCase) {
	t.Helper()
	for _, vc := range cases {
		t.Run(vc.name, func(t *testing.T) { checkCase(t, c.Addr(vc.view), vc.tc) })
	}
}
