package outside

import (
	"net"
	"net/netip"
	"slices"

	"github.com/miekg/dns"
)

// This file is the plugin's one table of where record data holds domain
// names and IP addresses; the judging and the rewriting code both read it.
// Its functions only hand out what a record holds: what becomes of it is
// the policy's to say. internal/viewcheck keeps a table of its own, written
// apart, which also makes a type that miekg/dns adds later fail a test until
// it is placed.

// dataNames returns the domain names in rr's data, its owner name aside:
// those of its name fields, written into names, or HIP's list of rendezvous
// servers.
func dataNames(rr dns.RR, names *[2]string) []string {
	switch rr := rr.(type) {
	case *dns.CNAME:
		names[0] = rr.Target
	case *dns.DNAME:
		names[0] = rr.Target
	case *dns.NS:
		names[0] = rr.Ns
	case *dns.PTR:
		names[0] = rr.Ptr
	case *dns.MX:
		names[0] = rr.Mx
	case *dns.SRV:
		names[0] = rr.Target
	case *dns.SVCB:
		names[0] = rr.Target
	case *dns.HTTPS:
		names[0] = rr.Target
	case *dns.NAPTR:
		names[0] = rr.Replacement
	case *dns.KX:
		names[0] = rr.Exchanger
	case *dns.AFSDB:
		names[0] = rr.Hostname
	case *dns.RT:
		names[0] = rr.Host
	case *dns.LP:
		names[0] = rr.Fqdn
	case *dns.NSAPPTR:
		names[0] = rr.Ptr
	case *dns.MB:
		names[0] = rr.Mb
	case *dns.MD:
		names[0] = rr.Md
	case *dns.MF:
		names[0] = rr.Mf
	case *dns.MG:
		names[0] = rr.Mg
	case *dns.MR:
		names[0] = rr.Mr
	case *dns.NSEC:
		names[0] = rr.NextDomain
	case *dns.NXT:
		names[0] = rr.NextDomain
	case *dns.RRSIG:
		names[0] = rr.SignerName
	case *dns.SIG:
		names[0] = rr.SignerName
	case *dns.TKEY:
		names[0] = rr.Algorithm
	case *dns.TSIG:
		names[0] = rr.Algorithm
	case *dns.IPSECKEY:
		if rr.GatewayType != dns.IPSECGatewayHost {
			return nil
		}
		names[0] = rr.GatewayHost
	case *dns.AMTRELAY:
		if rr.GatewayType != dns.AMTRELAYHost {
			return nil
		}
		names[0] = rr.GatewayHost
	case *dns.SOA:
		names[0], names[1] = rr.Ns, rr.Mbox
		return names[:2]
	case *dns.RP:
		names[0], names[1] = rr.Mbox, rr.Txt
		return names[:2]
	case *dns.MINFO:
		names[0], names[1] = rr.Rmail, rr.Email
		return names[:2]
	case *dns.PX:
		names[0], names[1] = rr.Map822, rr.Mapx400
		return names[:2]
	case *dns.TALINK:
		names[0], names[1] = rr.PreviousName, rr.NextName
		return names[:2]
	case *dns.HIP:
		return rr.RendezvousServers
	default:
		return nil
	}
	return names[:1]
}

// dataPrefix returns the i-th address or prefix in the data of rr, a record
// of a type other than A, AAAA, SVCB and HTTPS (whose addresses are replaced,
// not judged whole: see address and hint); ok is false past the last. A
// single address is a prefix of its full length; a malformed one is the zero
// Prefix. They come one at a time so that the judging needs no room for an
// APL record's list of prefixes.
func dataPrefix(rr dns.RR, i int) (pr netip.Prefix, ok bool) {
	if apl, isAPL := rr.(*dns.APL); isAPL {
		if i < len(apl.Prefixes) {
			return aplPrefix(apl.Prefixes[i]), true
		}
		return pr, false
	}
	if i > 0 {
		return pr, false // the other types hold one at the most
	}
	switch rr := rr.(type) {
	case *dns.L32:
		return single(rr.Locator32, true), true
	case *dns.L64:
		// An ILNP locator is the upper 64 bits of IPv6 addresses.
		var b [16]byte
		for j := range 8 {
			b[j] = byte(rr.Locator64 >> (56 - 8*j))
		}
		return netip.PrefixFrom(netip.AddrFrom16(b), 64), true
	case *dns.IPSECKEY:
		return gateway(rr.GatewayType, rr.GatewayAddr)
	case *dns.AMTRELAY:
		return gateway(rr.GatewayType, rr.GatewayAddr)
	}
	return pr, false
}

// gateway returns the address of an IPSECKEY or AMTRELAY gateway, when the
// gateway is one (the gateway types of the two are numbered alike).
func gateway(typ uint8, ip net.IP) (netip.Prefix, bool) {
	switch typ {
	case dns.IPSECGatewayIPv4:
		return single(ip, true), true
	case dns.IPSECGatewayIPv6:
		return single(ip, false), true
	}
	return netip.Prefix{}, false
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

// unmandate removes keys from the mandatory key of s, and the mandatory key
// itself when it is left empty (RFC 9460 section 8).
func unmandate(s *dns.SVCB, keys []dns.SVCBKey) {
	s.Value = slices.DeleteFunc(s.Value, func(kv dns.SVCBKeyValue) bool {
		m, ok := kv.(*dns.SVCBMandatory)
		if !ok {
			return false
		}
		m.Code = slices.DeleteFunc(m.Code, func(k dns.SVCBKey) bool { return slices.Contains(keys, k) })
		return len(m.Code) == 0
	})
}
