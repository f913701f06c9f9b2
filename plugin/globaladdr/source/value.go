package source

import (
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/globaladdr/globaladdr/plugin/globaladdr/source/probe"
)

// Value is one state of the global addresses, as the sources delivered it.
type Value struct {
	// Addrs is the union of the last good value of each source, in the
	// order of the Corefile, each address once.
	Addrs []netip.Addr
	// Revision is the greatest etcd revision at which one of the values
	// the addresses come from was written (its key's ModRevision); 0 when
	// none comes from etcd. Every replica that reads the same etcd state
	// sees the same Revision.
	Revision int64
}

// maxValue is the size of the largest value a source may hold.
const maxValue = 64 << 10

// parseValue reads the value of a from source: global addresses separated by
// white space, a # starting a comment that runs to the end of its line. A
// value with anything else, or with an address that internal reports, or
// with no address at all, is refused as a whole.
func parseValue(text string, internal func(netip.Addr) bool) ([]netip.Addr, error) {
	if len(text) > maxValue {
		return nil, fmt.Errorf("the value is larger than %d bytes", maxValue)
	}
	var addrs []netip.Addr
	for line := range strings.Lines(text) {
		line, _, _ = strings.Cut(line, "#")
		for _, word := range strings.Fields(line) {
			a, ok := probe.ParseAddr(word)
			switch {
			case !ok:
				return nil, fmt.Errorf("%.64q is not an IPv4 or IPv6 address", word)
			case internal(a):
				return nil, fmt.Errorf("%s is internal, not a global address", a)
			case !slices.Contains(addrs, a):
				addrs = append(addrs, a)
			}
		}
	}
	if len(addrs) == 0 {
		return nil, errors.New("the value holds no address")
	}
	return addrs, nil
}
