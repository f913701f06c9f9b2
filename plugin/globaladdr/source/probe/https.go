package probe

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
	"os"

	"github.com/coredns/caddy"
	"github.com/globaladdr/globaladdr/plugin/pkg/directive"
)

func init() { Register("https", Observer, parseHTTPS) }

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
	via    Via          // where its requests leave from
	client *http.Client // set by HTTPSCA.Give
}

// String implements fmt.Stringer.
func (p *httpsProber) String() string { return "https " + p.shown }

// RouteVia implements Routed.
func (p *httpsProber) RouteVia(v Via) { p.via = v }

// Probe implements Prober.
func (p *httpsProber) Probe(ctx context.Context) ([]netip.Addr, error) {
	resp, err := p.get(ctx)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, Errorf(reasonRejected, "%s answered %s", p.shown, resp.Status)
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

// get sends the GET of a probe, or of a check.
func (p *httpsProber) get(ctx context.Context) (*http.Response, error) {
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
			return nil, Errorf(reasonTLS, "the certificate of %s does not verify: %w", p.shown, err)
		}
		return nil, err
	}
	return resp, nil
}

// HTTPSCA is a block's https_ca property: the CA certificates (PEM) that
// the servers of its from https lines are verified against, in place of
// the system's. Its zero value holds none: the system's roots.
type HTTPSCA struct {
	roots *x509.CertPool // nil for the system's
	// at is the error for https_ca given without a from https line.
	at error
}

// Parse reads "https_ca CACERT", CACERT resolved against the Corefile's
// root directive.
func (ca *HTTPSCA) Parse(c *caddy.Controller, args []string) error {
	if len(args) != 1 {
		return c.Errf("https_ca needs one CACERT file, after %q", c.Val())
	}
	pem, err := os.ReadFile(directive.Rooted(c, args[0]))
	if err != nil {
		return c.Errf("https_ca: %v", err)
	}
	ca.roots = x509.NewCertPool()
	if !ca.roots.AppendCertsFromPEM(pem) {
		return c.Errf("https_ca %q holds no PEM certificate", args[0])
	}
	ca.at = c.Errf("%q is for from https, and there is no from https line", "https_ca")
	return nil
}

// Give gives the https probers among probers and the https checks among
// checks, a block's, the client that verifies against the roots, and
// leaves from each one's Via. It fails for an https_ca given without one.
func (ca *HTTPSCA) Give(probers []Prober, checks []Check) error {
	var https []*httpsProber
	for _, p := range probers {
		if h, ok := p.(*httpsProber); ok {
			https = append(https, h)
		}
	}
	for _, c := range checks {
		if h, ok := c.(*httpsCheck); ok {
			https = append(https, &h.httpsProber)
		}
	}
	for _, h := range https {
		h.client = newHTTPSClient(ca.roots, h.via)
	}
	if ca.at != nil && len(https) == 0 {
		return ca.at
	}
	return nil
}

// newHTTPSClient returns the client of an HTTPS prober or check whose
// requests leave from via: it verifies the certificate against roots (nil:
// the system's), follows no redirect to plain HTTP, and takes no cookies.
// Each probe opens a connection of its own: one kept alive between probes
// would keep the NAT mapping of the uplink's old address (until it breaks),
// and a probe a minute gains nothing from it.
func newHTTPSClient(roots *x509.CertPool, via Via) *http.Client {
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.TLSClientConfig = &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}
	transport.DisableKeepAlives = true
	transport.DialContext = via.dialer("tcp").DialContext
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
