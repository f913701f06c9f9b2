package nameserver

import (
	"crypto/tls"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// AXFR transfers zone from addr, signed with key unless key is nil, and
// returns its records; the test fails unless the transfer succeeds.
func AXFR(t testing.TB, addr, zone string, key *Key) []dns.RR {
	t.Helper()
	rrs, err := TryAXFR(addr, zone, key)
	if err != nil {
		t.Fatalf("AXFR %s from %s: %v", zone, addr, err)
	}
	return rrs
}

// TryAXFR is AXFR that returns the error.
func TryAXFR(addr, zone string, key *Key) ([]dns.RR, error) {
	return TryXoT(addr, zone, key, nil)
}

// TryXoT is TryAXFR over TLS with cfg (RFC 9103: offer ALPN "dot" in
// it), or over TCP when cfg is nil.
func TryXoT(addr, zone string, key *Key, cfg *tls.Config) ([]dns.RR, error) {
	m := new(dns.Msg)
	m.SetAxfr(zone)
	tr := &dns.Transfer{DialTimeout: 2 * time.Second, ReadTimeout: 5 * time.Second, TLS: cfg}
	if key != nil {
		m.SetTsig(key.Name, dns.HmacSHA256, 300, time.Now().Unix())
		tr.TsigSecret = map[string]string{key.Name: key.Secret}
	}
	envs, err := tr.In(m, addr)
	if err != nil {
		return nil, err
	}
	var rrs []dns.RR
	for env := range envs {
		if env.Error != nil {
			return nil, env.Error
		}
		rrs = append(rrs, env.RR...)
	}
	return rrs, nil
}
