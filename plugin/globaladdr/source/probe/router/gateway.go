package router

import (
	"bufio"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"net/netip"
	"os"
	"strconv"
	"strings"
)

// routeFile is the kernel's IPv4 routing table of the calling thread's
// network namespace (/proc/net is the main thread's).
const routeFile = "/proc/thread-self/net/route"

// DefaultGateway returns the next hop of the IPv4 default route: the router
// that NAT-PMP and PCP ask when no address is given.
func DefaultGateway() (netip.Addr, error) {
	f, err := os.Open(routeFile)
	if err != nil {
		return netip.Addr{}, err
	}
	defer f.Close()
	return parseRoutes(f)
}

// rtfGateway is RTF_GATEWAY, the flag of a route through a next hop.
const rtfGateway = 0x2

// parseRoutes reads the default route's next hop from a table in the format
// of /proc/net/route: a header line, then one route per line with the
// destination, gateway and mask in hexadecimal, in the host's byte order.
func parseRoutes(r io.Reader) (netip.Addr, error) {
	sc := bufio.NewScanner(r)
	sc.Scan() // the header
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 8 || f[1] != "00000000" || f[7] != "00000000" {
			continue
		}
		flags, err := strconv.ParseUint(f[3], 16, 32)
		if err != nil || flags&rtfGateway == 0 {
			continue
		}
		b, err := hex.DecodeString(f[2])
		if err != nil || len(b) != 4 {
			continue
		}
		var a [4]byte
		binary.NativeEndian.PutUint32(a[:], binary.BigEndian.Uint32(b))
		return netip.AddrFrom4(a), nil
	}
	if err := sc.Err(); err != nil {
		return netip.Addr{}, fmt.Errorf("reading %s: %w", routeFile, err)
	}
	return netip.Addr{}, notFound("there is no IPv4 default route through a gateway: name the router's address")
}
