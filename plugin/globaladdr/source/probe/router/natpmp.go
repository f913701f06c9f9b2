package router

import (
	"context"
	"encoding/binary"
	"net/netip"
)

// NAT-PMP (RFC 6886) message fields.
const (
	natpmpVersion  = 0
	natpmpOpPublic = 0   // the external address request
	natpmpResponse = 128 // the response bit of the opcode
	natpmpSize     = 12  // the external address response (and announcement)
)

// natpmpResults names NAT-PMP's result codes (RFC 6886 section 3.5).
var natpmpResults = [...]string{
	1: "unsupported version",
	2: "not authorized or refused",
	3: "network failure",
	4: "out of resources",
	5: "unsupported opcode",
}

// NATPMP asks a router for its external address with NAT-PMP.
type NATPMP struct {
	// Gateway is the router's address.
	Gateway netip.Addr
}

// String names the prober as a Corefile names it.
func (p *NATPMP) String() string { return "natpmp " + p.Gateway.String() }

// Probe asks the gateway for its external address, until it answers or ctx
// is done.
func (p *NATPMP) Probe(ctx context.Context) (netip.Addr, error) {
	conn, err := dial(p.Gateway)
	if err != nil {
		return netip.Addr{}, err
	}
	defer conn.Close()
	var addr netip.Addr
	err = exchange(ctx, conn, []byte{natpmpVersion, natpmpOpPublic}, func(b []byte) (err error) {
		addr, err = ParseNATPMP(b)
		return err
	})
	return addr, err
}

// ParseNATPMP reads a NAT-PMP external address response, or an
// announcement, which has the same form: version 0, opcode 128, a result
// code, the seconds since the router's epoch and the address. A result
// other than success is an error; network failure is ErrNoUsableAddress.
func ParseNATPMP(b []byte) (netip.Addr, error) {
	switch {
	case len(b) < 2:
		return netip.Addr{}, malformed("malformed NAT-PMP answer: %d bytes", len(b))
	case b[0] != natpmpVersion:
		return netip.Addr{}, malformed("NAT-PMP answer of version %d, not 0 (a version 2 answer is PCP's: use from pcp)", b[0])
	case b[1] != natpmpResponse|natpmpOpPublic:
		return netip.Addr{}, malformed("NAT-PMP answer with opcode %d, not %d", b[1], natpmpResponse|natpmpOpPublic)
	case len(b) != natpmpSize:
		return netip.Addr{}, malformed("malformed NAT-PMP answer: %d bytes, not %d", len(b), natpmpSize)
	}
	switch code := binary.BigEndian.Uint16(b[2:4]); {
	case code == 3:
		return netip.Addr{}, ErrNoUsableAddress
	case int(code) < len(natpmpResults) && code != 0:
		return netip.Addr{}, refused("the router refused the NAT-PMP request: %s (result %d)", natpmpResults[code], code)
	case code != 0:
		return netip.Addr{}, refused("the router refused the NAT-PMP request: unknown result %d", code)
	}
	addr := netip.AddrFrom4([4]byte(b[8:12]))
	if addr.IsUnspecified() {
		return netip.Addr{}, ErrNoUsableAddress
	}
	return addr, nil
}
