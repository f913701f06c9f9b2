package test

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/globaladdr/globaladdr/internal/externaldns"
	"github.com/globaladdr/globaladdr/internal/nameserver"
	"github.com/globaladdr/globaladdr/internal/prereq"

	"github.com/miekg/dns"
)

// The lab's addresses: Zonemaster asks port 53 and nothing else, so each
// name server of the lab has a loopback address of its own.
const (
	labRoot = "127.53.0.1"
	labNS1  = "127.53.0.2" // ns1.example.net
	labNS2  = "127.53.0.3" // ns2.example.net
)

// labIgnored are the Zonemaster messages of WARNING and above that the lab
// causes, not the zone: each with the reason.
var labIgnored = map[string]string{
	"NAMESERVER_IP_PRIVATE_NETWORK": "the lab's name servers are on loopback addresses, which are not globally reachable",
}

// labHints are the root hints of the lab: its root server.
const labHints = ". 3600000 NS a.root-servers.net.\na.root-servers.net. 3600000 A " + labRoot + "\n"

// labZones returns the zones of the lab's root server: the root, com with
// example.com delegated to ns1 and ns2.example.net (with ds, if not empty,
// as its DS records), net with the name servers' addresses, and arpa with
// their reverse names.
func labZones(ds ...string) map[string]string {
	soa := func(zone string) string {
		return fmt.Sprintf("$TTL 3600\n%s SOA a.root-servers.net. hostmaster.root-servers.net. 1 3600 600 1209600 300\n%s NS a.root-servers.net.\n", zone, zone)
	}
	return map[string]string{
		".":     soa(".") + "com. NS a.root-servers.net.\nnet. NS a.root-servers.net.\narpa. NS a.root-servers.net.\na.root-servers.net. A " + labRoot + "\n",
		"arpa.": soa("arpa.") + reverse(labRoot, "a.root-servers.net.") + reverse(labNS1, "ns1.example.net.") + reverse(labNS2, "ns2.example.net."),
		"com.": soa("com.") + "example.com. NS ns1.example.net.\nexample.com. NS ns2.example.net.\n" +
			strings.Join(ds, "\n") + "\n",
		"net.": soa("net.") + "a.root-servers.net. A " + labRoot + "\nns1.example.net. A " + labNS1 + "\nns2.example.net. A " + labNS2 + "\n",
	}
}

// reverse returns the PTR record of addr, naming name.
func reverse(addr, name string) string {
	arpa, _ := dns.ReverseAddr(addr)
	return arpa + " PTR " + name + "\n"
}

// zonemasterFinding is one message of zonemaster-cli's JSON output.
type zonemasterFinding struct {
	Level  string         `json:"level"`
	Tag    string         `json:"tag"`
	Module string         `json:"module"`
	Args   map[string]any `json:"args"`
}

// labAddresses gives the loopback interface the lab's addresses until t
// ends: BIND listens only on the addresses of an interface.
func labAddresses(t *testing.T) {
	t.Helper()
	ip := prereq.Program(t, "ip", "iproute2")
	for _, addr := range []string{labRoot, labNS1, labNS2} {
		out, err := exec.Command(ip, "address", "add", addr+"/32", "dev", "lo").CombinedOutput()
		if err != nil && !strings.Contains(string(out), "already assigned") {
			t.Fatalf("ip address add %s: %v\n%s", addr, err, out)
		}
		t.Cleanup(func() { exec.Command(ip, "address", "del", addr+"/32", "dev", "lo").Run() })
	}
}

// runZonemaster starts the lab's root with zones, runs Zonemaster on
// example.com through it, and fails t for each finding of WARNING and above
// that labIgnored does not list.
func runZonemaster(t *testing.T, zones map[string]string, ds ...string) {
	t.Helper()
	zonemaster := prereq.Program(t, "zonemaster-cli", "zonemaster-cli")
	nameserver.StartPrimary(t, net.JoinHostPort(labRoot, "53"), zones)
	hints := filepath.Join(t.TempDir(), "hints")
	if err := os.WriteFile(hints, []byte(labHints), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"--hints", hints, "--json", "--raw", "--no-ipv6", "--no-progress", "--level", "WARNING"}
	for _, d := range ds {
		args = append(args, "--ds", d)
	}
	out, err := exec.Command(zonemaster, append(args, "example.com")...).Output()
	if err != nil {
		t.Fatalf("zonemaster-cli: %v\n%s", err, out)
	}
	var findings []zonemasterFinding
	if err := json.Unmarshal(out, &findings); err != nil {
		t.Fatalf("zonemaster-cli's output: %v\n%s", err, out)
	}
	var ignored []string
	for _, f := range findings {
		if !slices.Contains([]string{"WARNING", "ERROR", "CRITICAL"}, f.Level) {
			continue
		}
		if _, lab := labIgnored[f.Tag]; lab {
			ignored = append(ignored, f.Tag)
			continue
		}
		t.Errorf("Zonemaster: %s %s/%s %v", f.Level, f.Module, f.Tag, f.Args)
	}
	t.Logf("Zonemaster: %d findings of WARNING and above, %d of them due to the lab: %v", len(findings), len(ignored), ignored)
}

