package test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/globaladdr/globaladdr/internal/prereq"
)

// The addresses of docs/hidden-primary.md's primary: the primary's, which
// the secondaries know, and the secondary's, one of the primary's `to`.
const (
	readmePrimary   = "203.0.113.10"
	readmeSecondary = "198.51.100.53"
)

// secondaryBases are the settings a secondary's host has before the
// how-to's snippet is added: where its files go and the address it listens
// on. Each includes the snippet, written to the file the how-to names.
var secondaryBases = []struct {
	name, marker, program, pkg, snippetFile, conf, run string
}{
	{"BIND", "type secondary;", "named", "bind9", "named.conf.local", `options {
	directory "$D";
	pid-file "$D/named.pid";
	session-keyfile none;
	listen-on { ` + readmeSecondary + `; };
	listen-on-v6 { none; };
	recursion no;
	dnssec-validation no;
};
controls { };
include "$D/named.conf.local";
`, `named -g -c "$D/named.conf"`},
	{"NSD", "request-xfr:", "nsd", "nsd", "example.com.conf", `server:
	ip-address: ` + readmeSecondary + `
	server-count: 1
	username: ""
	chroot: ""
	zonesdir: "$D"
	database: ""
	pidfile: "$D/nsd.pid"
	xfrdfile: "$D/xfrd.state"
	xfrdir: "$D"
	zonelistfile: "$D/zone.list"
	verbosity: 2
remote-control:
	control-enable: no
include: "$D/example.com.conf"
`, `nsd -d -c "$D/nsd.conf"`},
	{"Knot", "master: primary", "knotd", "knot", "knot-example.com.conf", `server:
    rundir: "$D"
    listen: ` + readmeSecondary + `@53
database:
    storage: "$D"
template:
  - id: default
    storage: "$D"
log:
  - target: stderr
    any: info
include: "$D/knot-example.com.conf"
`, `knotd -c "$D/knotd.conf"`},
}

// hiddenPrimaryDoc is the how-to of the hidden primary: its first tested
// Corefile is the primary's, its txt fences the secondaries' settings.
const hiddenPrimaryDoc = "../docs/hidden-primary.md"

// TestREADMESecondaries runs BIND 9, NSD and Knot as secondaries of the
// hidden primary of docs/hidden-primary.md, each with the page's snippet
// for it as shown, on a network of the test's: the primary's host has an address of
// its own (its default source toward the secondary) beside the one the
// secondaries know, as a home server with several addresses has. Each
// secondary must transfer the zone, follow a change through the primary's
// NOTIFY (its refresh timer is an hour), and refuse a stranger's AXFR.
func TestREADMESecondaries(t *testing.T) {
	t.Parallel()
	coredns := snippetPrereqs(t)
	var corefile string
	snippets := map[string]string{}
	for _, s := range readSnippets(t, hiddenPrimaryDoc) {
		if s.Lang == "corefile" && generic(s) && corefile == "" {
			corefile = s.Text
		}
		for _, b := range secondaryBases {
			if s.Lang == "txt" && strings.Contains(s.Text, b.marker) {
				snippets[b.name] = s.Text
			}
		}
	}
	if corefile == "" {
		t.Fatalf("%s shows no tested Corefile (its first is the primary's)", hiddenPrimaryDoc)
	}
	for _, b := range secondaryBases {
		t.Run(b.name, func(t *testing.T) {
			prereq.Program(t, b.program, b.pkg)
			snippet, ok := snippets[b.name]
			if !ok {
				t.Fatalf("%s shows no %s snippet (a txt fence holding %q)", hiddenPrimaryDoc, b.name, b.marker)
			}
			lab := newSnippetLab(t, coredns, corefile)
			lab.script.WriteString(secondaryNetwork)
			lab.run("an Ingress", "etcdctl put /skydns/com/example/app/1a2b3c4d '{\"host\":\"192.168.0.51\",\"targetstrip\":1}'\n")
			lab.script.WriteString(moreHosts)
			lab.startCoreDNS()
			fmt.Fprintf(&lab.script, "D=\"$LAB/%s\"; mkdir -p \"$D\"\n", strings.ToLower(b.name))
			fmt.Fprintf(&lab.script, "cat >\"$D/%s\" <<'SNIPPET'\n%sSNIPPET\n", b.snippetFile, snippet)
			fmt.Fprintf(&lab.script, "cat >\"$D/%s.conf\" <<SNIPPET\n%sSNIPPET\n", b.program, strings.TrimPrefix(b.conf, "\n"))
			fmt.Fprintf(&lab.script, "ip netns exec sec %s >\"$LAB/%s.log\" 2>&1 &\n", b.run, b.name)
			lab.script.WriteString(secondaryChecks)
			lab.exec(t, "")
		})
	}
}

