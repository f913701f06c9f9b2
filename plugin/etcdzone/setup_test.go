package etcdzone

import (
	"testing"

	"github.com/globaladdr/globaladdr/internal/setuptest"
)

func TestSetup(t *testing.T) {
	tests := []setuptest.Case{
		{"etcdzone", false, ""},
		{"etcdzone {\n ns ns1.example.net\n}", false, ""},
		{"etcdzone example.com example.org {\n ns ns1.example.net ns2.example.net.\n ns ns3.example.net\n}", false, ""},
		{"etcdzone {\n ns \"ns1.example.net ns2.example.net\"\n}", false, ""},
		{"etcdzone {\n ns ns1.example.net\n mname primary.example.com\n rname admin.example.com\n ttl 0\n refresh 1h\n retry 600\n expire 2147483647\n minimum 30s\n}", false, ""},
		{"etcdzone {\n delegate lab.example.com ns1.lab.example.com ns2.example.net\n glue ns1.lab.example.com 192.0.2.53 2001:db8::53\n}", false, ""},
		{"etcdzone {\n update acme.example.com. other.example.com\n update_lease 2h\n}", false, ""},
		{"etcdzone {\n update_allow k.example.com. *.lab.example.com A AAAA\n update_allow k.example.com. @ TXT\n update_allow k.example.com. * *\n}", false, ""},
		{"etcdzone {\n journal 100000 16MiB\n}", false, ""},
		{"etcdzone {\n journal 0\n}", false, ""},
		{"etcdzone {\n journal 500 65536\n}", false, ""},
		{"etcdzone {\n serial_key /globaladdr/serial/primary/\n}", false, ""},

		{"etcdzone {\n ns ns1.example.net\n}\netcdzone", true, `etcdzone is given twice in this server block`},
		{"etcdzone {\n ns\n}", true, `Wrong argument count`},
		{"etcdzone {\n ns bad..name\n}", true, `"bad..name" is not a domain name`},
		{"etcdzone {\n ns \"ns1.example.net bad..name\"\n}", true, `"bad..name" is not a domain name`},
		{"etcdzone {\n ns .\n}", true, `"." is not a domain name`},
		{"etcdzone bad..zone", true, `"bad..zone" is not a domain name`},
		{"etcdzone {\n mname\n}", true, `Wrong argument count`},
		{"etcdzone {\n mname a.example.net b.example.net\n}", true, `Wrong argument count`},
		{"etcdzone {\n rname bad..name\n}", true, `"bad..name" is not a domain name`},
		{"etcdzone {\n ttl -1\n}", true, `ttl "-1" is not a number of seconds from 0 to 2147483647`},
		{"etcdzone {\n refresh 0\n}", true, `refresh "0" is not a number of seconds from 1 to 2147483647`},
		{"etcdzone {\n retry 1.5s\n}", true, `retry "1.5s" is not a number`},
		{"etcdzone {\n expire 2147483648\n}", true, `expire "2147483648" is not a number`},
		{"etcdzone {\n minimum\n}", true, `Wrong argument count`},
		{"etcdzone {\n serial 1\n}", true, `unknown property "serial"`},
		{"etcdzone {\n journal\n}", true, `Wrong argument count`},
		{"etcdzone {\n serial_key\n}", true, `Wrong argument count`},
		{"etcdzone {\n serial_key globaladdr/serial\n}", true, `serial_key "globaladdr/serial" is not an etcd key`},
		{"etcdzone {\n serial_key /\n}", true, `serial_key "/" is not an etcd key`},
		{"etcdzone {\n journal many\n}", true, `journal "many" is not a number of records`},
		{"etcdzone {\n journal 10 1GB\n}", true, `journal "1GB" is not a number of bytes`},
		{"etcdzone {\n journal 10 2048MiB\n}", true, `journal "2048MiB" is not a number of bytes`},
		{"etcdzone {\n journal 10 1 2\n}", true, `Wrong argument count`},
		{"etcdzone {\n delegate lab.example.com\n}", true, `delegate needs a subdomain and its name servers`},
		{"etcdzone {\n delegate lab.example.com ns1..bad\n}", true, `"ns1..bad" is not a domain name`},
		{"etcdzone {\n delegate lab.example.com ns.example.net\n delegate lab.example.com ns.example.org\n}", true, `"lab.example.com." is delegated twice`},
		{"etcdzone {\n glue ns1.example.com\n}", true, `glue needs a name server and its addresses`},
		{"etcdzone {\n glue ns1.example.com 192.0.2.300\n}", true, `"192.0.2.300" is not an IPv4 or IPv6 address`},
		{"etcdzone {\n glue ns1.example.com fe80::1%eth0\n}", true, `"fe80::1%eth0" is not an IPv4 or IPv6 address`},
		{"etcdzone {\n update\n}", true, `update needs the names of TSIG keys`},
		{"etcdzone {\n update bad..key\n}", true, `"bad..key" is not a domain name`},
		{"etcdzone {\n update_lease 5s\n}", true, `update_lease "5s" is not a duration of whole seconds, at least 10s`},
		{"etcdzone {\n update_lease 1.5m\n}", false, ""},
		{"etcdzone {\n update_lease soon\n}", true, `update_lease "soon" is not a duration`},
		{"etcdzone {\n update_allow k.example.com. host.example.com\n}", true, `update_allow needs a TSIG key, a name and record types`},
		{"etcdzone {\n update_allow k.example.com. host.example.com MX\n}", true, `"MX": update_allow takes the types A, AAAA, CNAME, TXT or *`},
		{"etcdzone {\n update_allow k.example.com. bad..name TXT\n}", true, `"bad..name" is not a domain name`},
		{"etcdzone {\n update_allow k.example.com. _acme-challenge.* TXT\n}", true, `"_acme-challenge.*": update_allow takes a name, @, * or *.NAME`},

		{"etcdzone {\n dnssec /tmp\n dnssec_denial nsec\n dnssec_validity 14d\n dnssec_refresh 120h\n dnssec_jitter 1h\n}", false, ""},
		{"etcdzone {\n ds lab.example.com 12345 13 2 6A2B0C1E5D7F3A4B9C8D7E6F5A4B3C2D1E0F9A8B7C6D5E4F3A2B1C0D9E8F7A6B\n}", false, ""},
		{"etcdzone {\n dnssec\n}", true, `dnssec needs key file prefixes or directories of key files`},
		{"etcdzone {\n dnssec /nonexistent/Kexample.com.+013+12345\n}", true, `dnssec "/nonexistent/Kexample.com.+013+12345": open /nonexistent/Kexample.com.+013+12345.key`},
		{"etcdzone {\n dnssec_denial nsec5\n}", true, `dnssec_denial "nsec5": nsec3 or nsec`},
		{"etcdzone {\n dnssec_validity 2w\n}", true, `dnssec_validity "2w" is not a duration (36h, 14d)`},
		{"etcdzone {\n dnssec_refresh -1h\n}", true, `dnssec_refresh "-1h" is not a duration`},
		{"etcdzone {\n ds lab.example.com 12345 13\n}", true, `ds needs a delegation's name, key tag, algorithm, digest type and digest`},
		{"etcdzone {\n ds lab.example.com x 13 2 AB\n}", true, `ds "lab.example.com x 13 2 AB"`},
	}
	setuptest.Run(t, "etcdzone", setup, tests)
}
