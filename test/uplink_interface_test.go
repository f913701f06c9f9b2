package test

import (
	"strings"
	"testing"
	"time"

	"github.com/globaladdr/globaladdr/internal/nameserver"
	"github.com/globaladdr/globaladdr/internal/netlab"

	"github.com/miekg/dns"
)

// interfaceCorefile is a hidden primary whose global addresses come from
// the interface up0, and which translates the LAN's ULA /64 into the prefix
// of up0's global IPv6 address; beside it, the internal view. ETCD, BIND,
// KEY and SECRET are replaced.
const interfaceCorefile = `example.com:{port:primary} {
	prometheus 127.0.0.1:{httpport:metrics}
	ready 127.0.0.1:{httpport:ready}
	tsig {
		secret KEY SECRET
		require AXFR IXFR
	}
	globaladdr {
		from interface up0
		map fd00:0:0:1::/64 from interface up0
		ttl 60
	}
	etcdzone {
		ns ns1.example.net
		refresh 86400
		retry 86400
	}
	transfer {
		to BIND
	}
	etcd example.com {
		endpoint ETCD
	}
}

example.com:{port:internal} {
	etcd example.com {
		endpoint ETCD
	}
}
`

// TestUplinkInterface follows the addresses of a veth in the test's
// namespace with from interface and map FROM from interface: at start-up,
// without an address, SERVFAIL and not ready; then the interface's IPv4
// and IPv6 addresses answer, the mapped ULA hosts take its IPv6 prefix with
// their host bits, and every change of the prefix moves them all, in the
// external view and in a BIND secondary (NOTIFY), while the internal view
// keeps the ULA addresses. A deprecated address is left out; an address
// removed keeps the last good one, and the log says so.
func TestUplinkInterface(t *testing.T) {
	if !netlab.Enter(t) {
		return
	}
	logs := captureLog(t)
	lab := netlab.New(t)
	self := lab.Self()
	lab.Link(self, "up0", "", lab.Namespace("isp"), "up1", "")
	etcd := startEtcd(t)
	putRecords(t, etcd,
		a("app.example.com", "192.168.0.51"),
		aaaa("app.example.com", "fd00:0:0:1::51"),
		aaaa("web.example.com", "fd00:0:0:1::52"),
		aaaa("other.example.com", "fd00:0:0:2::9"),
	)
	bindAddr := nameserver.FreeLoopbackAddr(t)
	c := startCoreDNS(t, strings.NewReplacer(
		"ETCD", etcd.Endpoint(), "BIND", bindAddr,
		"KEY", nameserver.TestKey.Name, "SECRET", nameserver.TestKey.Secret,
	).Replace(interfaceCorefile))
	ext, internal := c.Addr("primary"), c.Addr("internal")
	watchLeaks(t, ext, "app.example.com.", "web.example.com.", "other.example.com.")

	checkRcode(t, ext, "app.example.com.", dns.TypeA, dns.RcodeServerFailure)
	checkNotReady(t, "http://"+c.Addr("ready")+"/ready")
	waitLog(t, logs, "interface up0: the interface up0 has no global address")

	self.IP("addr", "add", "198.51.100.20/32", "dev", "up0")
	self.IP("addr", "add", "2001:db8:aa:1::20/64", "dev", "up0", "nodad")
	expect := func(s, name string, qtype uint16, want ...string) {
		t.Helper()
		eventually(t, uplinkWithin, name+" at "+s, func() error { return answers(s, name, qtype, want) })
	}
	expect(ext, "app.example.com.", dns.TypeA, "198.51.100.20")
	expect(ext, "app.example.com.", dns.TypeAAAA, "2001:db8:aa:1::51")
	expect(ext, "web.example.com.", dns.TypeAAAA, "2001:db8:aa:1::52")
	expect(ext, "other.example.com.", dns.TypeAAAA, "2001:db8:aa:1::20") // no map: the global address
	waitReady(t, "http://"+c.Addr("ready")+"/ready")

	bind := nameserver.StartBIND(t, bindAddr, nameserver.Primary{Zone: "example.com.", Addr: ext, Key: nameserver.TestKey})
	expect(bind.Addr, "app.example.com.", dns.TypeAAAA, "2001:db8:aa:1::51")

	// The prefix changes, back and forth: every mapped host moves.
	var samples []time.Duration
	prefixes := []string{"2001:db8:aa:1:", "2001:db8:bb:2:"}
	for i := 1; i <= 40; i++ {
		was, now := prefixes[(i+1)%2], prefixes[i%2]
		start := time.Now()
		self.IP("addr", "del", was+":20/64", "dev", "up0")
		self.IP("addr", "add", now+":20/64", "dev", "up0", "nodad")
		samples = append(samples, uplinkLatency(t, ext, "app.example.com.", dns.TypeAAAA, start, now+":51"))
		expect(ext, "web.example.com.", dns.TypeAAAA, now+":52")
		expect(internal, "app.example.com.", dns.TypeAAAA, "fd00:0:0:1::51")
	}
	logLatencies(t, "interface (netlink): IPv6 prefix change to external answer", samples)
	expect(bind.Addr, "app.example.com.", dns.TypeAAAA, "2001:db8:aa:1::51")
	expect(bind.Addr, "web.example.com.", dns.TypeAAAA, "2001:db8:aa:1::52")
	checkCopies(t, []*nameserver.Server{bind}, "app.example.com.", "web.example.com.", "other.example.com.")

	// A deprecated address is left out: the IPv4 change after it shows
	// that its notification was taken, and the prefix did not move.
	self.IP("addr", "add", "2001:db8:dd:4::1/64", "dev", "up0", "nodad", "preferred_lft", "0")
	self.IP("addr", "add", "198.51.100.21/32", "dev", "up0")
	self.IP("addr", "del", "198.51.100.20/32", "dev", "up0")
	expect(ext, "app.example.com.", dns.TypeA, "198.51.100.21")
	expect(ext, "app.example.com.", dns.TypeAAAA, "2001:db8:aa:1::51")

	// The IPv4 address removed: the last good one stays, and the log says
	// so; the internal view never changed.
	self.IP("addr", "del", "198.51.100.21/32", "dev", "up0")
	waitLog(t, logs, "interface up0: no IPv4 address now; keeping the last good 198.51.100.21")
	expect(ext, "app.example.com.", dns.TypeA, "198.51.100.21")
	expect(internal, "app.example.com.", dns.TypeA, "192.168.0.51")
	expect(internal, "web.example.com.", dns.TypeAAAA, "fd00:0:0:1::52")
}
