package test

import (
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/globaladdr/globaladdr/internal/mdsnippet"
)

// The lab's addresses toward the claims' clients, which they ask when the
// Corefile binds to no address: from the ranges for benchmarks (RFC 2544,
// RFC 5180), which no snippet uses.
const (
	claimServer4 = "198.18.0.1"
	claimServer6 = "2001:2::1"
)

// claimNetwork gives the lab a network namespace, client, for the clients
// of a snippet's claims, joined to the lab's by a veth pair: the lab's end
// has claimServer4 and claimServer6, and the client routes every address
// there, so that it reaches the Corefile's bind addresses too. __client adds
// a client's address; __claim checks a claim.
const claimNetwork = `ip netns add client
ip link add c0 type veth peer name c1 netns client
ip link set c0 up
ip addr add ` + claimServer4 + `/32 dev c0
ip addr add ` + claimServer6 + `/128 dev c0 nodad
ip -n client link set lo up
ip -n client link set c1 up
ip -n client route add ` + claimServer4 + `/32 dev c1
ip -n client route add default via ` + claimServer4 + ` dev c1
ip -n client -6 route add ` + claimServer6 + `/128 dev c1
ip -n client -6 route add default via ` + claimServer6 + ` dev c1
# __client ADDR: a client at ADDR, which the lab routes to.
__client() {
	case $1 in
	*:*) ip -n client addr add "$1/128" dev c1 nodad; ip -6 route add "$1/128" dev c0 ;;
	*) ip -n client addr add "$1/32" dev c1; ip route add "$1/32" dev c0 ;;
	esac
}
# __ask FROM SERVER PORT NAME TYPE: what the client at FROM gets: the
# answer's data as dig +short prints it, sorted, on one line; or its rcode,
# NODATA for NOERROR without records.
__ask() {
	local out status
	out=$(ip netns exec client dig +tries=1 +time=2 -b "$1" @"$2" -p "$3" "$4" "$5" +noall +comments +answer) || { echo "no answer"; return; }
	status=$(sed -n 's/.*status: \([A-Z]*\),.*/\1/p' <<<"$out")
	[ "$status" = NOERROR ] || { echo "$status"; return; }
	out=$(grep -v '^;' <<<"$out" | awk 'NF { $1 = $2 = $3 = $4 = ""; sub(/^ +/, ""); print }' | sort | paste -sd' ')
	echo "${out:-NODATA}"
}
# __claim FROM SERVER PORT NAME TYPE WANT: the client at FROM gets WANT,
# within 10 s.
__claim() {
	local want=$6 got= end=$((SECONDS + 10))
	while :; do
		got=$(__ask "$1" "$2" "$3" "$4" "$5")
		[ "$got" = "$want" ] && { echo "claim: from $1, $4 $5 is $got"; return 0; }
		[ "$SECONDS" -lt "$end" ] || break
		sleep 0.1
	done
	echo "lab: from $1, $4 $5 is '$got'; the README claims '$want'" >&2; return 1
}
`

// given has the script make what snippet s takes as given (its `given:`
// markers, which may call labFixtures), before the snippet runs.
func (l *snippetLab) given(t *testing.T, s mdsnippet.Snippet) {
	t.Helper()
	fixturePrereqs(t, s)
	for _, g := range s.Given {
		fmt.Fprintf(&l.script, "%s\n", g)
	}
}

// claims has the script check the claims of the lab's Corefile snippet s
// against its running CoreDNS, each from a client at the address it names.
func (l *snippetLab) claims(s mdsnippet.Snippet) error {
	if len(s.Claims) == 0 {
		return nil
	}
	l.script.WriteString(claimNetwork)
	var clients []netip.Addr
	for _, c := range s.Claims {
		addr, port, err := claimTarget(l.corefile, c)
		if err != nil {
			return fmt.Errorf("claim %q: %v", c, err)
		}
		if !slices.Contains(clients, c.From) {
			clients = append(clients, c.From)
			fmt.Fprintf(&l.script, "__client %s\n", c.From)
		}
		fmt.Fprintf(&l.script, "__claim %s %s %d %s %s %q\n", c.From, addr, port, c.Name, c.Type, c.Want)
	}
	return nil
}

// claimTarget returns the address and port that claim c asks of corefile's
// CoreDNS: those it names; else the Corefile's only listener, which without
// a bind address is asked at the lab's address of the client's family.
func claimTarget(corefile string, c mdsnippet.Claim) (netip.Addr, uint16, error) {
	type target struct{ addr, port string } // addr "" without bind
	var targets []target
	for _, ln := range corefileListeners(corefile) {
		tg := target{"", ln.port}
		if ln.bound {
			tg.addr = ln.addr
		}
		if !slices.Contains(targets, tg) {
			targets = append(targets, tg)
		}
	}
	addr, port := c.Server, c.Port
	if !addr.IsValid() {
		if len(targets) != 1 {
			return addr, 0, fmt.Errorf("the Corefile has %d listeners: say which one (to ADDRESS:PORT)", len(targets))
		}
		switch {
		case targets[0].addr != "":
			addr = netip.MustParseAddr(targets[0].addr)
		case c.From.Is4():
			addr = netip.MustParseAddr(claimServer4)
		default:
			addr = netip.MustParseAddr(claimServer6)
		}
	}
	if port == 0 {
		ports := map[string]bool{}
		for _, tg := range targets {
			ports[tg.port] = true
		}
		if len(ports) != 1 {
			return addr, 0, fmt.Errorf("the Corefile listens on %d ports: say which one (to ADDRESS:PORT)", len(ports))
		}
		p, err := strconv.ParseUint(targets[0].port, 10, 16)
		if err != nil {
			return addr, 0, fmt.Errorf("port %q: %v", targets[0].port, err)
		}
		port = uint16(p)
	}
	return addr, port, nil
}

// TestSnippetClaimsCatchAWrongView runs docs/one-listener.md's Corefile
// with the LAN block's key as an earlier README had it, `. {`: CoreDNS then
// gives every example.com name to the more specific external block, so the
// LAN client's claim must fail the lab.
func TestSnippetClaimsCatchAWrongView(t *testing.T) {
	t.Parallel()
	coredns := snippetPrereqs(t)
	var s mdsnippet.Snippet
	for _, sn := range readSnippets(t, "../docs/one-listener.md") {
		if sn.Section == "One listener, split by the client's network" && sn.Lang == "corefile" {
			s = sn
		}
	}
	if !strings.HasPrefix(s.Text, ". example.com {\n") || len(s.Claims) == 0 {
		t.Fatalf("docs/one-listener.md's Corefile is not a LAN block `. example.com {` with claims:\n%s", s.Text)
	}
	s.Text = ". {\n" + strings.TrimPrefix(s.Text, ". example.com {\n")
	lab := newSnippetLab(t, coredns, s.Text)
	lab.given(t, s)
	lab.startCoreDNS()
	if err := lab.claims(s); err != nil {
		t.Fatal(err)
	}
	out, err := lab.execOutput(t, "")
	if err == nil || !strings.Contains(string(out), "is '203.0.113.10'; the README claims '192.168.0.51'") {
		t.Errorf("the LAN client's claim held with the LAN block `. {` (%v):\n%s", err, out)
	}
}
