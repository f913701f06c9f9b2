package test

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/globaladdr/globaladdr/internal/etcdtest"
	"github.com/globaladdr/globaladdr/internal/nameserver"
	"github.com/globaladdr/globaladdr/internal/prereq"

	"github.com/miekg/dns"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// updateCorefile accepts ACME challenges from the LAN, signed with the test's
// TSIG key, with a lease of LEASE, and serves the external view with a hidden
// subtree. ETCD stands for etcd's endpoint.
const updateCorefile = `example.com:{port:lan} {
	prometheus :{httpport:metrics}
	tsig {
		secret KEY SECRET
		require_opcode UPDATE
	}
	cache 30
	etcdzone {
		update KEY
		update_lease LEASE
	}
	etcd example.com {
		endpoint ETCD
	}
}

example.com:{port:external} {
	cache 30
	globaladdr 203.0.113.10 {
		hide lan.example.com
	}
	etcdzone {
		ns ns1.example.net ns2.example.net
	}
	etcd example.com {
		endpoint ETCD
	}
}
`

// startUpdates starts an etcd holding a host and a hidden host, and CoreDNS
// serving updateCorefile with lease.
func startUpdates(t *testing.T, lease string) (*coreDNS, *etcdtest.Server) {
	t.Helper()
	etcd := startEtcd(t)
	putRecords(t, etcd, a("app.example.com", "192.168.0.51"), a("app.lan.example.com", "192.168.0.70"))
	c := startCoreDNS(t, strings.NewReplacer(
		"ETCD", etcd.Endpoint(),
		"KEY", nameserver.TestKey.Name,
		"SECRET", nameserver.TestKey.Secret,
		"LEASE", lease,
	).Replace(updateCorefile))
	for _, view := range []string{"lan", "external"} {
		waitServing(t, c.Addr(view))
	}
	return c, etcd
}

// sendUpdate sends m to addr over network, signed with key unless it is
// nil, and returns the reply's rcode.
func sendUpdate(t *testing.T, network, addr string, m *dns.Msg, key *nameserver.Key) int {
	t.Helper()
	c := &dns.Client{Net: network, Timeout: 5 * time.Second}
	if key != nil {
		m.SetTsig(key.Name, dns.HmacSHA256, 300, time.Now().Unix())
		c.TsigSecret = map[string]string{key.Name: key.Secret}
	}
	r, _, err := c.Exchange(m, addr)
	if err != nil {
		t.Fatalf("UPDATE: %v", err)
	}
	return r.Rcode
}

// challengeUpdate returns an UPDATE of example.com that deletes the TXT
// records of the names del, then adds add, each "NAME TEXT".
func challengeUpdate(del []string, add ...string) *dns.Msg {
	m := new(dns.Msg)
	m.SetUpdate("example.com.")
	for _, name := range del {
		m.RemoveRRset([]dns.RR{&dns.TXT{Hdr: dns.RR_Header{Name: name, Rrtype: dns.TypeTXT, Class: dns.ClassINET}}})
	}
	for _, a := range add {
		name, text, _ := strings.Cut(a, " ")
		m.Insert([]dns.RR{&dns.TXT{Hdr: dns.RR_Header{Name: name, Rrtype: dns.TypeTXT, Class: dns.ClassINET, Ttl: 60}, Txt: []string{text}}})
	}
	return m
}

// challenges returns the TXT texts of name at addr, sorted.
func challenges(t *testing.T, addr, name string) (int, []string) {
	t.Helper()
	r := query(t, "udp", addr, name, dns.TypeTXT)
	var got []string
	for _, rr := range r.Answer {
		if txt, ok := rr.(*dns.TXT); ok {
			got = append(got, strings.Join(txt.Txt, ""))
		}
	}
	slices.Sort(got)
	return r.Rcode, got
}

// expectChallenges waits up to 2 s until both views answer name's TXT
// records with want (none: NXDOMAIN).
func expectChallenges(t *testing.T, c *coreDNS, what, name string, want ...string) {
	t.Helper()
	for _, view := range []string{"lan", "external"} {
		eventually(t, 2*time.Second, view+" view: "+what, func() error {
			rcode, got := challenges(t, c.Addr(view), name)
			if want == nil && rcode != dns.RcodeNameError || !slices.Equal(got, want) {
				return fmt.Errorf("%s TXT: %s %v, want %v", name, dns.RcodeToString[rcode], got, want)
			}
			return nil
		})
	}
}

