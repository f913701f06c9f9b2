//go:build linux

package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/miekg/dns"
)

// signedRatios are the ratios the per-core comparison of the signed zone
// (-signed) reports.
var signedRatios = []ratio{
	{"signed-primary, DO", "signed-primary", 0},
	{"BIND 9 signed, DO", "BIND 9 signed", 0},
	{"signed-primary", "BIND 9 signed", 0},
	{"signed-primary, DO", "BIND 9 signed, DO", 0},
}

// startSigned starts the servers of the per-core comparison of the signed
// zone (issue 31) into servers: signed-primary.Corefile (its transfer
// removed: no secondary here) signing the external view with a CSK from
// dnssec-keygen, and BIND 9 serving externalZone signed with the same key
// by dnssec-signzone (NSEC3, iterations 0, no salt). Each is listed twice,
// queried without DO and with it. It profiles none.
func startSigned(ctx context.Context, o options, dir string, env map[string]string, externalZone string, servers *[]*pinned) ([]*pinned, error) {
	keyDir := filepath.Join(dir, "keys")
	if err := os.MkdirAll(keyDir, 0o755); err != nil {
		return nil, err
	}
	out, err := exec.Command("dnssec-keygen", "-q", "-K", keyDir, "-a", "ECDSAP256SHA256", "-f", "KSK", "-n", "ZONE", perCoreZone).Output()
	if err != nil {
		return nil, fmt.Errorf("dnssec-keygen (apt-get install -y bind9-utils): %w", err)
	}
	signedZone := externalZone + ".signed"
	if out, err := exec.Command("dnssec-signzone", "-q", "-S", "-z", "-K", keyDir, "-d", keyDir, "-o", perCoreZone, "-3", "-", "-H", "0", "-f", signedZone, externalZone).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("dnssec-signzone: %w\n%s", err, out)
	}
	example, err := os.ReadFile(filepath.Join(o.examples, "signed-primary.Corefile"))
	if err != nil {
		return nil, err
	}
	head, dirs, err := splitBlock(string(example))
	if err != nil {
		return nil, fmt.Errorf("signed-primary.Corefile: %w", err)
	}
	var corefile strings.Builder
	corefile.WriteString(head)
	for _, d := range dirs {
		if directiveName(d) != "transfer" {
			corefile.WriteString(d)
		}
	}
	corefile.WriteString("}\n")
	env["DNSSEC_KEY"] = filepath.Join(keyDir, strings.TrimSpace(string(out)))
	env["TSIG_KEY"], env["TSIG_SECRET"] = "transfer.", "c2lnbmJlbmNoIHRzaWcgc2VjcmV0IGtleQ=="
	s, err := startPinnedCoreDNS(ctx, o, dir, "signed-primary", corefile.String(), env)
	if err != nil {
		return nil, err
	}
	s.global = true
	*servers = append(*servers, s)
	b, err := startPinnedBIND(ctx, dir, signedZone)
	if err != nil {
		return nil, err
	}
	b.name, b.global = "BIND 9 signed", true
	*servers = append(*servers, b)
	for _, p := range []*pinned{s, b} {
		withDO := *p
		withDO.name, withDO.do = p.name+", DO", true
		*servers = append(*servers, &withDO)
	}
	return nil, nil
}

// with returns d set to query s: with the DO bit if s asks for it.
func (d dnsperf) with(s *pinned) dnsperf {
	d.do = s.do
	return d
}

// signedAnswer checks that the server on port answers name's A record
// with its signature when asked with DO.
func signedAnswer(port int, name string) error {
	m := new(dns.Msg)
	m.SetQuestion(dns.Fqdn(name), dns.TypeA)
	m.SetEdns0(1232, true)
	r, err := exchange(port, m)
	if err != nil {
		return err
	}
	for _, rr := range r.Answer {
		if sig, ok := rr.(*dns.RRSIG); ok && sig.TypeCovered == dns.TypeA {
			return nil
		}
	}
	return errors.New(name + " A with DO: no RRSIG in the answer")
}
