package signer

import (
	"strings"

	"github.com/miekg/dns"
)

// canonical returns name in the form the signer keeps it: fully qualified,
// lower case in its wire form (RFC 4034 section 6.2, also where the text
// escapes a letter: \065 is a), and a leading "*" escaped unless it is the
// whole first label, so that only a wildcard counts as one. ok is false
// when name is no domain name.
func canonical(name string) (string, bool) {
	wire := make([]byte, 256)
	n, err := dns.PackDomainName(dns.Fqdn(name), wire, 0, nil, false)
	if err != nil {
		return "", false
	}
	for i := 0; i < n && wire[i] != 0; i += int(wire[i]) + 1 {
		label := wire[i+1 : i+1+int(wire[i])]
		for j, b := range label {
			if 'A' <= b && b <= 'Z' {
				label[j] = b + 'a' - 'A'
			}
		}
	}
	out, _, err := dns.UnpackDomainName(wire[:n], 0)
	if err != nil {
		return "", false
	}
	return escapeStar(out), true
}

// escapeStar returns name, in the form UnpackDomainName gives, with a
// leading "*" escaped unless it is the whole first label.
func escapeStar(name string) string {
	if strings.HasPrefix(name, "*") && !strings.HasPrefix(name, "*.") {
		return `\042` + name[1:]
	}
	return name
}

// orderKey returns a string whose byte order is the canonical order of
// names (RFC 4034 section 6.1): the labels from the right, each byte
// preceded by 1 and each label ended by 0, so that a label sorts before
// those it is a prefix of.
func orderKey(name string) string {
	wire := make([]byte, 256)
	n, _ := dns.PackDomainName(name, wire, 0, nil, false)
	var labels [][]byte
	for i := 0; i < n && wire[i] != 0; i += int(wire[i]) + 1 {
		labels = append(labels, wire[i+1:i+1+int(wire[i])])
	}
	var b strings.Builder
	for i := len(labels) - 1; i >= 0; i-- {
		for _, c := range labels[i] {
			b.WriteByte(1)
			b.WriteByte(c)
		}
		b.WriteByte(0)
	}
	return b.String()
}

// parent returns the name above name (which is not the root), both in
// canonical form: a label below the first that begins with "*" is escaped
// once it is the first ("*x" in a.*x.example.com).
func parent(name string) string {
	off, end := dns.NextLabel(name, 0)
	if end {
		return "."
	}
	return escapeStar(name[off:])
}