// secondaryNetwork gives the lab a second network namespace, sec, for the
// secondary, joined to the primary's by a veth pair on 198.51.100.0/24, in
// which the primary's host has 198.51.100.1: its default source address
// toward the secondary, not the one the secondary knows.
const secondaryNetwork = `ip netns add sec
ip link add v0 type veth peer name v1 netns sec
ip addr add 198.51.100.1/24 dev v0
ip link set v0 up
ip -n sec link set lo up
ip -n sec addr add ` + readmeSecondary + `/24 dev v1
ip -n sec link set v1 up
ip -n sec route add ` + readmePrimary + `/32 via 198.51.100.1
`

// moreHosts writes a few more hosts, so that a change's IXFR weighs less
// than the zone (which the primary sends instead of a heavier IXFR).
const moreHosts = `for i in 1 2 3 4 5 6; do
	etcdctl put /skydns/com/example/host$i/1a2b3c4d "{\"host\":\"192.168.0.$((60 + i))\",\"targetstrip\":1}" >/dev/null
done
`

// readmeStranger is an address of the secondary's network that is none of
// the primary's `to`.
const readmeStranger = "198.51.100.99"

// secondaryChecks asks the secondary: the zone transferred, a change
// followed through NOTIFY (by IXFR, which the primary's metrics count), a
// stranger's AXFR refused. It asks the primary for a transfer from a
// stranger's address with the secondaries' key: refused, and logged.
const secondaryChecks = `__wait secondary __answers ` + readmeSecondary + ` 53 .
__expect ` + readmePrimary + ` dig +short +time=1 +tries=1 @` + readmeSecondary + ` app.example.com
etcdctl put /skydns/com/example/new/5e6f7a8b '{"host":"192.168.0.60","targetstrip":1}' >/dev/null
__expect ` + readmePrimary + ` dig +short +time=1 +tries=1 @` + readmeSecondary + ` new.example.com
if dig +time=2 +tries=1 @` + readmeSecondary + ` example.com AXFR | grep -q 'IN[[:space:]]*SOA'; then
	echo "lab: the secondary transferred its copy to a stranger" >&2; exit 1
fi
grep -q 'notifying the secondaries' "$LAB/coredns.log" || { echo "lab: the primary logged no NOTIFY" >&2; exit 1; }
grep -q 'Outgoing transfer of [0-9]* records of zone "example.com."' "$LAB/coredns.log" || { echo "lab: the primary logged no transfer" >&2; exit 1; }
__metric() { curl -s http://127.0.0.1:9153/metrics | grep -q "$1"; }
__wait 'the IXFR counted' __metric '^coredns_etcdzone_transfers_total{.*type="ixfr"'
ip -n sec addr add ` + readmeStranger + `/24 dev v1
if ip netns exec sec dig +time=2 +tries=1 -b ` + readmeStranger + ` -y hmac-sha256:transfer.example.com.:Y2lAUHa6tPH4+aaV8JQGcmlrTN9zBN9P7/TxTSKGLOk= @` + readmePrimary + ` example.com AXFR | grep -q 'IN[[:space:]]*SOA'; then
	echo "lab: the primary transferred the zone to a stranger" >&2; exit 1
fi
__wait 'the refused transfer logged' grep -q '` + readmeStranger + `:[0-9]* .*"AXFR IN example.com. .*" REFUSED' "$LAB/coredns.log"
`
