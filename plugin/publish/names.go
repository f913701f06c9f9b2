package publish

import (
	"crypto/sha256"
	"encoding/hex"
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
	setLabel       = "globaladdr/set"
	// blockLabel is the label that named the block (and its port) before
	// a set was named by its zone: objects with it are the old set's.
	blockLabel = "globaladdr/block"
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

// hashLen is how many hexadecimal digits of its SHA-256 tell a set apart
// whose name nameOf had to change.
const hashLen = 8

// uniqueName returns nameOf(s, max), when that is s itself (lower case,
// without the final dot), else nameOf(s, max-hashLen-1) followed by '-' and
// the hash of s: two sets whose names nameOf would make one
// (a_b.example.com and a-b.example.com) get names that differ.
func uniqueName(s string, max int) string {
	if name := nameOf(s, max); name == strings.TrimSuffix(s, ".") {
		return name
	}
	sum := sha256.Sum256([]byte(s))
	return nameOf(s, max-hashLen-1) + "-" + hex.EncodeToString(sum[:])[:hashLen]
}

// setOf returns what names the set of objects of zone: the zone, lower case
// and fully qualified, or NAME/zone when the Corefile names the set. Neither
// the port nor the block's keys are in it: every replica of a Corefile, on
// any port or address, keeps the same set.
func setOf(zone, name string) string {
	zone = dns.CanonicalName(zone)
	if name != "" {
		return name + "/" + zone
	}
	return zone
}

// objectName returns the name of part i of the objects of set.
func objectName(set string, i int) string {
	return fmt.Sprintf("globaladdr.%s.%d", uniqueName(set, 200), i)
}

// leaseName returns the default Lease's name of a block whose first set is
// set.
func leaseName(set string) string {
	return "globaladdr." + uniqueName(set, 200)
}

// labelsOf returns the labels that select the objects of set, of zone.
func labelsOf(set, zone string) map[string]string {
	return map[string]string{
		managedByLabel: managedBy,
		zoneLabel:      nameOf(dns.CanonicalName(zone), 63),
		setLabel:       uniqueName(set, 63),
	}
}

// oldSet returns the selector of the objects of zone that were written
// before sets had names of their own, and whether an object of that
// selector is one of them: named globaladdr.ZONE.PORT.N, with the block's
// label. Once the set is written, they are deleted.
func oldSet(zone string) (map[string]string, func(name string, labels map[string]string) bool) {
	selector := map[string]string{managedByLabel: managedBy, zoneLabel: nameOf(dns.CanonicalName(zone), 63)}
	named := regexp.MustCompile(`^globaladdr\.` + regexp.QuoteMeta(nameOf(zone, 200)) + `\.[0-9]+\.[0-9]+$`)
	return selector, func(name string, labels map[string]string) bool {
		_, block := labels[blockLabel]
		return block && named.MatchString(name)
	}
}
