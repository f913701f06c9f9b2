package records

import (
	"errors"
	"fmt"
	"math"
	"net/netip"
	"slices"
	"strings"

	"github.com/globaladdr/globaladdr/plugin/webhook/wire"

	"github.com/miekg/dns"
)

// Check returns why the store can't hold ep, nil when it can: a record of
// its zones (or an ownership record of a zone's apex: apexOwnership), and a
// SkyDNS value holds one target of an A, AAAA, CNAME, TXT or (at a reverse
// name) PTR record, with a TTL, and no routing policy.
func (s *Store) Check(ep *wire.Endpoint) error {
	name := ep.Name()
	switch {
	case name == "" || strings.Contains(name, "/") || !validName(name):
		return fmt.Errorf("%q is not a domain name the tree can hold", ep.DNSName)
	case !s.holds(name) && (ep.RecordType != "TXT" || slices.ContainsFunc(ep.Targets, func(t string) bool {
		return !s.apexOwnership(name, t)
	})):
		return fmt.Errorf("%s is outside %s", name, strings.Join(s.Zones, ", "))
	case ep.SetIdentifier != "":
		return errors.New("a set identifier (a routing policy) has no place in a SkyDNS value")
	case len(ep.Targets) == 0:
		return errors.New("it has no target")
	case ep.RecordTTL < 0 || ep.RecordTTL > math.MaxUint32:
		return fmt.Errorf("its TTL %d is out of range", ep.RecordTTL)
	}
	reverse := isReverse(name)
	for _, t := range ep.Targets {
		if err := checkTarget(ep.RecordType, t, reverse); err != nil {
			return err
		}
	}
	if (ep.RecordType == "CNAME" || ep.RecordType == "PTR" || (ep.RecordType == "TXT" && reverse)) && len(ep.Targets) > 1 {
		return fmt.Errorf("a %s record has one target here, not %d", ep.RecordType, len(ep.Targets))
	}
	return nil
}

// checkTarget returns why a record of type typ can't have target t (at a
// reverse name when reverse).
func checkTarget(typ, t string, reverse bool) error {
	switch typ {
	case "A", "AAAA":
		a, err := netip.ParseAddr(t)
		if err != nil || a.Zone() != "" || (typ == "A") != a.Is4() {
			return fmt.Errorf("%q is not an IPv%s address", t, map[bool]string{true: "4", false: "6"}[typ == "A"])
		}
	case "CNAME", "PTR":
		if (typ == "PTR") != reverse {
			return fmt.Errorf("a %s record is read back as %s at this name", typ, map[bool]string{true: "PTR", false: "CNAME"}[reverse])
		}
		if _, err := netip.ParseAddr(t); err == nil || !validName(strings.TrimSuffix(t, ".")) {
			return fmt.Errorf("%q is not a host name", t)
		}
	case "TXT":
		if t == "" {
			return errors.New("an empty text is not stored")
		}
	default:
		return fmt.Errorf("the SkyDNS format holds A, AAAA, CNAME, TXT and PTR records, not %s", typ)
	}
	return nil
}

// validName reports whether name, without its final dot, is a domain name
// of non-empty labels.
func validName(name string) bool {
	_, ok := dns.IsDomainName(name)
	return ok && !strings.Contains(name, "..") && !strings.HasPrefix(name, ".")
}

// Adjust returns the endpoints of eps the store can hold, with no property
// but the marks (the exposure mark and the route, see markFields), which are all
// it stores: another property would come back missing from Records, and
// external-dns would update the name at every sync. It also returns those
// it leaves out.
func (s *Store) Adjust(eps []*wire.Endpoint) ([]*wire.Endpoint, []Refusal) {
	kept := make([]*wire.Endpoint, 0, len(eps))
	var refused []Refusal
	for _, ep := range eps {
		if err := s.Check(ep); err != nil {
			refused = append(refused, Refusal{ep, err})
			continue
		}
		ep.ProviderSpecific = marked(ep).properties()
		kept = append(kept, ep)
	}
	return kept, refused
}
