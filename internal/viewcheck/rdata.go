package viewcheck

import (
	"fmt"
	"net"
	"net/netip"
	"reflect"

	"github.com/miekg/dns"
)

// Fields names the fields of a record type's data (as miekg/dns's struct
// for the type names them) that hold a domain name or an IP address.
type Fields struct {
	// Names are fields holding a domain name (string) or several ([]string).
	Names []string
	// Addrs are fields holding an address (net.IP), APL prefixes
	// ([]dns.APLPrefix), SVCB parameters whose hints hold addresses
	// ([]dns.SVCBKeyValue), or an ILNP locator (uint64: the upper 64 bits of
	// IPv6 addresses).
	Addrs []string
}

// Rdata says, for every record type miekg/dns knows, which fields of its
// data hold a domain name or an address: an empty entry says it holds
// neither. A type that miekg/dns adds later has no entry, and
// TestRdataCoversEveryType fails until someone decides how it is handled,
// here and in the plugin.
//
// Text fields are not names or addresses (TXT, SPF, URI targets, CAA values,
// HINFO): the view does not parse free text.
var Rdata = map[uint16]Fields{
	dns.TypeA:        {Addrs: []string{"A"}},
	dns.TypeAAAA:     {Addrs: []string{"AAAA"}},
	dns.TypeL32:      {Addrs: []string{"Locator32"}},
	dns.TypeL64:      {Addrs: []string{"Locator64"}},
	dns.TypeAPL:      {Addrs: []string{"Prefixes"}},
	dns.TypeSVCB:     {Names: []string{"Target"}, Addrs: []string{"Value"}},
	dns.TypeHTTPS:    {Names: []string{"Target"}, Addrs: []string{"Value"}},
	dns.TypeIPSECKEY: {Names: []string{"GatewayHost"}, Addrs: []string{"GatewayAddr"}},
	dns.TypeAMTRELAY: {Names: []string{"GatewayHost"}, Addrs: []string{"GatewayAddr"}},

	dns.TypeCNAME:   {Names: []string{"Target"}},
	dns.TypeDNAME:   {Names: []string{"Target"}},
	dns.TypeNS:      {Names: []string{"Ns"}},
	dns.TypePTR:     {Names: []string{"Ptr"}},
	dns.TypeNSAPPTR: {Names: []string{"Ptr"}},
	dns.TypeMX:      {Names: []string{"Mx"}},
	dns.TypeSRV:     {Names: []string{"Target"}},
	dns.TypeNAPTR:   {Names: []string{"Replacement"}},
	dns.TypeKX:      {Names: []string{"Exchanger"}},
	dns.TypeAFSDB:   {Names: []string{"Hostname"}},
	dns.TypeRT:      {Names: []string{"Host"}},
	dns.TypeLP:      {Names: []string{"Fqdn"}},
	dns.TypeMB:      {Names: []string{"Mb"}},
	dns.TypeMD:      {Names: []string{"Md"}},
	dns.TypeMF:      {Names: []string{"Mf"}},
	dns.TypeMG:      {Names: []string{"Mg"}},
	dns.TypeMR:      {Names: []string{"Mr"}},
	dns.TypeSOA:     {Names: []string{"Ns", "Mbox"}},
	dns.TypeRP:      {Names: []string{"Mbox", "Txt"}},
	dns.TypeMINFO:   {Names: []string{"Rmail", "Email"}},
	dns.TypePX:      {Names: []string{"Map822", "Mapx400"}},
	dns.TypeTALINK:  {Names: []string{"PreviousName", "NextName"}},
	dns.TypeHIP:     {Names: []string{"RendezvousServers"}},
	dns.TypeNSEC:    {Names: []string{"NextDomain"}},
	dns.TypeNXT:     {Names: []string{"NextDomain"}},
	dns.TypeRRSIG:   {Names: []string{"SignerName"}},
	dns.TypeSIG:     {Names: []string{"SignerName"}},
	dns.TypeTKEY:    {Names: []string{"Algorithm"}},
	dns.TypeTSIG:    {Names: []string{"Algorithm"}},

	// Neither names nor addresses. OPT is the EDNS pseudo-record, no record
	// of the view (an ECS option echoes the client's own subnet).
	dns.TypeOPT: {}, dns.TypeANY: {}, dns.TypeNULL: {}, dns.TypeNXNAME: {},
	dns.TypeTXT: {}, dns.TypeSPF: {}, dns.TypeAVC: {}, dns.TypeRESINFO: {}, dns.TypeNINFO: {},
	dns.TypeHINFO: {}, dns.TypeX25: {}, dns.TypeISDN: {}, dns.TypeURI: {}, dns.TypeCAA: {},
	dns.TypeGPOS: {}, dns.TypeLOC: {}, dns.TypeEID: {}, dns.TypeNIMLOC: {}, dns.TypeNID: {},
	dns.TypeEUI48: {}, dns.TypeEUI64: {}, dns.TypeUINFO: {}, dns.TypeUID: {}, dns.TypeGID: {},
	dns.TypeKEY: {}, dns.TypeDNSKEY: {}, dns.TypeCDNSKEY: {}, dns.TypeRKEY: {},
	dns.TypeDS: {}, dns.TypeCDS: {}, dns.TypeDLV: {}, dns.TypeTA: {},
	dns.TypeNSEC3: {}, dns.TypeNSEC3PARAM: {}, dns.TypeCSYNC: {}, dns.TypeZONEMD: {},
	dns.TypeCERT: {}, dns.TypeSSHFP: {}, dns.TypeTLSA: {}, dns.TypeSMIMEA: {},
	dns.TypeOPENPGPKEY: {}, dns.TypeDHCID: {},
}

