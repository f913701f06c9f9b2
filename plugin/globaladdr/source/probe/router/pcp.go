package router

import (
	"encoding/binary"
	"errors"
	"net/netip"
)

// PCP (RFC 6887) message fields.
const (
	pcpVersion    = 2
	pcpOpAnnounce = 0
	pcpOpMap      = 1
	pcpResponse   = 0x80 // the R bit of the opcode
	pcpHeader     = 24   // the common header, of requests and responses
	pcpMapSize    = pcpHeader + 36
	pcpMaxSize    = 1100
	protoUDP      = 17
)

// pcpResults names PCP's result codes (RFC 6887 section 7.4).
var pcpResults = [...]string{
	1:  "unsupported version",
	2:  "not authorized",
	3:  "malformed request",
	4:  "unsupported opcode",
	5:  "unsupported option",
	6:  "malformed option",
	7:  "network failure",
	8:  "no resources",
	9:  "unsupported protocol",
	10: "user exceeded quota",
	11: "cannot provide external address",
	12: "address mismatch",
	13: "excessive remote peers",
}

const (
	pcpNetworkFailure  = 7
	pcpNoResources     = 8
	pcpAddressMismatch = 12
)

// pcpMap is a MAP request or response: the mapping of a protocol's internal
// port of the client to a port of an external address.
type pcpMap struct {
	Result   uint8  // a response's result code
	Lifetime uint32 // seconds
	Epoch    uint32 // a response's seconds since the server's epoch
	Nonce    [12]byte
	Protocol uint8
	Internal uint16 // the internal port
	External uint16 // the external port
	Addr     netip.Addr
}

// marshal returns m as a MAP request from the client at client.
func (m *pcpMap) marshal(client netip.Addr) []byte {
	b := make([]byte, pcpMapSize)
	b[0], b[1] = pcpVersion, pcpOpMap
	binary.BigEndian.PutUint32(b[4:8], m.Lifetime)
	c := client.As16()
	copy(b[8:24], c[:])
	copy(b[24:36], m.Nonce[:])
	b[36] = m.Protocol
	binary.BigEndian.PutUint16(b[40:42], m.Internal)
	binary.BigEndian.PutUint16(b[42:44], m.External)
	a := m.Addr.As16()
	copy(b[44:60], a[:])
	return b
}

// errPCPAnnounce is what ParsePCP returns for an ANNOUNCE response: the
// server says that its state or its address may have changed.
var errPCPAnnounce = errors.New("a PCP announcement")

// ParsePCP reads a PCP response: a MAP response, returned with its fields,
// or an ANNOUNCE response, for which the error is errPCPAnnounce. Anything
// else, and any malformed message, is an error. The result code is left for
// the caller to judge.
func ParsePCP(b []byte) (pcpMap, error) {
	var m pcpMap
	switch {
	case len(b) < pcpHeader:
		return m, malformed("malformed PCP answer: %d bytes, less than the %d of the header", len(b), pcpHeader)
	case len(b) > pcpMaxSize:
		return m, malformed("malformed PCP answer: %d bytes, more than PCP's %d", len(b), pcpMaxSize)
	case len(b)%4 != 0:
		return m, malformed("malformed PCP answer: %d bytes, not a multiple of 4", len(b))
	case b[0] != pcpVersion:
		return m, malformed("PCP answer of version %d, not 2 (a version 0 answer is NAT-PMP's: use from natpmp)", b[0])
	case b[1]&pcpResponse == 0:
		return m, malformed("a PCP request, not an answer")
	}
	m.Result = b[3]
	m.Lifetime = binary.BigEndian.Uint32(b[4:8])
	m.Epoch = binary.BigEndian.Uint32(b[8:12])
	switch op := b[1] &^ pcpResponse; op {
	case pcpOpAnnounce:
		return m, errPCPAnnounce
	case pcpOpMap:
	default:
		return m, malformed("PCP answer with opcode %d, neither ANNOUNCE nor MAP", op)
	}
	if len(b) < pcpMapSize {
		if m.Result != 0 {
			return m, nil // an error response need not carry the request's fields
		}
		return m, malformed("malformed PCP MAP answer: %d bytes, less than %d", len(b), pcpMapSize)
	}
	copy(m.Nonce[:], b[24:36])
	m.Protocol = b[36]
	m.Internal = binary.BigEndian.Uint16(b[40:42])
	m.External = binary.BigEndian.Uint16(b[42:44])
	m.Addr = netip.AddrFrom16([16]byte(b[44:60])).Unmap()
	return m, checkOptions(b[pcpMapSize:])
}

// checkOptions checks that b is a sequence of PCP options (RFC 6887
// section 7.3), each a code, a reserved byte, a length and that many bytes
// of data padded to a multiple of 4, that fills b exactly.
func checkOptions(b []byte) error {
	for len(b) > 0 {
		if len(b) < 4 {
			return malformed("malformed PCP option: %d bytes left, less than an option's header", len(b))
		}
		n := (int(binary.BigEndian.Uint16(b[2:4])) + 3) &^ 3
		if n > len(b)-4 {
			return malformed("malformed PCP option %d: length %d, with only %d bytes left", b[0], binary.BigEndian.Uint16(b[2:4]), len(b)-4)
		}
		b = b[4+n:]
	}
	return nil
}
