package probe

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"time"

	"github.com/coredns/caddy"
	"github.com/pion/stun/v3"
)

// stunPort is STUN's port (RFC 8489, section 18.6).
const stunPort = "3478"

// stunRetransmit is the first wait before a Binding request is sent again
// (RFC 8489's RTO); it doubles with each resend, until the probe's
// deadline.
const stunRetransmit = 500 * time.Millisecond

func init() { Register("stun", Observer, parseSTUN) }

// parseSTUN reads "from stun SERVER...", SERVER being host[:port].
func parseSTUN(c *caddy.Controller, args []string) ([]Prober, error) {
	if len(args) == 0 {
		return nil, c.Errf("stun needs at least one SERVER (host[:port]), after %q", c.Val())
	}
	var ps []Prober
	for _, arg := range args {
		host, port, err := net.SplitHostPort(arg)
		if err != nil {
			host, port = arg, stunPort
		}
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 || host == "" {
			return nil, c.Errf("%q is not a STUN server (host[:port])", arg)
		}
		ps = append(ps, &stunProber{server: net.JoinHostPort(host, port)})
	}
	return ps, nil
}

// stunProber asks one STUN server for the uplink's address: a Binding
// request over UDP, once per address family the server has, whose
// XOR-MAPPED-ADDRESS is the address.
type stunProber struct {
	server string
	via    Via // where its requests leave from
}

// String implements fmt.Stringer.
func (p *stunProber) String() string { return "stun " + p.server }

// RouteVia implements Routed.
func (p *stunProber) RouteVia(v Via) { p.via = v }

// Probe implements Prober.
func (p *stunProber) Probe(ctx context.Context) ([]netip.Addr, error) {
	host, port, _ := net.SplitHostPort(p.server)
	ips, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return nil, Errorf(ReasonUnreachable, "looking up the STUN server %s: %w", host, err)
	}
	var (
		addrs    []netip.Addr
		firstErr error
		asked    = map[bool]bool{} // by ip.Is4(): the family was asked
	)
	for _, ip := range ips {
		ip = ip.Unmap()
		if local, ok := p.via.Local(); asked[ip.Is4()] || ok && local.Is4() != ip.Is4() {
			continue // a family asked, or one the local address is not of
		}
		asked[ip.Is4()] = true
		a, err := bind(ctx, p.via, net.JoinHostPort(ip.String(), port))
		if err != nil {
			firstErr = cmpErr(firstErr, err)
			continue
		}
		addrs = append(addrs, a)
	}
	if len(addrs) == 0 {
		return nil, firstErr
	}
	return addrs, nil
}

// cmpErr returns first, or err when first is nil.
func cmpErr(first, err error) error {
	if first != nil {
		return first
	}
	return err
}

// bind sends a Binding request to server (ip:port) from via, again after
// stunRetransmit and then twice as long each time, until a response with
// the request's transaction ID arrives or ctx ends.
func bind(ctx context.Context, via Via, server string) (netip.Addr, error) {
	conn, err := via.dialer("udp").DialContext(ctx, "udp", server)
	if err != nil {
		return netip.Addr{}, err
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { conn.SetReadDeadline(time.Now()) })
	defer stop()
	req := stun.MustBuild(stun.TransactionID, stun.BindingRequest, stun.Fingerprint)
	buf := make([]byte, 1500)
	wait := stunRetransmit
	for {
		if _, err := conn.Write(req.Raw); err != nil {
			return netip.Addr{}, err
		}
		conn.SetReadDeadline(time.Now().Add(wait))
		wait *= 2
		if ctx.Err() != nil { // ended before the deadline above was set
			return netip.Addr{}, noAnswer(ctx, server)
		}
		for {
			n, err := conn.Read(buf)
			if ctx.Err() != nil {
				return netip.Addr{}, noAnswer(ctx, server)
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				break // send again
			}
			if err != nil {
				return netip.Addr{}, err
			}
			a, err := parseBindingResponse(buf[:n], req.TransactionID)
			if errors.Is(err, errOtherTransaction) {
				continue
			}
			if err != nil {
				err = fmt.Errorf("the STUN server %s: %w", server, err)
			}
			return a, err
		}
	}
}

// noAnswer is the error of a Binding request to server that ctx ended.
func noAnswer(ctx context.Context, server string) error {
	return Errorf(ReasonTimeout, "no answer from the STUN server %s: %w", server, ctx.Err())
}

// errOtherTransaction is a response to another request: not ours.
var errOtherTransaction = errors.New("a response to another transaction")

// parseBindingResponse reads raw, a STUN message that should answer the
// Binding request of transaction tid, and returns its XOR-MAPPED-ADDRESS.
func parseBindingResponse(raw []byte, tid [stun.TransactionIDSize]byte) (netip.Addr, error) {
	m := &stun.Message{Raw: raw}
	if err := m.Decode(); err != nil {
		return netip.Addr{}, Errorf(reasonMalformed, "a malformed STUN message: %w", err)
	}
	if m.TransactionID != tid {
		return netip.Addr{}, errOtherTransaction
	}
	switch m.Type {
	case stun.BindingSuccess:
	case stun.BindingError:
		var code stun.ErrorCodeAttribute
		if err := code.GetFrom(m); err != nil {
			return netip.Addr{}, Errorf(reasonMalformed, "a STUN error response without a valid ERROR-CODE: %w", err)
		}
		return netip.Addr{}, Errorf(reasonRejected, "STUN error %d: %.64q", code.Code, code.Reason)
	default:
		return netip.Addr{}, Errorf(reasonMalformed, "a STUN %s, not a Binding response", m.Type)
	}
	if m.Contains(stun.AttrFingerprint) {
		if err := stun.Fingerprint.Check(m); err != nil {
			return netip.Addr{}, Errorf(reasonMalformed, "the STUN response's FINGERPRINT is wrong: %w", err)
		}
	}
	var xor stun.XORMappedAddress
	if err := xor.GetFrom(m); err != nil {
		return netip.Addr{}, Errorf(reasonMalformed, "the STUN response has no valid XOR-MAPPED-ADDRESS: %w", err)
	}
	a, ok := netip.AddrFromSlice(xor.IP)
	if !ok {
		return netip.Addr{}, Errorf(reasonMalformed, "the STUN response's XOR-MAPPED-ADDRESS is no address")
	}
	return a, nil
}
