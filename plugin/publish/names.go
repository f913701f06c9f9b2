package publish

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/miekg/dns"
)

// The labels on every object: they select a publication's objects, and
// let a second external-dns select them with --label-filter.
const (
	managedByLabel = "app.kubernetes.io/managed-by"
	managedBy      = "globaladdr"
	zoneLabel      = "globaladdr/zone"
	blockLabel     = "globaladdr/block"
)

// notInName are the runs of characters a Kubernetes name or label value
// can't hold.
var notInName = regexp.MustCompile(`[^a-z0-9.-]+`)

// aroundDot are the dots of a name with the dots and dashes around them:
// each label of a Kubernetes name begins and ends with a letter or digit.
var aroundDot = regexp.MustCompile(`[.-]*\.[.-]*`)

// nameOf returns s lower case as a Kubernetes name (and label value) may
// have it, at most max characters: other characters become '-', and the
// ends of the name and of each of its labels are letters or digits; the
// root or nothing is "root".
func nameOf(s string, max int) string {
	s = notInName.ReplaceAllString(strings.ToLower(strings.TrimSuffix(s, ".")), "-")
	s = aroundDot.ReplaceAllString(s, ".")
	if len(s) > max {
		s = s[:max]
	}
	s = strings.Trim(s, ".-")
	if s == "" {
		return "root"
	}
	return s
}

// objectName returns the name of part i of the objects of zone, served on
// port.
func objectName(zone, port string, i int) string {
	return fmt.Sprintf("globaladdr.%s.%s.%d", nameOf(zone, 200), port, i)
}

// leaseName returns the default Lease's name of a block publishing zones
// on port: named by the first zone.
func leaseName(zones []string, port string) string {
	return fmt.Sprintf("globaladdr.%s.%s", nameOf(zones[0], 200), port)
}

// labelsOf returns the labels that select the objects of zone, published
// by the block whose first key is block.
func labelsOf(zone, block string) map[string]string {
	return map[string]string{
		managedByLabel: managedBy,
		zoneLabel:      nameOf(dns.CanonicalName(zone), 63),
		blockLabel:     nameOf(block, 63),
	}
}
