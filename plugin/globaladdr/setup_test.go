package globaladdr

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/coredns/caddy"
	"github.com/globaladdr/globaladdr/internal/setuptest"
)

func TestSetup(t *testing.T) {
	tests := []setuptest.Case{
		{`globaladdr 203.0.113.10`, false, ""},
		{`globaladdr 203.0.113.10 203.0.113.11 2001:db8::10`, false, ""},
		{`globaladdr 2001:db8::10`, false, ""},
		{"globaladdr 203.0.113.10 {\n ttl 900\n}", false, ""},
		{"globaladdr 203.0.113.10 {\n ttl 0\n}", false, ""},
		{"globaladdr 203.0.113.10 {\n ttl 2147483647\n}", false, ""},
		{"globaladdr 203.0.113.10 {\n internal 10.0.0.0/8 192.0.2.7\n}", false, ""},
		{"globaladdr 203.0.113.10 {\n map 192.168.0.51 198.51.100.7\n map 192.168.1.0/24 198.51.100.0/24\n map fd00::/64 2001:db8:1::/64\n}", false, ""},
		{"globaladdr 203.0.113.10 {\n map 192.168.0.0/16 198.51.100.7\n}", false, ""},
		{"globaladdr 203.0.113.10 {\n hide internal.example.com admin.example.com.\n}", false, ""},
		{"globaladdr 203.0.113.10 {\n keep_registry\n}", false, ""},
		{"globaladdr 203.0.113.10 {\n expose marked\n}", false, ""},
		{"globaladdr 203.0.113.10 {\n expose unmarked\n}", false, ""},
		{"globaladdr 203.0.113.10 {\n expose\n}", true, "expose needs marked or unmarked"},
		{"globaladdr 203.0.113.10 {\n expose all\n}", true, "expose needs marked or unmarked"},
		// Maps alone (1:1 NAT of a prefix); or with addresses of one family.
		{"globaladdr {\n map 192.168.0.0/24 198.51.100.0/24\n}", false, ""},
		{"globaladdr {\n map 192.168.0.0/24 198.51.100.0/24\n map fd00::/64 2001:db8:1::/64\n ttl 900\n}", false, ""},
		{"globaladdr 2001:db8::10 {\n map 192.168.0.0/24 198.51.100.0/24\n}", false, ""},

		{`globaladdr`, true, `no global address given: give ADDRESS arguments, a from source, a map or a tunnel`},
		{"globaladdr {\n}", true, "Testfile:2 - Error during parsing: no global address given"},
		{"globaladdr {\n credentials root secret\n}", true, "Testfile:3 - Error during parsing: no global address given"},
		{"globaladdr 203.0.113.10 {\n from file /run/wan\n}", true, `Testfile:2 - Error during parsing: "from" can't be mixed with ADDRESS arguments`},
		{"globaladdr {\n ttl 900\n hide secret.example.com\n}", true, `no global address given`},
		{`globaladdr 203.0.113`, true, `"203.0.113" is not an IPv4 or IPv6 address`},
		{`globaladdr fe80::1%eth0`, true, `"fe80::1%eth0" is not an IPv4 or IPv6 address`},
		{`globaladdr ::ffff:203.0.113.10`, true, `"::ffff:203.0.113.10" is not an IPv4 or IPv6 address`},
		{`globaladdr 192.168.0.1`, true, `"192.168.0.1": global address is itself internal`},
		{"globaladdr 203.0.113.10\nglobaladdr 203.0.113.11", true, `globaladdr is given twice in this server block`},
		{"globaladdr 203.0.113.10 {\n ttl\n}", true, `ttl needs one SECONDS, after "ttl"`},
		{"globaladdr 203.0.113.10 {\n ttl -1\n}", true, `ttl "-1" is not a number of seconds from 0 to 2147483647`},
		{"globaladdr 203.0.113.10 {\n ttl 2147483648\n}", true, `ttl "2147483648" is not a number`},
		{"globaladdr 203.0.113.10 {\n ttl 5m\n}", true, `ttl "5m" is not a number`},
		{"globaladdr 203.0.113.10 {\n ttl 60 60\n}", true, `ttl needs one SECONDS, after "60"`},
		{"globaladdr 203.0.113.10 {\n internal\n}", true, `internal needs at least one CIDR, after "internal"`},
		{"globaladdr 203.0.113.10 {\n internal 10.0.0.0/33\n}", true, `"10.0.0.0/33" is not an address prefix`},
		{"globaladdr 203.0.113.10 {\n internal 203.0.113.0/24\n}", true, `"203.0.113.10": global address is itself internal`},
		{"globaladdr 203.0.113.10 {\n map fd00:0:0:1::/64 from interface eth0\n}", false, ""},
		{"globaladdr {\n map fd00:0:0:1::/64 from file /run/prefix\n map fd00:0:0:2::/64 from etcd /prefix\n}", false, ""},
		{"globaladdr {\n from stun stun.example.net\n map fd00:0:0:1::/64 from interface eth0\n}", false, ""},
		{"globaladdr 203.0.113.10 {\n map 10.0.0.0/8 from interface eth0\n}", true, `map 10.0.0.0/8 from interface: a prefix from a source is for IPv6 only`},
		{"globaladdr 203.0.113.10 {\n map fd00::/64 from stun a\n}", true, `map FROM from needs a prefix source: interface NAME, file PATH or etcd KEY, after "a"`},
		{"globaladdr 203.0.113.10 {\n map fd00::/64 from file\n}", true, `from needs a source and its argument`},
		{"globaladdr 203.0.113.10 {\n map fd00::/64 from\n}", true, `map FROM from needs a prefix source`},
		{"globaladdr 203.0.113.10 {\n map 192.168.0.51\n}", true, `map needs FROM and TO, after "192.168.0.51"`},
		{"globaladdr 203.0.113.10 {\n map 10.0.0.0/8\n}", true, `map needs FROM and TO, after "10.0.0.0/8"`},
		{"globaladdr 203.0.113.10 {\n map\n}", true, `map needs FROM and TO, after "map"`},
		{"globaladdr 203.0.113.10 {\n map 192.168.0.51 198.51.100.7 198.51.100.8\n}", true, `map needs FROM and TO, after "198.51.100.8"`},
		{"globaladdr 203.0.113.10 {\n map 192.168.0.51 2001:db8::1\n}", true, `"2001:db8::1" and 192.168.0.51/32 are of different address families`},
		{"globaladdr 203.0.113.10 {\n map 192.168.1.0/24 198.51.100.0/25\n}", true, `"198.51.100.0/25" is not of 192.168.1.0/24's length /24`},
		{"globaladdr 203.0.113.10 {\n map 192.168.1.0/24 10.1.0.0/24\n}", true, `"10.1.0.0/24": global address is itself internal`},
		{"globaladdr 203.0.113.10 {\n map nonsense 198.51.100.7\n}", true, `"nonsense" is not an IPv4 or IPv6 address`},
		{"globaladdr 203.0.113.10 {\n hide\n}", true, `hide needs at least one NAME, after "hide"`},
		{"globaladdr 203.0.113.10 {\n hide bad..name\n}", true, `"bad..name" is not a domain name`},
		{"globaladdr 203.0.113.10 {\n keep_registry yes\n}", true, `keep_registry takes no argument, after "yes"`},
		{"globaladdr 203.0.113.10 {\n rewrite everything\n}", true, `unknown property "rewrite"`},
		{"globaladdr {\n tunnel abc.cfargotunnel.com\n}", false, ""},
		{"globaladdr 203.0.113.10 {\n tunnel relay.example.net.\n}", false, ""},
		{"globaladdr {\n tunnel\n}", true, `tunnel needs one HOST`},
		{"globaladdr {\n tunnel 198.51.100.7\n}", true, `tunnel "198.51.100.7" is an address`},
		{"globaladdr {\n tunnel *.example.net\n}", true, `tunnel "*.example.net" is not a host name`},
		{"globaladdr {\n tunnel localhost\n}", true, `tunnel "localhost" is not a host name`},
		{"globaladdr {\n tunnel a.example.net\n tunnel b.example.net\n}", true, `tunnel given twice`},
		{"globaladdr {\n tunnel relay.example.net marked\n}", false, ""},
		{"globaladdr {\n tunnel relay.example.net all\n}", true, `the word after HOST can only be marked`},
		{"globaladdr {\n tunnel relay.example.net marked now\n}", true, `tunnel needs one HOST`},
	}
	setuptest.Run(t, "globaladdr", setup, tests)
}

