package source

import (
	"fmt"
	"strings"
	"testing"

	"github.com/coredns/caddy"
	"github.com/coredns/coredns/core/dnsserver"
	"github.com/globaladdr/globaladdr/internal/testpki"
)

func TestSourceSetup(t *testing.T) {
	pair := testpki.NewCA(t, "globaladdr test").Issue(t, "client")
	cert, key := pair.CertFile, pair.KeyFile
	tests := []struct {
		input string
		// wantErr is "" for a valid Corefile; else the error names
		// Testfile:line and contains wantErr.
		line    int
		wantErr string
	}{
		{"globaladdr {\n from file /run/wan\n}", 0, ""},
		{"globaladdr {\n from etcd /globaladdr/wan\n}", 0, ""},
		{"globaladdr {\n from file /run/wan\n from file /run/wan6\n from etcd /wan\n ttl 900\n}", 0, ""},
		{"globaladdr {\n from etcd /wan\n endpoint http://10.0.0.1:2379 https://etcd.example.com:2379 10.0.0.2:2379 unix:///run/etcd.sock\n}", 0, ""},
		{"globaladdr {\n from etcd /wan\n credentials root secret\n}", 0, ""},
		{"globaladdr {\n from etcd /wan\n tls\n}", 0, ""},
		{"globaladdr {\n from etcd /wan\n tls " + cert + "\n}", 0, ""},
		{"globaladdr {\n from etcd /wan\n tls " + cert + " " + key + " " + cert + "\n}", 0, ""},
		{"globaladdr {\n endpoint http://10.0.0.1:2379\n from etcd /wan\n}", 0, ""},
		{"globaladdr {\n from stun stun.example.net 192.0.2.1:3479 [2001:db8::1]:3478\n every 2s\n}", 0, ""},
		{"globaladdr {\n every 1s\n from https https://echo.example.net/ https://trace.example.net/cdn-cgi/trace\n https_ca " + cert + "\n}", 0, ""},
		{"globaladdr {\n from interface ppp0\n from stun stun.example.net\n}", 0, ""},

		{"globaladdr {\n from\n}", 2, `from needs a source and its argument: from file PATH, from etcd KEY or from interface NAME, after "from"`},
		{"globaladdr {\n from file\n}", 2, `from needs a source and its argument: from file PATH, from etcd KEY or from interface NAME, after "file"`},
		{"globaladdr {\n from file /a /b\n}", 2, `from needs a source and its argument: from file PATH, from etcd KEY or from interface NAME, after "/b"`},
		{"globaladdr {\n from http://etcd:2379/wan\n}", 2, `unknown source "http://etcd:2379/wan"`},
		{"globaladdr {\n from consul /wan\n}", 2, `unknown source "consul": want one of file, etcd, interface, `},
		{"globaladdr {\n from file /a\n ttl 60\n from file /a\n}", 4, `"/a": the source file /a is given twice`},
		{"globaladdr {\n from file /a\n endpoint http://10.0.0.1:2379\n}", 3, `"endpoint" is for from etcd, and there is no from etcd line`},
		{"globaladdr {\n from file /a\n tls\n credentials root secret\n}", 3, `"tls" is for from etcd`},
		{"globaladdr {\n from etcd /wan\n endpoint\n}", 3, `endpoint needs at least one URL, after "endpoint"`},
		{"globaladdr {\n from etcd /wan\n endpoint ftp://etcd:2379\n}", 3, `"ftp://etcd:2379" is not an etcd endpoint URL`},
		{"globaladdr {\n from etcd /wan\n endpoint etcd.example.com\n}", 3, `"etcd.example.com" is not an etcd endpoint URL`},
		{"globaladdr {\n from etcd /wan\n endpoint http://\n}", 3, `"http://" is not an etcd endpoint URL`},
		{"globaladdr {\n from etcd /wan\n credentials root\n}", 3, `credentials needs USER and PASSWORD, after "root"`},
		{"globaladdr {\n from etcd /wan\n credentials\n}", 3, `credentials needs USER and PASSWORD, after "credentials"`},
		{"globaladdr {\n from etcd /wan\n tls /missing/cert.pem /missing/key.pem\n}", 3, `"tls /missing/cert.pem /missing/key.pem": `},
		{"globaladdr {\n from etcd /wan\n tls /missing/ca.pem\n}", 3, `"tls /missing/ca.pem": `},
		{"globaladdr {\n from etcd /wan\n tls a b c d\n}", 3, "maximum of three arguments"},
		{"globaladdr {\n from stun\n}", 2, `stun needs at least one SERVER (host[:port]), after "stun"`},
		{"globaladdr {\n from stun stun.example.net:0\n}", 2, `"stun.example.net:0" is not a STUN server`},
		{"globaladdr {\n from https http://echo.example.net/\n}", 2, `"http://echo.example.net/" is not an https:// URL`},
		{"globaladdr {\n from https\n}", 2, `https needs at least one URL`},
		{"globaladdr {\n from interface\n}", 2, `from needs a source and its argument`},
		{"globaladdr {\n from stun a b\n every 500ms\n}", 3, `every "500ms" is not a duration of at least 1s`},
		{"globaladdr {\n from stun a b\n every\n}", 3, `every needs one DURATION`},
		{"globaladdr {\n from file /a\n every 10s\n}", 3, `"every" is for the polled sources`},
		{"globaladdr {\n from interface eth0\n every 10s\n}", 3, `"every" is for the polled sources`},
		{"globaladdr {\n from stun a\n https_ca " + cert + "\n}", 3, `"https_ca" is for from https, and there is no from https line`},
		{"globaladdr {\n from https https://e/\n https_ca /missing/ca.pem\n}", 3, `https_ca: open /missing/ca.pem`},
		{"globaladdr {\n from https https://e/\n https_ca " + key + "\n}", 3, `holds no PEM certificate`},
		{"globaladdr {\n from stun a\n from stun a\n}", 3, `the source stun a is given twice`},
		{"globaladdr {\n uplink wan1 from https https://echo.example.net/\n uplink wan1 via 192.168.1.2\n uplink wan1 check tcp 198.51.100.1:443\n uplink wan2 from stun stun.example.net\n uplink wan2 priority 2\n failover after 2\n failback after 10\n every 2s\n}", 0, ""},
		{"globaladdr {\n uplink wan1 static 203.0.113.10\n uplink wan1 check stun stun.example.net\n uplink wan1 via eth1\n from interface eth0\n}", 0, ""},
		{"globaladdr {\n uplink wan1 static 203.0.113.10\n uplink wan1 check https https://health.example.net/\n every 10s\n}", 0, ""},
		{"globaladdr {\n uplink\n}", 2, `uplink needs a NAME and a property (from, static, via, check, priority), after "uplink"`},
		{"globaladdr {\n uplink wan1\n}", 2, `uplink needs a NAME and a property`},
		{"globaladdr {\n uplink WAN1 from stun a\n}", 2, `uplink "WAN1": a name is 1 to 32 lower-case letters`},
		{"globaladdr {\n uplink wan1 speed 10\n}", 2, `uplink wan1: unknown property "speed": want from, static, via, check or priority`},
		{"globaladdr {\n uplink wan1 via 192.168.1.2\n}", 2, `uplink wan1 has no addresses: give it a from line`},
		{"globaladdr {\n uplink wan1 from stun a\n uplink wan1 via\n}", 3, `uplink wan1 via needs one local ADDRESS or INTERFACE, after "via"`},
		{"globaladdr {\n uplink wan1 from stun a\n uplink wan1 via eth0\n uplink wan1 via eth1\n}", 4, `uplink wan1: via is given twice`},
		{"globaladdr {\n uplink wan1 from stun a\n uplink wan1 priority first\n}", 3, `uplink wan1 priority "first": N is a number from 1 (first) to 100`},
		{"globaladdr {\n uplink wan1 from stun a\n uplink wan1 priority 0\n}", 3, `uplink wan1 priority "0"`},
		{"globaladdr {\n uplink wan1 from stun a\n uplink wan1 priority 1\n uplink wan1 priority 2\n}", 4, `uplink wan1: priority is given twice`},
		{"globaladdr {\n uplink wan1 from stun a\n uplink wan1 check ping 198.51.100.1\n}", 3, `unknown check "ping": want https, stun or tcp`},
		{"globaladdr {\n uplink wan1 from stun a\n uplink wan1 check tcp 198.51.100.1\n}", 3, `"198.51.100.1" is not a TCP HOST:PORT`},
		{"globaladdr {\n uplink wan1 from stun a\n uplink wan1 check https http://198.51.100.1/\n}", 3, `"http://198.51.100.1/" is not an https:// URL`},
		{"globaladdr {\n uplink wan1 from stun a\n uplink wan1 check tcp\n}", 3, `check needs one of https URL, stun SERVER or tcp HOST:PORT, after "tcp"`},
		{"globaladdr {\n uplink wan1 from stun a\n uplink wan1 check tcp a:1\n uplink wan1 check tcp b:1\n}", 4, `uplink wan1: check is given twice`},
		{"globaladdr {\n uplink wan1 static\n}", 2, `uplink wan1 static needs at least one ADDRESS, after "static"`},
		{"globaladdr {\n uplink wan1 static 203.0.113.300\n}", 2, `uplink wan1 static: "203.0.113.300" is not an IPv4 or IPv6 address`},
		{"globaladdr {\n uplink wan1 from stun a\n uplink wan2 from stun a\n}", 3, `the source stun a is given twice`},
		{"globaladdr {\n uplink wan1 from stun a\n failover 3\n}", 3, `failover needs after ROUNDS (failover after 3), after "3"`},
		{"globaladdr {\n uplink wan1 from stun a\n failback after 0\n}", 3, `failback after "0": ROUNDS is a number of rounds from 1 to 1000`},
		{"globaladdr {\n uplink wan1 from stun a\n failover after 2\n failover after 3\n}", 4, `failover is given twice`},
		{"globaladdr {\n from stun a\n failover after 2\n}", 3, `"failover" is for the uplinks, and there is no uplink line`},
		{"globaladdr {\n uplink wan1 static 203.0.113.10\n every 10s\n}", 3, `"every" is for the polled sources`},
		{"globaladdr {\n from file /a\n from etcd\n}", 3, `from needs a source and its argument: from file PATH, from etcd KEY or from interface NAME, after "etcd"`},
	}
	for _, tc := range tests {
		_, err := newSet(caddy.NewTestController("dns", tc.input))
		if tc.wantErr == "" {
			if err != nil {
				t.Errorf("%q: unexpected error %v", tc.input, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("%q: no error, want one at line %d containing %q", tc.input, tc.line, tc.wantErr)
			continue
		}
		where := fmt.Sprintf("Testfile:%d ", tc.line)
		for _, want := range []string{where, tc.wantErr} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%q: error %q does not contain %q", tc.input, err, want)
			}
		}
	}
}

