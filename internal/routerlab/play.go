package routerlab

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"testing"
)

// Player is a responder of the test's own in miniupnpd's place, on the
// router's LAN address: it answers NAT-PMP's external address request,
// PCP's MAP, and UPnP's GetExternalIPAddress (IGD v1, WANPPPConnection, at
// DescURL, no SSDP) with the address it plays, as a router that reports a
// carrier-grade NAT address does. miniupnpd reports no reserved address,
// hence the player.
type Player struct {
	// DescURL is the URL of its device description.
	DescURL string

	addr netip.Addr
	udp  *net.UDPConn
	web  *http.Server
}

// Play stops miniupnpd and starts a player reporting addr; it stops when t
// ends, or with Stop.
func (l *Lab) Play(t testing.TB, addr netip.Addr) *Player {
	t.Helper()
	l.Stop()
	p := &Player{addr: addr}
	var tcp net.Listener
	err := l.Router.Do(func() (err error) {
		if p.udp, err = net.ListenUDP("udp4", &net.UDPAddr{IP: RouterLAN.AsSlice(), Port: 5351}); err != nil {
			return err
		}
		tcp, err = net.Listen("tcp4", RouterLAN.String()+":0")
		return err
	})
	if err != nil {
		t.Fatalf("the player's sockets: %v", err)
	}
	p.DescURL = "http://" + tcp.Addr().String() + "/rootDesc.xml"
	p.web = &http.Server{Handler: p}
	go p.web.Serve(tcp)
	go p.answer()
	t.Cleanup(p.Stop)
	return p
}

// Stop stops the player.
func (p *Player) Stop() {
	p.udp.Close()
	p.web.Close()
}

// answer answers NAT-PMP and PCP requests until the socket is closed.
func (p *Player) answer() {
	buf := make([]byte, 1100)
	for {
		n, from, err := p.udp.ReadFromUDPAddrPort(buf)
		if errors.Is(err, net.ErrClosed) {
			return
		}
		if ans := p.reply(buf[:n]); ans != nil {
			p.udp.WriteToUDPAddrPort(ans, from)
		}
	}
}

// reply is the answer to req: NAT-PMP's external address response, or the
// MAP response with the request's fields; nil for anything else.
func (p *Player) reply(req []byte) []byte {
	a4 := p.addr.As4()
	switch {
	case len(req) == 2 && req[0] == 0 && req[1] == 0: // NAT-PMP
		ans := make([]byte, 12)
		ans[1] = 128
		binary.BigEndian.PutUint32(ans[4:8], 1000)
		copy(ans[8:], a4[:])
		return ans
	case len(req) == 60 && req[0] == 2 && req[1] == 1: // PCP MAP
		ans := make([]byte, 60)
		copy(ans[24:], req[24:60])
		ans[0], ans[1] = 2, 0x81
		binary.BigEndian.PutUint32(ans[4:8], max(binary.BigEndian.Uint32(req[4:8]), 120))
		binary.BigEndian.PutUint32(ans[8:12], 1000)
		copy(ans[42:44], req[40:42]) // the external port: the internal one
		ext := netip.AddrFrom4(a4).As16()
		copy(ans[44:60], ext[:])
		return ans
	}
	return nil
}

// ServeHTTP serves the device description and GetExternalIPAddress.
func (p *Player) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", `text/xml; charset="utf-8"`)
	switch r.URL.Path {
	case "/rootDesc.xml":
		fmt.Fprint(w, rootDesc)
	case "/ctl/PPPConn":
		fmt.Fprintf(w, soapAnswer, p.addr)
	default:
		http.NotFound(w, r)
	}
}

// rootDesc is the device description of an IGD v1 with one WANPPPConnection
// (a PPPoE line's), where miniupnpd's is an IGD v2 with WANIPConnection.
const rootDesc = `<?xml version="1.0"?>
<root xmlns="urn:schemas-upnp-org:device-1-0">
<specVersion><major>1</major><minor>0</minor></specVersion>
<device>
<deviceType>urn:schemas-upnp-org:device:InternetGatewayDevice:1</deviceType>
<friendlyName>CGNAT router</friendlyName>
<UDN>uuid:00000000-0000-0000-0000-000000000001</UDN>
<deviceList><device>
<deviceType>urn:schemas-upnp-org:device:WANDevice:1</deviceType>
<UDN>uuid:00000000-0000-0000-0000-000000000002</UDN>
<deviceList><device>
<deviceType>urn:schemas-upnp-org:device:WANConnectionDevice:1</deviceType>
<UDN>uuid:00000000-0000-0000-0000-000000000003</UDN>
<serviceList><service>
<serviceType>urn:schemas-upnp-org:service:WANPPPConnection:1</serviceType>
<serviceId>urn:upnp-org:serviceId:WANPPPConn1</serviceId>
<controlURL>/ctl/PPPConn</controlURL>
<eventSubURL>/evt/PPPConn</eventSubURL>
<SCPDURL>/WANPPPCn.xml</SCPDURL>
</service></serviceList>
</device></deviceList>
</device></deviceList>
</device>
</root>
`

// soapAnswer is GetExternalIPAddress's answer, with the address for %s.
const soapAnswer = `<?xml version="1.0"?>
<s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/" s:encodingStyle="http://schemas.xmlsoap.org/soap/encoding/"><s:Body><u:GetExternalIPAddressResponse xmlns:u="urn:schemas-upnp-org:service:WANPPPConnection:1"><NewExternalIPAddress>%s</NewExternalIPAddress></u:GetExternalIPAddressResponse></s:Body></s:Envelope>
`
