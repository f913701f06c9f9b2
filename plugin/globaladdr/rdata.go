package globaladdr

import (
	"net"
	"net/netip"

	"github.com/miekg/dns"
)

// This file is the plugin's one table of where record data holds domain
// names and IP addresses; the judging and the rewriting code both read it.
// internal/viewcheck keeps a table of its own, written apart, which also
// makes a type that miekg/dns adds later fail a test until it is placed.

// anyName reports whether f returns true for a domain name in rr's data
// (its owner name aside).
func anyName(rr dns.RR, f func(name string) bool) bool {
	switch rr := rr.(type) {
	case *dns.CNAME:
		return f(rr.Target)
	case *dns.DNAME:
		return f(rr.Target)
	case *dns.NS:
		return f(rr.Ns)
	case *dns.PTR:
		return f(rr.Ptr)
	case *dns.MX:
		return f(rr.Mx)
	case *dns.SRV:
		return f(rr.Target)
	case *dns.SVCB:
		return f(rr.Target)
	case *dns.HTTPS:
		return f(rr.Target)
	case *dns.NAPTR:
		return f(rr.Replacement)
	case *dns.KX:
		return f(rr.Exchanger)
	case *dns.AFSDB:
		return f(rr.Hostname)
	case *dns.RT:
		return f(rr.Host)
	case *dns.LP:
		return f(rr.Fqdn)
	case *dns.NSAPPTR:
		return f(rr.Ptr)
	case *dns.MB:
		return f(rr.Mb)
	case *dns.MD:
		return f(rr.Md)
	case *dns.MF:
		return f(rr.Mf)
	case *dns.MG:
		return f(rr.Mg)
	case *dns.MR:
		return f(rr.Mr)
	case *dns.NSEC:
		return f(rr.NextDomain)
	case *dns.NXT:
		return f(rr.NextDomain)
	case *dns.RRSIG:
		return f(rr.SignerName)
	case *dns.SIG:
		return f(rr.SignerName)
	case *dns.TKEY:
		return f(rr.Algorithm)
	case *dns.TSIG:
		return f(rr.Algorithm)
	case *dns.SOA:
		return f(rr.Ns) || f(rr.Mbox)
	case *dns.RP:
		return f(rr.Mbox) || f(rr.Txt)
	case *dns.MINFO:
		return f(rr.Rmail) || f(rr.Email)
	case *dns.PX:
		return f(rr.Map822) || f(rr.Mapx400)
	case *dns.TALINK:
		return f(rr.PreviousName) || f(rr.NextName)
	case *dns.IPSECKEY:
		return rr.GatewayType == dns.IPSECGatewayHost && f(rr.GatewayHost)
	case *dns.AMTRELAY:
		return rr.GatewayType == dns.AMTRELAYHost && f(rr.GatewayHost)
	case *dns.HIP:
		for _, s := range rr.RendezvousServers {
			if f(s) {
				return true
			}
		}
	}
	return false
}

// anyAddr reports whether f returns true for an address or prefix in the
// data of rr, a record of a type other than A, AAAA, SVCB and HTTPS (whose
// addresses are replaced, not judged whole: see address and hintsOf). A
// single address is a prefix of its full length; a malformed one is the
// zero Prefix.
func anyAddr(rr dns.RR, f func(netip.Prefix) bool) bool {
	switch rr := rr.(type) {
	case *dns.L32:
		return f(single(rr.Locator32, true))
	case *dns.L64:
		// An ILNP locator is the upper 64 bits of IPv6 addresses.
		var b [16]byte
		for i := range 8 {
			b[i] = byte(rr.Locator64 >> (56 - 8*i))
		}
		return f(netip.PrefixFrom(netip.AddrFrom16(b), 64))
	case *dns.IPSECKEY:
		return gateway(rr.GatewayType, rr.GatewayAddr, f)
	case *dns.AMTRELAY:
		return gateway(rr.GatewayType, rr.GatewayAddr, f)
	case *dns.APL:
		for _, p := range rr.Prefixes {
			if f(aplPrefix(p)) {
				return true
			}
		}
	}
	return false
}

// gateway judges the address of an IPSECKEY or AMTRELAY gateway, when it
// is one (the gateway types of the two are numbered alike).
func gateway(typ uint8, ip net.IP, f func(netip.Prefix) bool) bool {
	switch typ {
	case dns.IPSECGatewayIPv4:
		return f(single(ip, true))
	case dns.IPSECGatewayIPv6:
		return f(single(ip, false))
	}
	return false
}

// single returns ip as a prefix of its full length; the zero Prefix when
// it is malformed.
func single(ip net.IP, v4 bool) netip.Prefix {
	a, ok := addrOf(ip, v4)
	if !ok {
		return netip.Prefix{}
	}
	return netip.PrefixFrom(a, a.BitLen())
}

// aplPrefix returns an APL item's prefix; the zero Prefix when it is
// malformed.
func aplPrefix(p dns.APLPrefix) netip.Prefix {
	ones, bits := p.Network.Mask.Size()
	a, ok := addrOf(p.Network.IP, bits == 8*net.IPv4len)
	if !ok || bits == 0 || bits != a.BitLen() {
		return netip.Prefix{}
	}
	return netip.PrefixFrom(a, ones)
}

// address returns the address of an A or AAAA record; ok is false for
// records of other types.
func address(rr dns.RR) (ip net.IP, v4, ok bool) {
	switch rr := rr.(type) {
	case *dns.A:
		return rr.A, true, true
	case *dns.AAAA:
		return rr.AAAA, false, true
	}
	return nil, false, false
}

// hintsOf returns the SVCB data of an SVCB or HTTPS record, whose ipv4hint
// and ipv6hint keys hold addresses; nil for records of other types.
func hintsOf(rr dns.RR) *dns.SVCB {
	switch rr := rr.(type) {
	case *dns.SVCB:
		return rr
	case *dns.HTTPS:
		return &rr.SVCB
	}
	return nil
}

// hint returns the address list of an SVCB key, to read or to replace, and
// whether it holds IPv4 addresses; nil for keys that hold no addresses.
func hint(kv dns.SVCBKeyValue) (ips *[]net.IP, v4 bool) {
	switch kv := kv.(type) {
	case *dns.SVCBIPv4Hint:
		return &kv.Hint, true
	case *dns.SVCBIPv6Hint:
		return &kv.Hint, false
	}
	return nil, false
}