func TestSourceSetupParsed(t *testing.T) {
	c := caddy.NewTestController("dns", `globaladdr {
		from file wan
		from file /etc/wan6
		from etcd /globaladdr/wan
		from etcd /globaladdr/wan6
		endpoint http://10.0.0.1:2379 http://10.0.0.2:2379
		credentials root secret
	}`)
	dnsserver.GetConfig(c).Root = "/etc/coredns"
	set, err := newSet(c)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range set.feeds {
		names = append(names, f.src.String())
	}
	if got, want := strings.Join(names, ", "), "file /etc/coredns/wan, file /etc/wan6, etcd /globaladdr/wan, etcd /globaladdr/wan6"; got != want {
		t.Errorf("sources %s, want %s (a relative path under root)", got, want)
	}
	e := set.etcd
	if e == nil || !e.cfg.Given() || strings.Join(e.cfg.Endpoints, " ") != "http://10.0.0.1:2379 http://10.0.0.2:2379" || e.cfg.Username != "root" || e.cfg.Password != "secret" {
		t.Errorf("etcd connection %+v, want globaladdr's own to the two endpoints, with the credentials", e)
	}
	if set.feeds[2].src.(*etcdSource).conn != e || set.feeds[3].src.(*etcdSource).conn != e {
		t.Error("the etcd sources of a block should share one connection")
	}

	set, err = newSet(caddy.NewTestController("dns", "globaladdr {\n from etcd /wan\n}"))
	if err != nil {
		t.Fatal(err)
	}
	if e := set.etcd; e.cfg.Given() {
		t.Errorf("etcd connection %+v, want the block's etcd plugin's, else the default endpoint", e)
	}
}

