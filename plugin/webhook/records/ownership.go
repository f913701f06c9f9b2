package records

import (
	"slices"
	"strings"

	"github.com/miekg/dns"
)

// isOwnership reports whether text, a TXT record's, is an ownership record
// of external-dns's TXT registry: its labels, as the registry reads them
// (quotes trimmed, fields separated by commas), include
// heritage=external-dns. An ownership text is a record set of its own: the
// registry takes the first target of a TXT endpoint for the labels, so one
// that shares a name with a TXT record (under the name itself, as releases
// before v0.18 write it) must not share its endpoint.
func isOwnership(text string) bool {
	for field := range strings.SplitSeq(strings.Trim(text, `"`), ",") {
		if field == "heritage=external-dns" {
			return true
		}
	}
	return false
}

// apexOwnership reports whether text at name, outside the store's zones, is
// an ownership record of a zone's apex: the TXT registry (without
// --txt-prefix or --txt-suffix) names it after the apex with a record type
// and a dash before its first label, a-example.com for the A record of
// example.com. The coredns provider stores it there, beside the zone, and so
// does the store: without it, the apex's record would have no owner, and
// external-dns would never change nor delete it.
func (s *Store) apexOwnership(name, text string) bool {
	label, parent, _ := strings.Cut(name, ".")
	typ, apex, ok := strings.Cut(label, "-")
	if parent != "" {
		apex += "." + parent
	}
	return ok && dns.StringToType[strings.ToUpper(typ)] != dns.TypeNone && isOwnership(text) && slices.Contains(s.Zones, apex)
}
