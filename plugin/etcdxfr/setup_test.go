package etcdxfr

import (
	"testing"

	"github.com/coredns/caddy"
	"github.com/globaladdr/globaladdr/internal/setuptest"
)

func TestSetup(t *testing.T) {
	tests := []setuptest.Case{
		{"etcdxfr {\n ns ns1.example.net\n}", false, ""},
		{"etcdxfr example.com example.org {\n ns ns1.example.net ns2.example.net.\n ns ns3.example.net\n}", false, ""},
		{"etcdxfr {\n ns ns1.example.net\n mname primary.example.com\n rname admin.example.com\n ttl 0\n refresh 1h\n retry 600\n expire 2147483647\n minimum 30s\n}", false, ""},

		{`etcdxfr`, true, `no ns given`},
		{"etcdxfr {\n ns ns1.example.net\n}\netcdxfr {\n ns ns1.example.net\n}", true, `etcdxfr is given twice in this server block`},
		{"etcdxfr {\n ns\n}", true, `Wrong argument count`},
		{"etcdxfr {\n ns bad..name\n}", true, `"bad..name" is not a domain name`},
		{"etcdxfr {\n ns .\n}", true, `"." is not a domain name`},
		{"etcdxfr {\n ns ns1.example.net\n mname\n}", true, `Wrong argument count`},
		{"etcdxfr {\n ns ns1.example.net\n mname a.example.net b.example.net\n}", true, `Wrong argument count`},
		{"etcdxfr {\n ns ns1.example.net\n rname bad..name\n}", true, `"bad..name" is not a domain name`},
		{"etcdxfr {\n ns ns1.example.net\n ttl -1\n}", true, `ttl "-1" is not a number of seconds from 0 to 2147483647`},
		{"etcdxfr {\n ns ns1.example.net\n refresh 0\n}", true, `refresh "0" is not a number of seconds from 1 to 2147483647`},
		{"etcdxfr {\n ns ns1.example.net\n retry 1.5s\n}", true, `retry "1.5s" is not a number`},
		{"etcdxfr {\n ns ns1.example.net\n expire 2147483648\n}", true, `expire "2147483648" is not a number`},
		{"etcdxfr {\n ns ns1.example.net\n minimum\n}", true, `Wrong argument count`},
		{"etcdxfr {\n ns ns1.example.net\n serial 1\n}", true, `unknown property "serial"`},
	}
	setuptest.Run(t, "etcdxfr", setup, tests)
}

func TestParseDefaults(t *testing.T) {
	c := caddy.NewTestController("dns", "etcdxfr {\n ns NS1.Example.NET\n}")
	c.ServerBlockKeys = []string{"Example.COM:53"}
	x, err := parse(c)
	if err != nil {
		t.Fatal(err)
	}
	if len(x.Zones) != 1 || x.Zones[0] != "example.com." {
		t.Errorf("zones %v, want the server block's, example.com.", x.Zones)
	}
	soa := x.apex.soa("example.com.", 7)
	want := "example.com.\t3600\tIN\tSOA\tns1.example.net. hostmaster.example.com. 7 3600 600 1209600 300"
	if soa.String() != want {
		t.Errorf("SOA\n%s\nwant\n%s", soa, want)
	}
}