// TestUpdateChallenges writes ACME challenges as lego and cert-manager do,
// over UDP and TCP: a value; a second one beside it (a name's and its
// wildcard's tokens); one deleted and the other kept; the RRset deleted and
// a value added in one message; every change answered by both views within
// 2 s although their caches answered the name before. At the end no
// challenge key is left in etcd.
func TestUpdateChallenges(t *testing.T) {
	c, etcd := startUpdates(t, "3h")
	lan := c.Addr("lan")
	const name = "_acme-challenge.app.example.com."
	key := &nameserver.TestKey
	expectChallenges(t, c, "no challenge yet", name)

	steps := []struct {
		what    string
		network string
		msg     *dns.Msg
		want    []string
	}{
		{"one value", "udp", challengeUpdate(nil, name+" token-one"), []string{"token-one"}},
		{"a second value", "tcp", challengeUpdate(nil, name+" token-two"), []string{"token-one", "token-two"}},
		{"one value deleted", "udp", deleteValue(name, "token-one"), []string{"token-two"}},
		{"the RRset deleted and a value added", "tcp", challengeUpdate([]string{name}, name+" token-three"), []string{"token-three"}},
		{"the RRset deleted", "udp", challengeUpdate([]string{name}), nil},
	}
	for _, s := range steps {
		if rcode := sendUpdate(t, s.network, lan, s.msg, key); rcode != dns.RcodeSuccess {
			t.Fatalf("%s: %s", s.what, dns.RcodeToString[rcode])
		}
		expectChallenges(t, c, s.what, name, s.want...)
	}
	if keys := challengeKeys(t, etcd); len(keys) > 0 {
		t.Errorf("challenge keys left in etcd: %v", keys)
	}
}

// deleteValue returns an UPDATE that deletes name's TXT record text.
func deleteValue(name, text string) *dns.Msg {
	m := new(dns.Msg)
	m.SetUpdate("example.com.")
	m.Remove([]dns.RR{&dns.TXT{Hdr: dns.RR_Header{Name: name, Rrtype: dns.TypeTXT, Class: dns.ClassINET}, Txt: []string{text}}})
	return m
}

// challengeKeys returns the etcd keys of ACME challenges.
func challengeKeys(t *testing.T, etcd *etcdtest.Server) []string {
	t.Helper()
	resp, err := etcd.Client().Get(context.Background(), "/skydns/", clientv3.WithPrefix(), clientv3.WithKeysOnly())
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, kv := range resp.Kvs {
		if strings.Contains(string(kv.Key), "/_acme-challenge") {
			keys = append(keys, string(kv.Key))
		}
	}
	return keys
}

// TestUpdateHiddenChallenge writes the challenge of a hidden name: the
// external view answers it, and the hidden names above it answer NODATA
// while it lives (RFC 8020), and nothing else about the hidden subtree
// shows; once it is deleted they are NXDOMAIN again.
func TestUpdateHiddenChallenge(t *testing.T) {
	c, _ := startUpdates(t, "3h")
	external := c.Addr("external")
	const name = "_acme-challenge.app.lan.example.com."
	rcodes := func(want map[string]int) func() error {
		return func() error {
			for q, rcode := range want {
				n, qt, _ := strings.Cut(q, " ")
				r := query(t, "udp", external, n, dns.StringToType[qt])
				if r.Rcode != rcode || rcode == dns.RcodeSuccess && qt != "TXT" && len(r.Answer) > 0 {
					return fmt.Errorf("%s: %s %v, want %s and no answer", q, dns.RcodeToString[r.Rcode], r.Answer, dns.RcodeToString[rcode])
				}
			}
			return nil
		}
	}
	eventually(t, 2*time.Second, "before", rcodes(map[string]int{"app.lan.example.com. A": dns.RcodeNameError, "lan.example.com. A": dns.RcodeNameError}))
	if rcode := sendUpdate(t, "udp", c.Addr("lan"), challengeUpdate(nil, name+" hidden-token"), &nameserver.TestKey); rcode != dns.RcodeSuccess {
		t.Fatal(dns.RcodeToString[rcode])
	}
	expectChallenges(t, c, "the hidden name's challenge", name, "hidden-token")
	eventually(t, 2*time.Second, "while the challenge lives", rcodes(map[string]int{
		"app.lan.example.com. A":               dns.RcodeSuccess,
		"app.lan.example.com. TXT":             dns.RcodeSuccess,
		"lan.example.com. A":                   dns.RcodeSuccess,
		"db.lan.example.com. A":                dns.RcodeNameError,
		"x.app.lan.example.com. A":             dns.RcodeNameError,
		"_acme-challenge.lan.example.com. TXT": dns.RcodeNameError,
	}))
	if rcode := sendUpdate(t, "udp", c.Addr("lan"), challengeUpdate([]string{name}), &nameserver.TestKey); rcode != dns.RcodeSuccess {
		t.Fatal(dns.RcodeToString[rcode])
	}
	eventually(t, 2*time.Second, "after", rcodes(map[string]int{"app.lan.example.com. A": dns.RcodeNameError, "lan.example.com. A": dns.RcodeNameError}))
}

// TestUpdateLease writes a challenge that its client never deletes: it is
// gone when its lease ends.
func TestUpdateLease(t *testing.T) {
	t.Parallel()
	c, etcd := startUpdates(t, "10s")
	const name = "_acme-challenge.app.example.com."
	if rcode := sendUpdate(t, "udp", c.Addr("lan"), challengeUpdate(nil, name+" forgotten"), &nameserver.TestKey); rcode != dns.RcodeSuccess {
		t.Fatal(dns.RcodeToString[rcode])
	}
	expectChallenges(t, c, "the challenge", name, "forgotten")
	eventually(t, 30*time.Second, "the lease's end", func() error {
		if keys := challengeKeys(t, etcd); len(keys) > 0 {
			return fmt.Errorf("keys %v", keys)
		}
		return nil
	})
	expectChallenges(t, c, "after the lease's end", name)
}

