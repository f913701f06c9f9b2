package router

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/huin/goupnp"
	"github.com/huin/goupnp/dcps/internetgateway2"
	"github.com/huin/goupnp/httpu"
	"github.com/huin/goupnp/soap"
	"github.com/huin/goupnp/ssdp"
)

// maxHTTPBody bounds what is read of a router's device description or SOAP
// answer: a few kilobytes in practice.
const maxHTTPBody = 256 << 10

// httpClient is the HTTP client of the UPnP exchanges: no proxy (the router
// is on the LAN), and a bounded body.
var httpClient = http.Client{Transport: limitBody{&http.Transport{
	Proxy:       nil,
	DialContext: (&net.Dialer{}).DialContext,
}}}

func init() { goupnp.HTTPClientDefault = &httpClient }

// igdDevices are the device types SSDP searches for: IGD v2 and v1.
var igdDevices = []string{"urn:schemas-upnp-org:device:InternetGatewayDevice:2", "urn:schemas-upnp-org:device:InternetGatewayDevice:1"}

// externalIP is a WAN connection service: WANIPConnection (v1 and v2) or
// WANPPPConnection.
type externalIP interface {
	GetExternalIPAddressCtx(ctx context.Context) (string, error)
}

// UPnP asks an Internet gateway device for its external address with
// GetExternalIPAddress (UPnP IGD v1 or v2, WANIPConnection or
// WANPPPConnection). Without a URL, it finds the gateway by SSDP, and again
// when the one it found fails.
type UPnP struct {
	// URL is the device description's; nil to find it by SSDP.
	URL *url.URL

	mu    sync.Mutex
	conns []externalIP // the services of the last description read
}

// String names the prober as a Corefile names it.
func (p *UPnP) String() string {
	if p.URL == nil {
		return "upnp"
	}
	return "upnp " + p.URL.String()
}

// Probe asks the gateway's WAN connection services, in turn, for the
// external address; the first that answers gives it.
func (p *UPnP) Probe(ctx context.Context) (netip.Addr, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.conns == nil {
		conns, err := p.find(ctx)
		if err != nil {
			return netip.Addr{}, err
		}
		p.conns = conns
	}
	var errs []error
	for _, c := range p.conns {
		s, err := c.GetExternalIPAddressCtx(ctx)
		if err == nil {
			return parseUPnPAddr(s)
		}
		var fault *soap.SOAPFaultError
		if errors.As(err, &fault) {
			err = refused("the router refused GetExternalIPAddress: UPnP error %d %.64q", fault.Detail.UPnPError.Errorcode, fault.Detail.UPnPError.ErrorDescription)
		}
		errs = append(errs, err)
	}
	p.conns = nil // read the description (or search) again next time
	return netip.Addr{}, fmt.Errorf("GetExternalIPAddress: %w", errors.Join(errs...))
}

// parseUPnPAddr reads the NewExternalIPAddress of an answer: an IPv4
// address; empty (or 0.0.0.0) when the router has none it reports.
func parseUPnPAddr(s string) (netip.Addr, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return netip.Addr{}, ErrNoUsableAddress
	}
	a, err := netip.ParseAddr(s)
	if err != nil || !a.Is4() {
		return netip.Addr{}, malformed("GetExternalIPAddress answered %.64q, not an IPv4 address", s)
	}
	if a.IsUnspecified() {
		return netip.Addr{}, ErrNoUsableAddress
	}
	return a, nil
}

// ssdpWait is how long an SSDP search waits for answers: MX 1, and a
// little more for the answers to arrive.
const ssdpWait = 1200 * time.Millisecond

// find returns the WAN connection services of the device at URL, or of the
// first device SSDP finds that has one.
func (p *UPnP) find(ctx context.Context) ([]externalIP, error) {
	if p.URL != nil {
		root, err := goupnp.DeviceByURLCtx(ctx, p.URL)
		if err != nil {
			return nil, err
		}
		return services(root, p.URL)
	}
	locs, err := search(ctx)
	if err != nil {
		return nil, err
	}
	var errs []error
	for _, loc := range locs {
		root, err := goupnp.DeviceByURLCtx(ctx, loc)
		if err == nil {
			var conns []externalIP
			if conns, err = services(root, loc); err == nil {
				return conns, nil
			}
		}
		errs = append(errs, err)
	}
	if len(errs) == 0 {
		return nil, notFound("SSDP found no Internet gateway device (is UPnP on in the router, and does multicast reach us? else name the device description's URL)")
	}
	return nil, notFound("SSDP found no usable Internet gateway device: %v", errors.Join(errs...))
}

// search sends an SSDP search for IGD v1 and v2 devices from the interface
// of the default route, and returns the description URLs of those that
// answered within ssdpWait.
func search(ctx context.Context) ([]*url.URL, error) {
	if d, ok := ctx.Deadline(); ok && time.Until(d) < ssdpWait {
		return nil, notFound("an SSDP search takes %v, more than the %v left: every is too short for from upnp without a URL", ssdpWait, time.Until(d).Round(time.Millisecond))
	}
	ctx, cancel := context.WithTimeout(ctx, ssdpWait)
	defer cancel()
	var (
		mu   sync.Mutex
		locs []*url.URL
		errs []error
		wg   sync.WaitGroup
	)
	for _, target := range igdDevices {
		wg.Go(func() {
			found, err := searchOne(ctx, target)
			mu.Lock()
			defer mu.Unlock()
			locs = append(locs, found...)
			errs = append(errs, err)
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil && len(locs) == 0 {
		return nil, fmt.Errorf("SSDP search: %w", err)
	}
	return locs, nil
}

// searchOne sends an SSDP search for target, and returns the description
// URLs of the devices that answered before ctx is done.
func searchOne(ctx context.Context, target string) ([]*url.URL, error) {
	client, err := httpu.NewHTTPUClient()
	if err != nil {
		return nil, err
	}
	defer client.Close()
	answers, err := ssdp.RawSearch(ctx, client, target, 2)
	if err != nil {
		return nil, err
	}
	var locs []*url.URL
	for _, a := range answers {
		if loc, err := a.Location(); err == nil {
			locs = append(locs, loc)
		}
	}
	return locs, nil
}

// services returns the WAN connection services of root, described at loc.
func services(root *goupnp.RootDevice, loc *url.URL) ([]externalIP, error) {
	var conns []externalIP
	ip2, _ := internetgateway2.NewWANIPConnection2ClientsFromRootDevice(root, loc)
	for _, c := range ip2 {
		c.SOAPClient.HTTPClient = httpClient
		conns = append(conns, c)
	}
	ip1, _ := internetgateway2.NewWANIPConnection1ClientsFromRootDevice(root, loc)
	for _, c := range ip1 {
		c.SOAPClient.HTTPClient = httpClient
		conns = append(conns, c)
	}
	ppp, _ := internetgateway2.NewWANPPPConnection1ClientsFromRootDevice(root, loc)
	for _, c := range ppp {
		c.SOAPClient.HTTPClient = httpClient
		conns = append(conns, c)
	}
	if len(conns) == 0 {
		return nil, notFound("%s describes no WANIPConnection or WANPPPConnection service", loc)
	}
	return conns, nil
}

// limitBody is an http.RoundTripper whose answers' bodies fail past
// maxHTTPBody bytes.
type limitBody struct{ http.RoundTripper }

// RoundTrip implements http.RoundTripper.
func (l limitBody) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := l.RoundTripper.RoundTrip(req)
	if err == nil {
		resp.Body = http.MaxBytesReader(nil, resp.Body, maxHTTPBody)
	}
	return resp, err
}
