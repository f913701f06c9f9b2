package test

import (
	"encoding/base64"
	"net"
	"net/netip"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/globaladdr/globaladdr/internal/nameserver"
	"github.com/globaladdr/globaladdr/internal/prereq"

	"github.com/miekg/dns"
)

// wellKnownKey is the key ISC's EDNS compliance tester (genreport) signs
// its dnswkk query with, and that no server knows: the name ".", a secret
// of 32 zero bytes.
var wellKnownKey = nameserver.Key{Name: ".", Secret: base64.StdEncoding.EncodeToString(make([]byte, 32))}

// signedReply is the reply to a query signed with TSIG, with its wire form
// and the query's MAC, which a signed reply's MAC covers.
type signedReply struct {
	*dns.Msg
	wire     []byte
	queryMAC string
}

// tsigExchange sends m to addr over network ("udp" or "tcp") from src (the
// system's choice when it is the zero Addr), signed at signed with key
// (hmac-sha256, fudge 300), and returns the reply.
func tsigExchange(t *testing.T, network string, src netip.Addr, addr string, m *dns.Msg, key nameserver.Key, signed time.Time) signedReply {
	t.Helper()
	m.SetTsig(key.Name, dns.HmacSHA256, 300, signed.Unix())
	query, mac, err := dns.TsigGenerate(m, key.Secret, "", false)
	if err != nil {
		t.Fatal(err)
	}
	d := net.Dialer{Timeout: 5 * time.Second}
	if src.IsValid() {
		d.LocalAddr = &net.UDPAddr{IP: src.AsSlice()}
		if network == "tcp" {
			d.LocalAddr = &net.TCPAddr{IP: src.AsSlice()}
		}
	}
	c, err := d.Dial(network, addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.SetDeadline(time.Now().Add(5 * time.Second)); err != nil {
		t.Fatal(err)
	}
	conn := &dns.Conn{Conn: c}
	if _, err := conn.Write(query); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, dns.MaxMsgSize)
	n, err := conn.Read(buf)
	if err != nil {
		t.Fatalf("%s query signed by %s to %s: %v", network, key.Name, addr, err)
	}
	r := new(dns.Msg)
	if err := r.Unpack(buf[:n]); err != nil {
		t.Fatal(err)
	}
	return signedReply{Msg: r, wire: buf[:n], queryMAC: mac}
}

// soaQuery returns the SOA query of the examples' domain as genreport asks
// it: no EDNS, no recursion desired.
func soaQuery() *dns.Msg {
	m := new(dns.Msg)
	m.SetQuestion(dns.Fqdn(exampleDomain), dns.TypeSOA)
	m.RecursionDesired = false
	return m
}

// checkUnknownTSIGKey checks that the server at addr, asked from src (the
// system's choice when it is the zero Addr), answers a query signed with a
// key it does not know as RFC 8945 section 5.2.1 asks, and as BIND, NSD and
// Knot answer: NOTAUTH, with an unsigned TSIG record of the error BADKEY and
// the server's time. It asks genreport's dnswkk query over UDP and TCP, and
// dig with a key of its own.
func checkUnknownTSIGKey(t *testing.T, src netip.Addr, addr string) {
	t.Helper()
	for _, network := range []string{"udp", "tcp"} {
		checkTSIGError(t, tsigExchange(t, network, src, addr, soaQuery(), wellKnownKey, time.Now()), wellKnownKey.Name, dns.RcodeBadKey)
	}

	dig := prereq.Program(t, "dig", "bind9-dnsutils")
	host, port, _ := net.SplitHostPort(addr)
	args := []string{"-p", port, "@" + host, "-y", "hmac-sha256:unknown.example.:" + nameserver.TestKey.Secret, "SOA", exampleDomain}
	if src.IsValid() {
		args = append(args, "-b", src.String())
	}
	out, _ := exec.Command(dig, args...).CombinedOutput()
	// dig checks the time before the error: a Time Signed of 0 would read
	// "clocks are unsynchronized".
	for _, want := range []string{"status: NOTAUTH", "BADKEY", "tsig indicates error"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("dig -y with an unknown key: the output lacks %q:\n%s", want, out)
		}
	}
}

