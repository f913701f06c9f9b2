package signer

import (
	"bufio"
	"crypto"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/miekg/dns"
)

// Key is a DNSSEC key read from BIND's key files (K*.key, K*.private).
type Key struct {
	DNSKEY *dns.DNSKEY
	// Prefix is the files' path without .key or .private.
	Prefix string
	// Created is when the key was made: the Created field of the
	// .private file, as dnssec-keygen writes it, else the .key file's
	// modification time. Among the keys that may sign, the newest signs.
	Created time.Time
	signer  crypto.Signer
}

// KSK reports whether k has the SEP flag (257): a key signing key, or a
// combined signing key when the zone has no key without it.
func (k *Key) KSK() bool { return k.DNSKEY.Flags&dns.SEP != 0 }

// Tag is k's key tag.
func (k *Key) Tag() uint16 { return k.DNSKEY.KeyTag() }

// ReadKey reads the key whose files are prefix.key and prefix.private. The
// key must be a zone key of ECDSAP256SHA256 or ED25519.
func ReadKey(prefix string) (*Key, error) {
	prefix = strings.TrimSuffix(strings.TrimSuffix(prefix, ".key"), ".private")
	pub, err := os.Open(prefix + ".key")
	if err != nil {
		return nil, err
	}
	defer pub.Close()
	rr, err := dns.ReadRR(pub, prefix+".key")
	if err != nil {
		return nil, fmt.Errorf("%s.key: %w", prefix, err)
	}
	dnskey, ok := rr.(*dns.DNSKEY)
	switch {
	case !ok:
		return nil, fmt.Errorf("%s.key: no DNSKEY record", prefix)
	case dnskey.Flags&dns.ZONE == 0 || dnskey.Protocol != 3:
		return nil, fmt.Errorf("%s.key: not a zone key", prefix)
	case dnskey.Algorithm != dns.ECDSAP256SHA256 && dnskey.Algorithm != dns.ED25519:
		return nil, fmt.Errorf("%s.key: algorithm %s: only ECDSAP256SHA256 and ED25519 are supported", prefix, dns.AlgorithmToString[dnskey.Algorithm])
	}
	dnskey.Hdr.Name = dns.CanonicalName(dnskey.Hdr.Name)
	priv, err := os.ReadFile(prefix + ".private")
	if err != nil {
		return nil, err
	}
	pk, err := dnskey.ReadPrivateKey(strings.NewReader(string(priv)), prefix+".private")
	if err != nil {
		return nil, fmt.Errorf("%s.private: %w", prefix, err)
	}
	signer, ok := pk.(crypto.Signer)
	if !ok {
		return nil, fmt.Errorf("%s.private: not a signing key", prefix)
	}
	k := &Key{DNSKEY: dnskey, Prefix: prefix, signer: signer, Created: created(string(priv))}
	if k.Created.IsZero() {
		if fi, err := pub.Stat(); err == nil {
			k.Created = fi.ModTime()
		}
	}
	return k, nil
}

// created returns the Created field of a .private file's text (BIND's
// YYYYMMDDHHMMSS, UTC), or the zero time.
func created(private string) time.Time {
	sc := bufio.NewScanner(strings.NewReader(private))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "Created:"); ok {
			t, _ := time.Parse("20060102150405", strings.TrimSpace(v))
			return t
		}
	}
	return time.Time{}
}

// ReadKeys reads every key of zone in dir: the pairs Kzone.+ALG+TAG.key and
// .private, as dnssec-keygen names them. A directory holding none is an
// error, so is a key that does not read; the keys must share one algorithm.
func ReadKeys(dir, zone string) ([]*Key, error) {
	zone = dns.CanonicalName(zone)
	files, err := filepath.Glob(filepath.Join(dir, "K"+escapeGlob(zone)+"+*.key"))
	if err != nil {
		return nil, err
	}
	var keys []*Key
	for _, f := range files {
		k, err := ReadKey(f)
		if err != nil {
			return nil, err
		}
		if k.DNSKEY.Hdr.Name != zone {
			return nil, fmt.Errorf("%s: a key of %s, not %s", f, k.DNSKEY.Hdr.Name, zone)
		}
		keys = append(keys, k)
	}
	return keys, checkKeys(keys)
}

// escapeGlob escapes what filepath.Match would take for a pattern in s.
func escapeGlob(s string) string {
	return strings.NewReplacer(`*`, `\*`, `?`, `\?`, `[`, `\[`, `\`, `\\`).Replace(s)
}

// checkKeys returns an error unless keys is a key set the signer takes: at
// least one key, one algorithm, no key tag twice.
func checkKeys(keys []*Key) error {
	if len(keys) == 0 {
		return fmt.Errorf("no key")
	}
	var tags []uint16
	for _, k := range keys {
		if k.DNSKEY.Algorithm != keys[0].DNSKEY.Algorithm {
			return fmt.Errorf("%s and %s: keys of two algorithms", keys[0].Prefix, k.Prefix)
		}
		if slices.Contains(tags, k.Tag()) {
			return fmt.Errorf("%s: key tag %d twice", k.Prefix, k.Tag())
		}
		tags = append(tags, k.Tag())
	}
	return nil
}