// labView starts the example file (an external view of example.com) on
// port 53 of addr, with etcd's records and the examples' environment env;
// rrl exempts the lab's loopback network, from which Zonemaster asks
// hundreds of questions a second.
func labView(t *testing.T, file, addr string, env map[string]string) *coreDNS {
	t.Helper()
	corefile := examplePorts.Replace(strings.ReplaceAll(readExample(t, file), "{$DNS_PORT}", "53"))
	corefile = insertAfter(t, corefile, "responses-per-second 10", "        exempt-clients 127.0.0.0/8", 1)
	corefile = insertAfter(t, corefile, "    errors", "    bind "+addr, 1)
	return startExample(t, corefile, env)
}

// TestZonemaster runs Zonemaster on the Internet-facing examples, in a lab
// of loopback addresses whose root delegates example.com to two name
// servers: two replicas of external.Corefile on one etcd; dnssec.Corefile
// (its DS in com); and the secondaries (BIND and NSD) of
// hidden-primary.Corefile and of signed-primary.Corefile (its DS in com). Zonemaster finds nothing of WARNING and above
// but what the lab causes.
func TestZonemaster(t *testing.T) {
	prereq.Root(t, "Zonemaster asks name servers on port 53 only")
	labAddresses(t)
	records := []externaldns.Record{
		a("app.example.com", exampleInternal),
		cname("www.example.com", "app.example.com"),
		a("*.apps.example.com", "192.168.0.80"),
	}
	env := func(t *testing.T) map[string]string {
		etcd := startEtcd(t)
		putRecords(t, etcd, records...)
		e := map[string]string{
			"DOMAIN":        exampleDomain,
			"GLOBAL_ADDR":   exampleGlobal,
			"ETCD_ENDPOINT": etcd.Endpoint(),
			"NS":            exampleNS,
			"TSIG_KEY":      nameserver.TestKey.Name,
			"TSIG_SECRET":   nameserver.TestKey.Secret,
		}
		setEnv(t, e)
		return e
	}
	t.Run("external.Corefile", func(t *testing.T) {
		e := env(t)
		labView(t, "external.Corefile", labNS1, e)
		labView(t, "external.Corefile", labNS2, e)
		runZonemaster(t, labZones())
	})
	t.Run("dnssec.Corefile", func(t *testing.T) {
		e := env(t)
		key, keyFile := writeKey(t, "example.com.")
		e["DNSSEC_KEY"] = keyFile
		setEnv(t, e)
		labView(t, "dnssec.Corefile", labNS1, e)
		labView(t, "dnssec.Corefile", labNS2, e)
		ds := key.ToDS(dns.SHA256)
		runZonemaster(t, labZones(ds.String()), fmt.Sprintf("%d,%d,%d,%s", ds.KeyTag, ds.Algorithm, ds.DigestType, ds.Digest))
	})
	t.Run("hidden-primary.Corefile", func(t *testing.T) {
		labSecondaries(t, "hidden-primary.Corefile", env(t))
		runZonemaster(t, labZones())
	})
	t.Run("signed-primary.Corefile", func(t *testing.T) {
		e := env(t)
		key, keyFile := writeKey(t, "example.com.")
		e["DNSSEC_KEY"] = keyFile
		setEnv(t, e)
		labSecondaries(t, "signed-primary.Corefile", e)
		ds := key.ToDS(dns.SHA256)
		runZonemaster(t, labZones(ds.String()), fmt.Sprintf("%d,%d,%d,%s", ds.KeyTag, ds.Algorithm, ds.DigestType, ds.Digest))
	})
}

// labSecondaries starts the hidden primary of the example file with env,
// and BIND (ns1) and NSD (ns2) as its secondaries in the lab, and waits
// until both serve the zone.
func labSecondaries(t *testing.T, file string, env map[string]string) {
	t.Helper()
	corefile := strings.ReplaceAll(examplePorts.Replace(readExample(t, file)), "{$SECONDARY}",
		net.JoinHostPort(labNS1, "53")+" "+net.JoinHostPort(labNS2, "53"))
	primary := startExample(t, corefile, env)
	p := nameserver.Primary{Zone: "example.com.", Addr: primary.Addr("dns"), Key: nameserver.TestKey}
	nameserver.StartBIND(t, net.JoinHostPort(labNS1, "53"), p)
	nameserver.StartNSD(t, net.JoinHostPort(labNS2, "53"), p)
	for _, ns := range []string{labNS1, labNS2} {
		eventually(t, 30*time.Second, "the secondary "+ns, func() error {
			return answers(net.JoinHostPort(ns, "53"), "app.example.com.", dns.TypeA, []string{exampleGlobal})
		})
	}
}
