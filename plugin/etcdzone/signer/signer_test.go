package signer

import (
	"testing"
	"time"

	"github.com/miekg/dns"
)

// keySets are the key sets the signer takes, made in a test's directory.
var keySets = []struct {
	name  string
	flags []uint16
	alg   uint8
}{
	{"CSK ECDSAP256SHA256", []uint16{257}, dns.ECDSAP256SHA256},
	{"KSK+ZSK ECDSAP256SHA256", []uint16{257, 256}, dns.ECDSAP256SHA256},
	{"CSK ED25519", []uint16{257}, dns.ED25519},
	{"KSK+ZSK ED25519", []uint16{257, 256}, dns.ED25519},
}

func makeKeys(t testing.TB, flags []uint16, alg uint8) []*Key {
	dir := t.TempDir()
	var keys []*Key
	for i, f := range flags {
		keys = append(keys, writeKey(t, dir, "example.com.", f, alg, time.Now().Add(-time.Duration(len(flags)-i)*time.Hour)))
	}
	return keys
}

// TestSignFull signs testZone with each key set, NSEC3 and NSEC, and has
// BIND's dnssec-verify check the whole zone.
func TestSignFull(t *testing.T) {
	for _, ks := range keySets {
		for _, nsec := range []bool{false, true} {
			name := ks.name + " NSEC3"
			if nsec {
				name = ks.name + " NSEC"
			}
			t.Run(name, func(t *testing.T) {
				s := newSigned(t, makeKeys(t, ks.flags, ks.alg), Options{NSEC: nsec}, time.Now(), testZone)
				dnssecVerify(t, s)
			})
		}
	}
}
