package test

import (
	"encoding/binary"
	"encoding/hex"
	"net"
	"net/netip"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

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
	server := checkReplyCookie(t, r, testClientCookie)
	r = exchangeFrom(t, "udp", src, addr, cookieQuery(testClientCookie+server))
	checkReplyCookie(t, r, testClientCookie)

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

// checkReplyCookie checks that r is NOERROR with a COOKIE option of client
// and a server cookie of version 1 stamped now, and returns the server
// cookie (hex).
func checkReplyCookie(t *testing.T, r *dns.Msg, client string) string {
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
	if r.Rcode != dns.RcodeSuccess || !ok || err != nil || len(b) != 16 || b[0] != 1 {
		t.Fatalf("want NOERROR with the client cookie %s and a server cookie of RFC 9018:\n%v", client, r)
	}
	if stamped := int64(binary.BigEndian.Uint32(b[4:8])); abs(stamped-time.Now().Unix()) > 5 {
		t.Errorf("the server cookie %s is stamped %d, not now", server, stamped)
	}
	return server
}
