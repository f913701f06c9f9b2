package test

import (
	"strings"
	"testing"

	"github.com/globaladdr/globaladdr/internal/mdsnippet"
	"github.com/globaladdr/globaladdr/internal/prereq"
	"github.com/globaladdr/globaladdr/internal/routerlab"
)

// The lab's uplink, behind __router: the router's WAN address, which the
// outside sees, its next hop, and the uplink's IPv6 address on the interface
// a snippet names.
const (
	labWAN      = "11.22.33.2"
	labUpstream = "11.22.33.1"
	labUplink6  = "2001:db8:aa:1::20/64"
)

// labFixtures are shell functions that a snippet's givens call to make
// what it takes from the reader's network:
//
//	__router ROUTER [INTERFACE]   a home router at ROUTER (Debian's miniupnpd:
//	                              NAT-PMP, PCP, UPnP IGD), the lab on ROUTER's
//	                              /24 behind it; INTERFACE holds the uplink's
//	                              IPv6 address
//	__stun SERVER[:PORT]...       STUN servers (Debian's coturn) beyond the
//	                              router, by name or address
//
// The router masquerades the LAN to labWAN, in a namespace wan whose
// addresses exist only in the lab; the servers' names are in the lab's
// /etc/hosts. The router's firewall and miniupnpd's configuration are
// routerlab's.
var labFixtures = `__router() {
	local router=$1 iface=${2:-} lan=${1%.*}
	ip netns add router
	ip netns add wan
	ip link add lan0 type veth peer name ` + routerlab.LANDev + ` netns router
	ip addr add "$lan.2/24" dev lan0
	ip link set lan0 up
	ip -n router link set lo up
	ip -n router addr add "$router/24" dev ` + routerlab.LANDev + `
	ip -n router link set ` + routerlab.LANDev + ` up
	ip -n router link add ` + routerlab.WANDev + ` type veth peer name wan0 netns wan
	ip -n router addr add ` + labWAN + `/24 dev ` + routerlab.WANDev + `
	ip -n router link set ` + routerlab.WANDev + ` up
	ip -n wan link set lo up
	ip -n wan addr add ` + labUpstream + `/24 dev wan0
	ip -n wan link set wan0 up
	ip -n router route add default via ` + labUpstream + `
	ip route add default via "$router"
	ip netns exec router sysctl -qw net.ipv4.ip_forward=1
	cat >"$LAB/router.nft" <<'NFT'
` + routerlab.Firewall + `NFT
	ip netns exec router nft -f "$LAB/router.nft"
	cat >"$LAB/miniupnpd.conf" <<CONF
` + routerlab.MiniupnpdConf("$lan.0/24", 5000) + `CONF
	ip netns exec router miniupnpd -d -f "$LAB/miniupnpd.conf" -P "$LAB/miniupnpd.pid" >"$LAB/miniupnpd.log" 2>&1 &
	__wait miniupnpd grep -q '` + routerlab.Ready + `' "$LAB/miniupnpd.log"
	if [ -n "$iface" ]; then
		ip link add "$iface" type veth peer name uplink6 netns wan
		ip addr add ` + labUplink6 + ` dev "$iface" nodad
		ip link set "$iface" up
	fi
}
__stun() {
	local server host port addr n=10 d
	for server in "$@"; do
		host=${server%:*} port=${server##*:}
		[ "$host" = "$server" ] && port=3478
		if [[ $host =~ ^[0-9.]+$ ]]; then
			addr=$host
		else
			n=$((n + 1)) addr=11.22.33.$n
			echo "$addr $host" >>/etc/hosts
		fi
		ip -n wan addr add "$addr/32" dev wan0 2>/dev/null || true
		d="$LAB/stun-$addr-$port"; mkdir -p "$d"
		ip netns exec wan turnserver ` + strings.Join(coturnArgs(`"$addr"`, `"$port"`, `"$d"`), " ") + ` >"$d.log" 2>&1 &
		__wait "STUN on $addr:$port" timeout 1 turnutils_stunclient -p "$port" "$addr"
	done
}
`

// fixturePrereqs ends t unless the programs are at hand that the givens of
// s start through labFixtures.
func fixturePrereqs(t *testing.T, s mdsnippet.Snippet) {
	t.Helper()
	for _, g := range s.Given {
		if strings.Contains(g, "__router") {
			prereq.Program(t, "miniupnpd", "miniupnpd-nftables")
			prereq.Program(t, "nft", "nftables")
		}
		if strings.Contains(g, "__stun") {
			prereq.Program(t, "turnserver", "coturn")
			prereq.Program(t, "turnutils_stunclient", "coturn")
		}
	}
}
