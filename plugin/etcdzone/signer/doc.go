// Package signer signs a DNS zone held in memory with DNSSEC, and keeps it
// signed as it changes: only what a change touches is signed anew. It knows
// nothing of etcd nor of etcdzone: it takes RRsets and gives records.
//
// # What it signs
//
// Keys are BIND's key files (K*.key and K*.private, as dnssec-keygen
// writes them): one combined signing key (CSK, the SEP flag), or KSKs and
// ZSKs; ECDSAP256SHA256 or ED25519, one algorithm per zone. The apex gets
// the DNSKEY set, and CDS (SHA-256) and CDNSKEY records of each KSK (RFC
// 7344, RFC 8078), signed by the KSKs; every other authoritative RRset is
// signed by one ZSK (the CSK without ZSKs). Denial of existence is NSEC3
// (RFC 5155: SHA-1, no opt-out, iterations 0 and no salt as RFC 9276 asks,
// empty non-terminals included) or, as an option, NSEC. An NS RRset below
// the apex is a delegation: its NS records and what lies below it (glue)
// are neither signed nor in the chain; its DS RRset, when the zone gives
// one, is signed, else the delegation is insecure. The denial records'
// TTL is the smaller of the SOA's TTL and MINIMUM (RFC 9077).
//
// # Use
//
// A zone's builder (one goroutine) owns one Signer per zone:
//
//	keys, err := signer.ReadKeys("/etc/coredns/keys", "example.com.")
//	s, err := signer.New("example.com.", keys, signer.Options{}, time.Now())
//	diff, err := s.Apply(signer.Sets(zone), time.Now()) // the whole zone, once
//
// Then, per change of the zone (the new content of each changed owner and
// type, an RRset of no records for one deleted, the SOA with its new serial
// among them):
//
//	diff, err := s.Apply([]signer.RRset{{Name: "app.example.com.", Type: dns.TypeA, RRs: rrs}, soa}, time.Now())
//
// Apply re-signs the changed RRsets and fixes the NSEC3 (or NSEC) records
// around the names that appeared or went, and returns a Diff: the records
// the signer adds to the zone (RRSIG, NSEC3 or NSEC, the apex's DNSKEY,
// CDS, CDNSKEY and NSEC3PARAM) that the change removed and added. The
// zone's own change plus the Diff is what an IXFR carries. The error of
// Apply names the RRsets it left out (outside the zone, a type the signer
// makes, a DS at the apex); the rest is applied.
//
// Periodically (every Refresh/10, say), without any change, and whether or
// not the zone's source is reachable:
//
//	diff := s.Refresh(time.Now())
//
// signs anew what expires within Options.Refresh (new signatures expire
// after Options.Validity, less a random part of Options.Jitter, so that
// refreshes spread), and lets a ZSK published for Options.PublishWait take
// over. When the key directory changes, ReadKeys again and:
//
//	diff, err := s.SetKeys(keys, time.Now())
//
// A ZSK rollover by files (RFC 6781's pre-publication): a new key file is
// published at once and signs nothing until it has been published for
// PublishWait (the DNSKEY TTL by default); then it signs (the newest ready
// key signs: the one created last, or, created in the same second, seen
// last) and the data is signed anew; removing the old key's files
// unpublishes it. At no point is a record signed by a key a resolver
// holding the DNSKEY set of the step before does not know. A KSK added is
// published with its CDS and CDNSKEY at once and signs the DNSKEY set
// beside the old one; a parent that scans CDS then holds both DS, until
// the old KSK's files go. The signer keeps when it first saw each key in
// memory only: after a restart in the middle of a rollover, the oldest ZSK
// signs again until the newer ones have been published for PublishWait
// anew (safe, and costs a second full re-sign).
//
// For answers: RRSIGs(name, type) gives an RRset's signatures; Denial(name)
// the NSEC3 (NSEC) record of a name in the chain (NODATA); Cover(name) the
// record whose interval covers a name not in the chain (NXDOMAIN, and the
// wildcard proofs). Records() gives the whole signed zone, SOA first, as a
// transfer or a zone file holds it.
//
// The signer keeps the zone's RRsets as given (owner names in canonical
// form) next to what it adds: about twice the unsigned zone's memory with
// ECDSA; signing 30,000 names takes about a second (see the benchmarks).
package signer