func TestRouterSourceSetup(t *testing.T) {
	tests := []struct {
		input   string
		wantErr string // "" for a valid Corefile; else the error at line 2 contains it
		names   string // the probers' names of a valid one
	}{
		{"from upnp", "", "upnp"},
		{"from upnp http://192.168.0.1:5000/rootDesc.xml", "", "upnp http://192.168.0.1:5000/rootDesc.xml"},
		{"from natpmp", "", "natpmp"},
		{"from natpmp 192.168.0.1", "", "natpmp 192.168.0.1"},
		{"from pcp", "", "pcp"},
		{"from pcp 192.168.0.1", "", "pcp 192.168.0.1"},
		{"from pcp fd00::1", "", "pcp fd00::1"},

		{"from upnp a b", `upnp takes at most one URL, the device description's, after "b"`, ""},
		{"from upnp 192.168.0.1:5000", `upnp URL: "192.168.0.1:5000" is not an http URL`, ""},
		{"from upnp ftp://192.168.0.1/rootDesc.xml", `is not an http URL`, ""},
		{"from upnp http:///rootDesc.xml", `is not an http URL`, ""},
		{"from natpmp 192.168.0.1 192.168.0.2", `natpmp takes at most one GATEWAY, after "192.168.0.2"`, ""},
		{"from natpmp fd00::1", `natpmp GATEWAY: "fd00::1" is not an IPv4 address`, ""},
		{"from natpmp router.lan", `natpmp GATEWAY: "router.lan" is not an IPv4 address`, ""},
		{"from pcp fe80::1%eth0", `pcp SERVER: "fe80::1%eth0" is not an IPv4 or IPv6 address`, ""},
		{"from pcp 1.2.3.4 5.6.7.8", `pcp takes at most one SERVER`, ""},
	}
	for _, tc := range tests {
		input := "globaladdr {\n " + tc.input + "\n}"
		set, err := newSet(caddy.NewTestController("dns", input))
		switch {
		case tc.wantErr == "" && err != nil:
			t.Errorf("%q: unexpected error %v", tc.input, err)
		case tc.wantErr == "":
			var names []string
			for _, f := range set.feeds {
				names = append(names, f.line.names...)
			}
			if got := strings.Join(names, ", "); got != tc.names {
				t.Errorf("%q: probers %s, want %s", tc.input, got, tc.names)
			}
		case err == nil:
			t.Errorf("%q: no error, want one containing %q", tc.input, tc.wantErr)
		case !strings.Contains(err.Error(), "Testfile:2 ") || !strings.Contains(err.Error(), tc.wantErr):
			t.Errorf("%q: error %q, want one at Testfile:2 containing %q", tc.input, err, tc.wantErr)
		}
	}
}