func TestSetupErrorNamesLine(t *testing.T) {
	c := caddy.NewTestController("dns", "globaladdr 203.0.113.10 {\n ttl 900\n\n map 192.168.0.51 nonsense\n}")
	err := setup(c)
	if err == nil || !strings.Contains(err.Error(), "Testfile:4 ") || !strings.Contains(err.Error(), `"nonsense"`) {
		t.Fatalf("expected an error at Testfile:4 naming \"nonsense\", got %v", err)
	}
}

func TestParse(t *testing.T) {
	c := caddy.NewTestController("dns", `globaladdr 203.0.113.10 2001:db8::10 203.0.113.10 {
		ttl 900
		internal 10.0.0.0/8
		map 10.1.0.0/16 198.51.100.0/16
		map 10.1.2.3 192.0.2.1
		hide Secret.Example.com
		keep_registry
	}`)
	g, err := parse(c)
	if err != nil {
		t.Fatal(err)
	}
	addrs := g.addrs.Load()
	rules := g.policy.Rules(addrs)
	if !strings.Contains(rules, "\nttl 900\n") || !strings.Contains(rules, "\nkeep_registry\n") {
		t.Errorf("want ttl 900 and keep_registry:\n%s", rules)
	}
	if !strings.HasPrefix(rules, "internal 10.0.0.0/8\n") {
		t.Errorf("want internal only 10.0.0.0/8 (the default is replaced):\n%s", rules)
	}
	if !strings.Contains(rules, "\nmap 10.1.2.3/32 192.0.2.1/32\nmap 10.1.0.0/16 198.51.0.0/16\n") {
		t.Errorf("want the two maps, the most specific first:\n%s", rules)
	}
	if strings.Count(rules, "\nhide ") != 1 || !strings.Contains(rules, "\nhide secret.example.com.\n") {
		t.Errorf("want hide secret.example.com. alone:\n%s", rules)
	}
	if v4, v6 := addrs.Addrs(); len(v4) != 1 || len(v6) != 1 {
		t.Errorf("global addresses %v %v, want one of each family (duplicates removed)", v4, v6)
	}
	if !g.Ready() {
		t.Error("static addresses: want ready")
	}
}

func TestParseDefaults(t *testing.T) {
	g, err := parse(caddy.NewTestController("dns", `globaladdr 203.0.113.10`))
	if err != nil {
		t.Fatal(err)
	}
	if rules := g.policy.Rules(g.addrs.Load()); strings.Contains(rules, "\nttl ") {
		t.Errorf("want no ttl (keep the backend's):\n%s", rules)
	}
	for _, a := range []string{"10.1.2.3", "172.16.0.1", "192.168.0.51", "100.64.0.1", "127.0.0.1", "169.254.1.1", "fd00::1", "fe80::1", "::1"} {
		if !g.policy.IsInternal(netip.MustParseAddr(a)) {
			t.Errorf("%s is not internal by default", a)
		}
	}
	for _, a := range []string{"203.0.113.10", "8.8.8.8", "2001:db8::1", "172.32.0.1"} {
		if g.policy.IsInternal(netip.MustParseAddr(a)) {
			t.Errorf("%s is internal by default", a)
		}
	}
}
