package config

import (
	"slices"
	"testing"

	"github.com/coredns/caddy"
	"github.com/globaladdr/globaladdr/plugin/etcdzone/zone"
)

func TestParseDefaults(t *testing.T) {
	c := caddy.NewTestController("dns", "etcdzone {\n ns NS1.Example.NET\n}")
	x, err := Parse(c)
	if err != nil {
		t.Fatal(err)
	}
	if len(x.Zones) != 0 {
		t.Errorf("zones %v, want none given (the etcd plugin's)", x.Zones)
	}
	if x.JournalRecords != 10000 || x.JournalBytes != 4<<20 {
		t.Errorf("journal %d records, %d bytes; want 10000 and 4MiB", x.JournalRecords, x.JournalBytes)
	}
	soa := x.Apex.SOA("example.com.", 7)
	want := "example.com.\t3600\tIN\tSOA\tns1.example.net. hostmaster.example.com. 7 3600 600 1209600 300"
	if soa.String() != want {
		t.Errorf("SOA\n%s\nwant\n%s", soa, want)
	}
	if (&zone.Apex{}).SOA("example.com.", 1).Ns != "example.com." {
		t.Error("without ns, MNAME is the zone's name")
	}
}

// TestParseFallthrough reads fallthrough's zones as the CoreDNS plugins do:
// every name without them, a reverse CIDR as its zones.
func TestParseFallthrough(t *testing.T) {
	for corefile, want := range map[string][]string{
		"etcdzone":                    nil,
		"etcdzone {\n fallthrough\n}": {"."},
		"etcdzone {\n fallthrough LAN.example.com 10.0.0.0/8\n}": {"lan.example.com.", "10.in-addr.arpa."},
	} {
		x, err := Parse(caddy.NewTestController("dns", corefile))
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(x.Fall.Zones, want) {
			t.Errorf("%q: fallthrough's zones %v, want %v", corefile, x.Fall.Zones, want)
		}
	}
}
