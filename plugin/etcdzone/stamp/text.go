package stamp

import (
	"fmt"
	"slices"
	"strings"

	"github.com/miekg/dns"
)

// Zone is what makes a zone besides etcd's records: what its stamp says.
type Zone struct {
	// Program names the program that builds the zone, with its version:
	// another release may build it otherwise.
	Program string
	// Tree names the etcd tree the records come from, and the bounds of
	// the TTLs of keys with a lease.
	Tree string
	// Zones are the names of the zones of the server block: each key is
	// the deepest one's.
	Zones []string
	// Records are the records the Corefile makes: the apex's SOA (with
	// serial 0) and NS set, and the delegations' NS, glue and DS records.
	Records []dns.RR
	// View is the rules of the view the zone is shown in (see
	// horizon.State.Rules), "" without one.
	View string
	// Signing says with which keys the zone is signed and when the
	// signatures were made, "" when it is not signed: each signing makes
	// the zone anew.
	Signing string
}

// Text returns z's stamp: a line for each part, a record a line, the
// records sorted.
func (z *Zone) Text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "program %s\ntree %s\nzones %s\n", z.Program, z.Tree, strings.Join(z.Zones, " "))
	records := make([]string, len(z.Records))
	for i, rr := range z.Records {
		records[i] = strings.ReplaceAll(rr.String(), "\t", " ")
	}
	slices.Sort(records)
	for _, r := range records {
		b.WriteString(r + "\n")
	}
	for l := range strings.SplitSeq(strings.TrimSpace(z.View), "\n") {
		if l != "" {
			b.WriteString("view " + l + "\n")
		}
	}
	if z.Signing != "" {
		b.WriteString("dnssec " + z.Signing + "\n")
	}
	return b.String()
}
