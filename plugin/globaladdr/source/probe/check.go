package probe

import (
	"context"
	"net"
	"net/http"
	"net/url"
	"strconv"

	"github.com/coredns/caddy"
)

// Check tests the path out through one uplink, as a Prober asks for its
// address: an HTTPS GET that answers 2xx, a STUN Binding that is answered,
// or a TCP connection that opens. It follows Prober's contract (a ctx with
// a deadline; an error with its reason, given with Errorf), and reports no
// address: a router that goes on reporting its WAN address while the link
// behind it is dead passes its source's probes, and fails its check.
type Check interface {
	Check(ctx context.Context) error
	// String names the check as the Corefile gives it ("tcp
	// 198.51.100.1:443"), in logs and metrics.
	String() string
	// Host is the name or address the check reaches.
	Host() string
}

// ParseCheck reads the arguments of "check https URL", "check stun
// SERVER" or "check tcp HOST:PORT".
func ParseCheck(c *caddy.Controller, args []string) (Check, error) {
	if len(args) != 2 {
		return nil, c.Errf("check needs one of https URL, stun SERVER or tcp HOST:PORT, after %q", c.Val())
	}
	switch args[0] {
	case "https":
		ps, err := parseHTTPS(c, args[1:])
		if err != nil {
			return nil, err
		}
		return &httpsCheck{*ps[0].(*httpsProber)}, nil
	case "stun":
		ps, err := parseSTUN(c, args[1:])
		if err != nil {
			return nil, err
		}
		return &stunCheck{*ps[0].(*stunProber)}, nil
	case "tcp":
		host, port, err := net.SplitHostPort(args[1])
		if n, perr := strconv.Atoi(port); err != nil || perr != nil || n < 1 || n > 65535 || host == "" {
			return nil, c.Errf("%q is not a TCP HOST:PORT", args[1])
		}
		return &tcpCheck{target: args[1]}, nil
	}
	return nil, c.Errf("unknown check %q: want https, stun or tcp", args[0])
}

// httpsCheck is "check https URL": a GET through the uplink that answers
// 2xx, whatever its body.
type httpsCheck struct{ httpsProber }

// Check implements Check.
func (h *httpsCheck) Check(ctx context.Context) error {
	resp, err := h.get(ctx)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode < http.StatusOK || resp.StatusCode >= http.StatusMultipleChoices {
		return Errorf(reasonRejected, "%s answered %s", h.shown, resp.Status)
	}
	return nil
}

// Host implements Check.
func (h *httpsCheck) Host() string {
	u, _ := url.Parse(h.url) // parsed by parseHTTPS
	return u.Hostname()
}

// stunCheck is "check stun SERVER": a Binding request through the uplink
// that is answered, whatever the address it carries.
type stunCheck struct{ stunProber }

// Check implements Check.
func (s *stunCheck) Check(ctx context.Context) error {
	_, err := s.Probe(ctx)
	return err
}

// Host implements Check.
func (s *stunCheck) Host() string { return hostOf(s.server) }

// tcpCheck is "check tcp HOST:PORT": a TCP connection through the uplink
// that opens (and is closed at once).
type tcpCheck struct {
	target string
	via    Via
}

// String implements Check.
func (t *tcpCheck) String() string { return "tcp " + t.target }

// Host implements Check.
func (t *tcpCheck) Host() string { return hostOf(t.target) }

// RouteVia implements Routed.
func (t *tcpCheck) RouteVia(v Via) { t.via = v }

// Check implements Check.
func (t *tcpCheck) Check(ctx context.Context) error {
	conn, err := t.via.dialer("tcp").DialContext(ctx, "tcp", t.target)
	if err != nil {
		return err
	}
	return conn.Close()
}

// hostOf returns the host of hostport, a valid HOST:PORT.
func hostOf(hostport string) string {
	host, _, _ := net.SplitHostPort(hostport)
	return host
}