// Names returns the domain names in rr's data (its owner name aside),
// read from the fields Rdata lists for its type.
func Names(rr dns.RR) []string {
	var out []string
	v := reflect.ValueOf(rr).Elem()
	for _, f := range Rdata[rr.Header().Rrtype].Names {
		switch x := v.FieldByName(f).Interface().(type) {
		case string:
			if x != "" {
				out = append(out, x)
			}
		case []string:
			out = append(out, x...)
		}
	}
	return out
}

// Addrs returns the addresses and prefixes in rr's data, read from the
// fields Rdata lists for its type: a single address as a prefix of its
// full length. A malformed one is an error.
func Addrs(rr dns.RR) ([]netip.Prefix, error) {
	var out []netip.Prefix
	v := reflect.ValueOf(rr).Elem()
	for _, f := range Rdata[rr.Header().Rrtype].Addrs {
		switch x := v.FieldByName(f).Interface().(type) {
		case net.IP:
			if len(x) == 0 {
				continue // IPSECKEY and AMTRELAY: the gateway is a name or none
			}
			a, ok := netip.AddrFromSlice(x)
			if !ok {
				return nil, fmt.Errorf("malformed address in %s", rr)
			}
			out = append(out, netip.PrefixFrom(a, a.BitLen()))
		case uint64:
			var b [16]byte
			for i := range 8 {
				b[i] = byte(x >> (56 - 8*i))
			}
			out = append(out, netip.PrefixFrom(netip.AddrFrom16(b), 64))
		case []dns.APLPrefix:
			for _, p := range x {
				a, ok := netip.AddrFromSlice(p.Network.IP)
				ones, _ := p.Network.Mask.Size()
				if !ok {
					return nil, fmt.Errorf("malformed prefix in %s", rr)
				}
				out = append(out, netip.PrefixFrom(a, ones))
			}
		case []dns.SVCBKeyValue:
			for _, kv := range x {
				var ips []net.IP
				switch h := kv.(type) {
				case *dns.SVCBIPv4Hint:
					ips = h.Hint
				case *dns.SVCBIPv6Hint:
					ips = h.Hint
				}
				for _, ip := range ips {
					a, ok := netip.AddrFromSlice(ip)
					if !ok {
						return nil, fmt.Errorf("malformed hint in %s", rr)
					}
					out = append(out, netip.PrefixFrom(a, a.BitLen()))
				}
			}
		default:
			return nil, fmt.Errorf("viewcheck: field %s of %T is listed in Rdata, and is of no address kind it reads", f, rr)
		}
	}
	return out, nil
}
