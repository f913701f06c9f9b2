package source

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"net/url"
	"strings"

	"github.com/coredns/caddy"
)

// maxEchoBody bounds what an HTTPS echo's body may hold: an address, or a
// trace of a few key=value lines.
const maxEchoBody = 4 << 10

func init() { RegisterProber("https", Observer, parseHTTPS) }

// parseHTTPS reads "from https URL...".
func parseHTTPS(c *caddy.Controller, args []string) ([]Prober, error) {
	if len(args) == 0 {
		return nil, c.Errf("https needs at least one URL, after %q", c.Val())
	}
	var ps []Prober
	for _, arg := range args {
		u, err := url.Parse(arg)
		if err != nil || u.Scheme != "https" || u.Host == "" || u.User != nil {
			return nil, c.Errf("%q is not an https:// URL (without user information)", arg)
		}
		// Logs and metric labels name the URL without its query, which
		// may carry a token.
		shown := *u
		shown.RawQuery, shown.Fragment = "", ""
		ps = append(ps, &httpsProber{url: u.String(), shown: shown.String()})
	}
	return ps, nil
}

// httpsProber asks an HTTPS echo service for the address it sees: a GET
// whose body is the address.
type httpsProber struct {
	url    string
	shown  string       // url without its query, for logs and metrics
	client *http.Client // set by Config.New, with the https_ca roots
}

// newHTTPSClient returns the client of the HTTPS probers: it verifies the
// certificate against roots (nil: the system's), follows no redirect to
// plain HTTP, and takes no cookies. Each probe opens a connection of its
// own: one kept alive between probes would keep the NAT mapping of the
// uplink's old address (until it breaks), and a probe a minute gains
// nothing from it.
func newHTTPSClient(roots *x509.CertPool) *http.Client {
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.TLSClientConfig = &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}
	transport.DisableKeepAlives = true
	return &http.Client{
		Transport: transport,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if req.URL.Scheme != "https" || len(via) >= 5 {
				return errors.New("redirected to " + req.URL.Redacted())
			}
			return nil
		},
	}
}

// String implements fmt.Stringer.
func (p *httpsProber) String() string { return "https " + p.shown }

// Probe implements Prober.
func (p *httpsProber) Probe(ctx context.Context) ([]netip.Addr, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "text/plain")
	resp, err := p.client.Do(req)
	if ue := (*url.Error)(nil); errors.As(err, &ue) {
		ue.URL = p.shown // its query may carry a token
	}
	if err != nil {
		var cv *tls.CertificateVerificationError
		if errors.As(err, &cv) {
			return nil, Errorf(ReasonTLS, "the certificate of %s does not verify: %w", p.shown, err)
		}
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, Errorf(ReasonRejected, "%s answered %s", p.shown, resp.Status)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxEchoBody+1))
	if err != nil {
		return nil, err
	}
	a, err := parseEchoBody(body)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p.shown, err)
	}
	return []netip.Addr{a}, nil
}

// parseEchoBody reads the body of an HTTPS echo: one address in plain text
// (icanhazip, ipify), or key=value lines of which one is ip=ADDRESS
// (Cloudflare's /cdn-cgi/trace). Anything else is malformed.
func parseEchoBody(body []byte) (netip.Addr, error) {
	if len(body) > maxEchoBody {
		return netip.Addr{}, Errorf(ReasonMalformed, "the body is larger than %d bytes", maxEchoBody)
	}
	text := strings.TrimSpace(string(body))
	if !strings.Contains(text, "=") {
		if a, ok := ParseAddr(text); ok {
			return a, nil
		}
		return netip.Addr{}, Errorf(ReasonMalformed, "the body %.64q is not an address", text)
	}
	var (
		a     netip.Addr
		found bool
	)
	for line := range strings.Lines(text) {
		key, value, ok := strings.Cut(strings.TrimSpace(line), "=")
		switch {
		case !ok:
			return netip.Addr{}, Errorf(ReasonMalformed, "the line %.64q is not key=value", line)
		case key != "ip":
			continue
		case found:
			return netip.Addr{}, Errorf(ReasonMalformed, "the body has more than one ip= line")
		}
		if a, ok = ParseAddr(value); !ok {
			return netip.Addr{}, Errorf(ReasonMalformed, "ip=%.64q is not an address", value)
		}
		found = true
	}
	if !found {
		return netip.Addr{}, Errorf(ReasonMalformed, "the body has no ip= line")
	}
	return a, nil
}