// checkTSIGKey checks that the server at addr, which knows key, answers a
// query signed with it as RFC 8945 asks: signed (its MAC covering the
// query's); NOTAUTH with an unsigned TSIG record of BADSIG when the MAC is
// wrong; NOTAUTH with a signed record of BADTIME, the server's time in its
// other data, when the query was signed an hour ago.
func checkTSIGKey(t *testing.T, addr string, key nameserver.Key) {
	t.Helper()
	r := tsigExchange(t, "udp", netip.Addr{}, addr, soaQuery(), key, time.Now())
	if tsig := r.IsTsig(); r.Rcode != dns.RcodeSuccess || tsig == nil || tsig.Error != dns.RcodeSuccess {
		t.Errorf("a query signed with %s: want NOERROR, signed:\n%v", key.Name, r)
	} else if err := dns.TsigVerify(r.wire, key.Secret, r.queryMAC, false); err != nil {
		t.Errorf("a query signed with %s: the reply's TSIG does not verify: %v", key.Name, err)
	}

	wrong := nameserver.Key{Name: key.Name, Secret: wellKnownKey.Secret}
	checkTSIGError(t, tsigExchange(t, "udp", netip.Addr{}, addr, soaQuery(), wrong, time.Now()), key.Name, dns.RcodeBadSig)

	r = tsigExchange(t, "udp", netip.Addr{}, addr, soaQuery(), key, time.Now().Add(-time.Hour))
	tsig := r.IsTsig()
	if r.Rcode != dns.RcodeNotAuth || tsig == nil || tsig.Error != dns.RcodeBadTime || tsig.OtherLen != 6 {
		t.Fatalf("a query signed an hour ago: want NOTAUTH, BADTIME with the server's time:\n%v", r)
	}
	if now, err := strconv.ParseInt(tsig.OtherData, 16, 64); err != nil || abs(now-time.Now().Unix()) > 5 {
		t.Errorf("BADTIME: the other data %q is not the server's time", tsig.OtherData)
	}
	if mac := replyMAC(t, r, key); mac != tsig.MAC {
		t.Errorf("BADTIME: the reply's MAC %s is not the one of %s over it and the query's MAC, %s", tsig.MAC, key.Name, mac)
	}
}

// replyMAC returns the MAC that key gives r and its query's MAC, as RFC
// 8945 section 4.3.1 makes a response's. (miekg/dns verifies no NOTAUTH
// reply: it computes it here with the reply's own TSIG variables.)
func replyMAC(t *testing.T, r signedReply, key nameserver.Key) string {
	t.Helper()
	m := r.Copy()
	tsig := m.IsTsig()
	tsig.MAC, tsig.MACSize = "", 0
	_, mac, err := dns.TsigGenerate(m, key.Secret, r.queryMAC, false)
	if err != nil {
		t.Fatal(err)
	}
	return mac
}

// checkTSIGError checks that r is NOTAUTH with an unsigned TSIG record of
// key with the error code: no MAC, the query's id, and a Time Signed that a
// client accepts (genreport tags anything else tsig-bad-time).
func checkTSIGError(t *testing.T, r signedReply, key string, code uint16) {
	t.Helper()
	tsig := r.IsTsig()
	if r.Rcode != dns.RcodeNotAuth || tsig == nil {
		t.Fatalf("want NOTAUTH with a TSIG record of %s:\n%v", dns.RcodeToString[int(code)], r)
	}
	if tsig.Error != code || tsig.Hdr.Name != key || tsig.MACSize != 0 || tsig.OrigId != r.Id || tsig.Fudge == 0 {
		t.Errorf("want an unsigned TSIG record of %s by %s, id %d:\n%v", dns.RcodeToString[int(code)], key, r.Id, tsig)
	}
	if skew := abs(int64(tsig.TimeSigned) - time.Now().Unix()); skew > int64(tsig.Fudge) {
		t.Errorf("%s: time signed %d is %d s from now", dns.RcodeToString[int(code)], tsig.TimeSigned, skew)
	}
}

// abs returns the absolute value of n.
func abs(n int64) int64 {
	if n < 0 {
		return -n
	}
	return n
}

// TestTSIGTimeNeedsTSIG checks that a block with tsigtime but without tsig
// does not start, and that the error names the plugin, the line and why.
func TestTSIGTimeNeedsTSIG(t *testing.T) {
	_, err := tryStartCoreDNS(t, "example.com:{port:dns} {\n\ttsigtime\n\twhoami\n}\n")
	if err == nil {
		t.Fatal("started")
	}
	for _, want := range []string{"plugin/tsigtime", "Corefile:2", "no tsig plugin in this server block"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
}
