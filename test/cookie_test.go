package test

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"net"
	"net/netip"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/globaladdr/globaladdr/internal/nameserver"
	"github.com/globaladdr/globaladdr/internal/prereq"

	"github.com/miekg/dns"
)

// testClientCookie is the client cookie the tests send, genreport's.
const testClientCookie = "0102030405060708"

// cookieQuery returns the SOA query of the examples' domain with a COOKIE
// option of cookie (hex).
func cookieQuery(cookie string) *dns.Msg {
	m := new(dns.Msg)
	m.SetQuestion(dns.Fqdn(exampleDomain), dns.TypeSOA)
	m.SetEdns0(1232, false)
	m.IsEdns0().Option = []dns.EDNS0{&dns.EDNS0_COOKIE{Code: dns.EDNS0COOKIE, Cookie: cookie}}
	return m
}

// checkCookies checks that the server at addr, asked from src (the system's
// choice when it is the zero Addr), answers DNS Cookies as RFC 7873 asks and
// BIND answers: the client cookie comes back with a server cookie in RFC
// 9018's format (version 1, stamped now), again when the client presents
// it, and a malformed option gets FORMERR. dig says the cookie is good.
func checkCookies(t *testing.T, src netip.Addr, addr string) {
	t.Helper()
	r := exchangeFrom(t, "udp", src, addr, cookieQuery(testClientCookie))
	server := checkReplyCookie(t, r, dns.RcodeSuccess, testClientCookie)
	r = exchangeFrom(t, "udp", src, addr, cookieQuery(testClientCookie+server))
	checkReplyCookie(t, r, dns.RcodeSuccess, testClientCookie)

	if r := exchangeFrom(t, "udp", src, addr, cookieQuery("0102030405")); r.Rcode != dns.RcodeFormatError {
		t.Errorf("a client cookie of 5 bytes: want FORMERR:\n%v", r)
	}

	dig := prereq.Program(t, "dig", "bind9-dnsutils")
	host, port, _ := net.SplitHostPort(addr)
	args := []string{"-p", port, "@" + host, "+cookie=" + testClientCookie, "SOA", exampleDomain}
	if src.IsValid() {
		args = append(args, "-b", src.String())
	}
	out, _ := exec.Command(dig, args...).CombinedOutput()
	if !regexp.MustCompile(`COOKIE: ` + testClientCookie + `01000000[0-9a-f]{24} \(good\)`).Match(out) {
		t.Errorf("dig +cookie: no good cookie in RFC 9018's format:\n%s", out)
	}
}

// checkReplyCookie checks that r has rcode and a COOKIE option of client
// and a server cookie of version 1 stamped now, and returns the server
// cookie (hex).
func checkReplyCookie(t *testing.T, r *dns.Msg, rcode int, client string) string {
	t.Helper()
	var cookie string
	if opt := r.IsEdns0(); opt != nil {
		for _, o := range opt.Option {
			if c, ok := o.(*dns.EDNS0_COOKIE); ok {
				cookie = c.Cookie
			}
		}
	}
	server, ok := strings.CutPrefix(cookie, client)
	b, err := hex.DecodeString(server)
	if r.Rcode != rcode || !ok || err != nil || len(b) != 16 || b[0] != 1 {
		t.Fatalf("want %s with the client cookie %s and a server cookie of RFC 9018:\n%v", dns.RcodeToString[rcode], client, r)
	}
	if stamped := int64(binary.BigEndian.Uint32(b[4:8])); abs(stamped-time.Now().Unix()) > 5 {
		t.Errorf("the server cookie %s is stamped %d, not now", server, stamped)
	}
	return server
}

// errorRepliesCorefile has cookie above plugins that return an error rcode
// without a reply, which CoreDNS's server then writes: etcdzone for a
// transfer without a transfer plugin (REFUSED), forward to an upstream that
// is down (SERVFAIL); etcdzone writes its own SERVFAIL while its zone is
// not loaded (the etcd at NOWHERE never answers); whoami writes its replies
// without an OPT record. DEAD is an address where nothing listens.
const errorRepliesCorefile = `example.com:{port:zone} {
	bufsize 1232
	errors
	cookie
	etcdzone {
		ns ns1.example.net
	}
	etcd example.com {
		endpoint NOWHERE
	}
}

example.net:{port:forward} {
	bufsize 1232
	errors
	cookie
	forward . DEAD
}

example.org:{port:whoami} {
	bufsize 1232
	cookie
	whoami
}
`

// TestCookieErrorReplies checks that the replies CoreDNS's server writes
// for a plugin below cookie carry the cookie, as those the plugins write:
// SERVFAIL from forward to an upstream that is down (its error still
// logged by errors, with the rcode 0 of a reply written), REFUSED for a transfer without a transfer plugin, and
// etcdzone's SERVFAIL while its zone is not loaded. Each is the reply the
// server writes to the query without a cookie, the COOKIE option aside,
// with bufsize's UDP size (the query asks 4096), as a reply written
// without an OPT record gets with the cookie.
func TestCookieErrorReplies(t *testing.T) {
	logs := captureLog(t)
	c := startCoreDNS(t, strings.NewReplacer(
		"NOWHERE", "http://"+nameserver.FreeLoopbackAddr(t),
		"DEAD", nameserver.FreeLoopbackAddr(t),
	).Replace(errorRepliesCorefile))
	for _, tc := range []struct {
		network, listener, name string
		qtype                   uint16
		rcode                   int
	}{
		{"udp", "forward", "example.net.", dns.TypeSOA, dns.RcodeServerFailure},
		{"tcp", "zone", "example.com.", dns.TypeAXFR, dns.RcodeRefused},
		{"udp", "zone", "example.com.", dns.TypeSOA, dns.RcodeServerFailure},
		{"udp", "whoami", "example.org.", dns.TypeA, dns.RcodeSuccess},
	} {
		what := tc.name + " " + dns.TypeToString[tc.qtype]
		q := new(dns.Msg)
		q.SetQuestion(tc.name, tc.qtype)
		q.SetEdns0(4096, false)
		plain := exchange(t, tc.network, c.Addr(tc.listener), q)

		q.IsEdns0().Option = []dns.EDNS0{&dns.EDNS0_COOKIE{Code: dns.EDNS0COOKIE, Cookie: testClientCookie}}
		r := exchange(t, tc.network, c.Addr(tc.listener), q)
		checkReplyCookie(t, r, tc.rcode, testClientCookie)
		if opt := r.IsEdns0(); opt == nil || opt.UDPSize() != 1232 {
			t.Errorf("%s: want an OPT record of bufsize's 1232 bytes:\n%v", what, r)
		}
		if tc.rcode == dns.RcodeSuccess {
			continue
		}
		r.Id, plain.Id = 0, 0
		r.IsEdns0().Option = slices.DeleteFunc(r.IsEdns0().Option, func(o dns.EDNS0) bool { return o.Option() == dns.EDNS0COOKIE })
		if r.String() != plain.String() {
			t.Errorf("%s: the reply with the cookie, the cookie aside:\n%v\nis not the one without:\n%v", what, r, plain)
		}
	}
	// errors logs once forward has given up, which may be after the reply
	// to a retry of the client's.
	eventually(t, 30*time.Second, "forward's error logged by errors as 0 example.net. SOA", func() error {
		if !regexp.MustCompile(`plugin/errors: 0 example\.net\. SOA: `).MatchString(logs.String()) {
			return fmt.Errorf("not in the log:\n%s", logs.String())
		}
		return nil
	})
}
