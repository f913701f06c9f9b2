package cookie

import (
	"encoding/binary"
	"net/netip"
	"time"

	"github.com/dchest/siphash"
)

// The lengths of RFC 7873's cookies, in bytes.
const (
	clientCookieLen    = 8
	minServerCookieLen = 8
	maxServerCookieLen = 32
	// serverCookieLen is the length of RFC 9018's server cookie: version,
	// reserved, timestamp, hash.
	serverCookieLen = 16
)

// version is the version of RFC 9018's server cookie.
const version = 1

// secret is the key of the server cookies' SipHash-2-4.
type secret [16]byte

// serverCookie returns the server cookie RFC 9018 section 4 makes for the
// client cookie client of the client at addr, at now: the version, 3 bytes
// reserved, the time in seconds, then SipHash-2-4 with s over the client
// cookie, those 8 bytes and the client's address (4 bytes for IPv4, 16 for
// IPv6).
func serverCookie(s secret, client []byte, addr netip.Addr, now time.Time) []byte {
	cookie := make([]byte, 0, serverCookieLen)
	cookie = append(cookie, version, 0, 0, 0)
	cookie = binary.BigEndian.AppendUint32(cookie, uint32(now.Unix())) // serial number arithmetic: it wraps in 2106
	input := append(append(append([]byte(nil), client...), cookie...), addr.Unmap().AsSlice()...)
	hash := siphash.Hash(binary.LittleEndian.Uint64(s[:8]), binary.LittleEndian.Uint64(s[8:]), input)
	return binary.LittleEndian.AppendUint64(cookie, hash)
}
