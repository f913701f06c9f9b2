package main

import (
	"os"

	"github.com/go-acme/lego/v5/challenge/dns01"
	"github.com/go-acme/lego/v5/providers/dns/dnsupdate"
)

// legoEnvironment is the environment that configures lego's RFC 2136
// provider for o, as docs/acme.md gives it for lego's CLI (`--dns rfc2136`):
// the provider reads these names since lego v5 renamed it dnsupdate (whose
// own names are DNSUPDATE_*). The intervals are a second, the least they
// can be, for a quick test.
func legoEnvironment(o options) map[string]string {
	return map[string]string{
		"RFC2136_NAMESERVER":        o.nameserver,
		"RFC2136_TSIG_ALGORITHM":    "hmac-sha256.",
		"RFC2136_TSIG_KEY":          o.tsigKey,
		"RFC2136_TSIG_SECRET":       o.tsigSecret,
		"RFC2136_POLLING_INTERVAL":  "1",
		"RFC2136_SEQUENCE_INTERVAL": "1",
	}
}

// legoSolver returns lego's RFC 2136 provider, configured from
// legoEnvironment as lego's CLI configures it. It solves one name at a time
// (each UPDATE replaces the name's TXT records) and checks propagation at
// the resolver only: the authoritative name servers' names (the zone's NS
// set) need not resolve.
func legoSolver(o options) (solver, error) {
	for name, value := range legoEnvironment(o) {
		if err := os.Setenv(name, value); err != nil {
			return solver{}, err
		}
	}
	p, err := dnsupdate.NewDNSProvider()
	if err != nil {
		return solver{}, err
	}
	return solver{provider: p, options: []dns01.ChallengeOption{dns01.DisableAuthoritativeNssPropagationRequirement()}}, nil
}