// TestUpdateRefused sends UPDATEs that must write nothing: unsigned, with a
// wrong secret, of an A record, of a TXT record that is no challenge, to the
// external view, of a zone the block does not serve, malformed, with a
// prerequisite that fails, of too many records: each is refused, and etcd's
// revision does not move. The first five go through nsupdate, as a user would send them.
func TestUpdateRefused(t *testing.T) {
	c, etcd := startUpdates(t, "3h")
	lan, external := c.Addr("lan"), c.Addr("external")
	rev := currentRevision(t, etcd)
	wrong := nameserver.Key{Name: nameserver.TestKey.Name, Secret: "bm90IHRoZSBzZWNyZXQgb2YgdGhlIGtleSBhdCBhbGwh"}
	for _, tc := range []struct {
		what, addr string
		key        *nameserver.Key
		commands   string
		want       string
	}{
		{"unsigned", lan, nil, `update add _acme-challenge.app.example.com 60 TXT "x"`, "REFUSED"},
		{"a wrong secret", lan, &wrong, `update add _acme-challenge.app.example.com 60 TXT "x"`, "NOTAUTH"},
		{"an A record", lan, &nameserver.TestKey, `update add app.example.com 60 A 192.168.0.99`, "REFUSED"},
		{"a TXT record that is no challenge", lan, &nameserver.TestKey, `update add app.example.com 60 TXT "x"`, "REFUSED"},
		{"to the external view", external, &nameserver.TestKey, `update add _acme-challenge.app.example.com 60 TXT "x"`, "REFUSED"},
	} {
		out := nsupdate(t, tc.addr, tc.key, "zone example.com\n"+tc.commands+"\nsend\n")
		if !strings.Contains(out, tc.want) {
			t.Errorf("%s: nsupdate says %q, want %s", tc.what, out, tc.want)
		}
	}
	other := new(dns.Msg)
	other.SetUpdate("example.org.")
	other.Insert([]dns.RR{&dns.TXT{Hdr: dns.RR_Header{Name: "_acme-challenge.example.org.", Rrtype: dns.TypeTXT, Class: dns.ClassINET, Ttl: 60}, Txt: []string{"x"}}})
	prereq := challengeUpdate(nil, "_acme-challenge.app.example.com. x")
	prereq.NameUsed([]dns.RR{&dns.ANY{Hdr: dns.RR_Header{Name: "_acme-challenge.app.example.com."}}})
	malformed := challengeUpdate(nil, "_acme-challenge.app.example.com. x")
	malformed.Ns[0].Header().Class = dns.ClassCHAOS
	var values []string
	for i := range 65 {
		values = append(values, fmt.Sprintf("_acme-challenge.app.example.com. token-%d", i))
	}
	oversized := challengeUpdate(nil, values...)
	for _, tc := range []struct {
		what  string
		msg   *dns.Msg
		rcode int
	}{
		{"a zone the block does not serve", other, dns.RcodeRefused},
		{"a failing prerequisite", prereq, dns.RcodeNameError},
		{"a malformed update", malformed, dns.RcodeFormatError},
		{"an oversized update", oversized, dns.RcodeRefused},
	} {
		if rcode := sendUpdate(t, "tcp", lan, tc.msg, &nameserver.TestKey); rcode != tc.rcode {
			t.Errorf("%s: %s, want %s", tc.what, dns.RcodeToString[rcode], dns.RcodeToString[tc.rcode])
		}
	}
	if now := currentRevision(t, etcd); now != rev {
		t.Errorf("etcd's revision moved from %d to %d: something was written", rev, now)
	}
	body := scrape(t, "http://"+c.Addr("metrics")+"/metrics")
	for _, result := range []string{"denied", "disabled", "prerequisite", "malformed"} {
		if !strings.Contains(body, `coredns_etcdzone_updates_total{result="`+result+`"`) {
			t.Errorf("no UPDATE counted as %s", result)
		}
	}
}

// nsupdate runs nsupdate (Debian package bind9-dnsutils) against addr with
// commands, signed with key unless it is nil, and returns what it printed.
func nsupdate(t *testing.T, addr string, key *nameserver.Key, commands string) string {
	t.Helper()
	bin := prereq.Program(t, "nsupdate", "bind9-dnsutils")
	host, port, _ := strings.Cut(addr, ":")
	args := []string{}
	if key != nil {
		args = append(args, "-y", "hmac-sha256:"+strings.TrimSuffix(key.Name, ".")+":"+key.Secret)
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdin = strings.NewReader(fmt.Sprintf("server %s %s\n%s", host, port, commands))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.Run() // nsupdate fails when the update does; its output says why
	return out.String()
}
