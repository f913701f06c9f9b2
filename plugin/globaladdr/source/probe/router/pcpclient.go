package router

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sync"
	"time"
)

// minPCPLifetime is the shortest mapping lifetime asked for: miniupnpd
// grants at least 120 seconds, whatever is asked.
const minPCPLifetime = 120 * time.Second

// PCP learns a router's external address with PCP: it keeps one mapping of
// its own UDP socket's port, with one nonce, renews it at each probe rather
// than adding new ones, and deletes it on Close. The MAP answer names the
// external address. The mapping lets the Internet send to the socket
// through the router; the socket, connected to the server, reads nothing
// but the server's answers.
type PCP struct {
	// Server is the PCP server's address, the router's.
	Server netip.Addr
	// Lifetime is the mapping's lifetime asked for; at least 120 s are.
	Lifetime time.Duration

	mu     sync.Mutex // serializes the exchanges
	conn   *net.UDPConn
	nonce  [12]byte
	mapped bool // a mapping may exist: Close deletes it
}

// String names the prober as a Corefile names it.
func (p *PCP) String() string { return "pcp " + p.Server.String() }

// Probe renews the mapping (creating it the first time) and returns the
// external address of the answer.
func (p *PCP) Probe(ctx context.Context) (netip.Addr, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.conn == nil {
		conn, err := dial(p.Server)
		if err != nil {
			return netip.Addr{}, err
		}
		p.conn = conn
		rand.Read(p.nonce[:])
	}
	ans, err := p.mapping(ctx, uint32(max(p.Lifetime, minPCPLifetime)/time.Second))
	if err != nil {
		var code pcpCodeError
		if errors.As(err, &code) && code == pcpAddressMismatch {
			// Our own address changed: a new socket next time.
			p.closeConn()
		}
		return netip.Addr{}, err
	}
	p.mapped = true
	if !ans.Addr.IsValid() || ans.Addr.IsUnspecified() {
		return netip.Addr{}, ErrNoUsableAddress
	}
	return ans.Addr, nil
}

// Close deletes the mapping, waiting for the server's answer until ctx is
// done, and closes the socket.
func (p *PCP) Close(ctx context.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.conn == nil {
		return nil
	}
	var err error
	if p.mapped {
		_, err = p.mapping(ctx, 0)
	}
	p.closeConn()
	return err
}

func (p *PCP) closeConn() {
	p.conn.Close()
	p.conn, p.mapped = nil, false
}

// pcpCodeError is a PCP result code other than success.
type pcpCodeError uint8

func (c pcpCodeError) Error() string {
	switch {
	case c == pcpNetworkFailure:
		return ErrNoUsableAddress.Error()
	case c == pcpNoResources:
		return "the router refused the PCP request: no resources (result 8); miniupnpd answers so when its WAN address is reserved (carrier-grade NAT's 100.64.0.0/10, say)"
	case int(c) < len(pcpResults):
		return fmt.Sprintf("the router refused the PCP request: %s (result %d)", pcpResults[c], c)
	}
	return fmt.Sprintf("the router refused the PCP request: unknown result %d", c)
}

// Is makes network failure ErrNoUsableAddress, and the others ErrRefused.
func (c pcpCodeError) Is(target error) bool {
	if c == pcpNetworkFailure {
		return target == ErrNoUsableAddress
	}
	return target == ErrRefused
}

// mapping sends the MAP request of the mapping with lifetime (0 deletes
// it), and returns the answer to it.
func (p *PCP) mapping(ctx context.Context, lifetime uint32) (pcpMap, error) {
	local := p.conn.LocalAddr().(*net.UDPAddr).AddrPort()
	req := pcpMap{Lifetime: lifetime, Nonce: p.nonce, Protocol: protoUDP, Internal: local.Port()}
	// No external address is suggested: all zeros, IPv4-mapped for IPv4.
	req.Addr = netip.IPv6Unspecified()
	if p.Server.Is4() {
		req.Addr = netip.AddrFrom16(netip.IPv4Unspecified().As16())
	}
	var ans pcpMap
	err := exchange(ctx, p.conn, req.marshal(local.Addr()), func(b []byte) (err error) {
		ans, err = ParsePCP(b)
		switch {
		case errors.Is(err, errPCPAnnounce):
			return errNotOurs
		case err != nil:
			return err
		case ans.Result != 0 && ans.Nonce == [12]byte{} && ans.Protocol == 0:
			return pcpCodeError(ans.Result) // an error answer without the request's fields
		case ans.Nonce != req.Nonce || ans.Protocol != req.Protocol || ans.Internal != req.Internal:
			return errNotOurs
		case ans.Result != 0:
			return pcpCodeError(ans.Result)
		}
		return nil
	})
	if err != nil {
		return ans, fmt.Errorf("PCP MAP to %s: %w", p.Server, err)
	}
	return ans, nil
}
