// Package externaldns writes DNS records into etcd the way external-dns's
// coredns provider and its TXT registry write them, so tests and the demo
// serve exactly what a cluster would hold. It must write nothing that
// external-dns would not: test/externaldns/ holds it to external-dns's own
// code.
//
// external-dns stores each target of a record under its own key: the record's
// name reversed into a path below the prefix, plus one random label of 8
// hexadecimal digits, e.g. /skydns/com/example/app/1a2b3c4d holding
// {"host":"192.168.0.51","targetstrip":1}. Its TXT registry marks ownership
// with a TXT record per record type under a type-prefixed name (a-app,
// aaaa-app, cname-app, txt-app), e.g.
// {"text":"\"heritage=external-dns,external-dns/owner=default,external-dns/resource=ingress/default/app\"","targetstrip":1}.
// Releases before v0.18.0 also wrote the ownership text under the record's
// own name (Legacy). A PTR record (external-dns v0.22.0 and later) is stored
// under its reverse name itself, without a random label.
package externaldns

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// DefaultPrefix is external-dns's default etcd prefix (its --coredns-prefix)
// and the etcd plugin's default path.
const DefaultPrefix = "/skydns/"

// DefaultOwner is external-dns's default owner id (its --txt-owner-id).
const DefaultOwner = "default"

// Format is the way a release of external-dns's TXT registry marks
// ownership.
type Format int

const (
	// Current is the format of external-dns v0.18.0 and later: one
	// ownership record per record type, under the type-prefixed name
	// (a-app.example.com).
	Current Format = iota
	// Legacy is the format of external-dns v0.12.0 to v0.17: as Current,
	// and, except for AAAA records, the same ownership text under the
	// record's own name. The coredns provider stores that text in the value
	// of the record's first target, beside its host
	// ({"host":"192.168.0.51","text":"\"heritage=...\"","targetstrip":1}),
	// or, for a TXT record, under a key of its own.
	Legacy
)

// Record is one DNS record set as external-dns manages it.
type Record struct {
	// Name is the record's domain name, e.g. "app.example.com", or, for a
	// PTR record, the reverse name, e.g. "51.0.168.192.in-addr.arpa".
	Name string
	// Type is "A", "AAAA", "CNAME", "TXT" or "PTR".
	Type string
	// Targets are the addresses (A, AAAA), the canonical name (CNAME), the
	// texts (TXT) or the name a PTR record points to; each one is stored
	// under a key of its own, except for PTR, where external-dns stores the
	// first target only.
	Targets []string
	// TTL in seconds; 0 leaves it to the DNS server's default.
	TTL uint32
	// Resource names the Kubernetes object the record comes from, e.g.
	// "ingress/default/app". Empty: no ownership record is written.
	Resource string
	// Owner is the registry's owner id; empty means DefaultOwner.
	Owner string
	// Format is the registry's format; the zero value is Current.
	Format Format
}

// service is the JSON value of one key, with the fields external-dns sets,
// in its order.
type service struct {
	Host        string `json:"host,omitempty"`
	Text        string `json:"text,omitempty"`
	TTL         uint32 `json:"ttl,omitempty"`
	TargetStrip int    `json:"targetstrip,omitempty"`
}

// Put writes r under prefix (DefaultPrefix when empty): one key per target,
// and, when r names a Resource, its ownership TXT record(s). Records already
// stored for the name stay; use Delete first to replace them.
func Put(ctx context.Context, cli *clientv3.Client, prefix string, r Record) error {
	owned := ownership(r)
	if r.Type == "PTR" {
		return putPTR(ctx, cli, prefix, r, owned)
	}
	for i, target := range r.Targets {
		s := service{Host: target, TTL: r.TTL, TargetStrip: 1}
		if r.Type == "TXT" {
			s = service{Text: target, TTL: r.TTL, TargetStrip: 1}
		} else if i == 0 && owned != "" && r.Format == Legacy && r.Type != "AAAA" {
			s.Text = owned
		}
		if err := put(ctx, cli, prefix, r.Name, s); err != nil {
			return err
		}
	}
	if owned == "" {
		return nil
	}
	if r.Type == "TXT" && r.Format == Legacy {
		if err := put(ctx, cli, prefix, r.Name, service{Text: owned, TargetStrip: 1}); err != nil {
			return err
		}
	}
	return put(ctx, cli, prefix, registryName(r.Type, r.Name), service{Text: owned, TargetStrip: 1})
}

// putPTR writes the PTR record r and its ownership record owned (none when
// empty) as external-dns does: each under its reverse name itself, with no
// random label, since the etcd plugin answers PTR queries from that key only.
func putPTR(ctx context.Context, cli *clientv3.Client, prefix string, r Record, owned string) error {
	if len(r.Targets) > 0 {
		s := service{Host: r.Targets[0], TTL: r.TTL}
		if err := putJSON(ctx, cli, Key(prefix, r.Name), s); err != nil {
			return err
		}
	}
	if owned == "" {
		return nil
	}
	return putJSON(ctx, cli, Key(prefix, registryName(r.Type, r.Name)), service{Text: owned})
}

// ownership returns the text of r's ownership records, or "" when r names no
// Resource.
func ownership(r Record) string {
	if r.Resource == "" {
		return ""
	}
	owner := r.Owner
	if owner == "" {
		owner = DefaultOwner
	}
	return fmt.Sprintf(`"heritage=external-dns,external-dns/owner=%s,external-dns/resource=%s"`, owner, r.Resource)
}

// Delete removes every record external-dns stored for name under prefix
// (DefaultPrefix when empty), of any type, and their ownership records, as
// external-dns up to v0.21 does when the resource behind name goes away.
// Names below name are not touched.
func Delete(ctx context.Context, cli *clientv3.Client, prefix, name string) error {
	names := []string{name}
	for _, typ := range []string{"A", "AAAA", "CNAME", "TXT", "PTR"} {
		names = append(names, registryName(typ, name))
	}
	for _, n := range names {
		if err := deleteName(ctx, cli, prefix, n, true); err != nil {
			return err
		}
	}
	return nil
}

// DeleteKeepingOwnership is Delete as external-dns v0.22.0 and later do it:
// they delete an ownership record by its name's key alone, so the ownership
// records stay, except a PTR record's, which is stored under that key.
func DeleteKeepingOwnership(ctx context.Context, cli *clientv3.Client, prefix, name string) error {
	if err := deleteName(ctx, cli, prefix, name, true); err != nil {
		return err
	}
	return deleteName(ctx, cli, prefix, registryName("PTR", name), false)
}

// deleteName removes the key of name (a PTR record or its ownership record)
// and, if labeled, the keys of name's random labels.
func deleteName(ctx context.Context, cli *clientv3.Client, prefix, name string, labeled bool) error {
	if _, err := cli.Delete(ctx, Key(prefix, name)); err != nil {
		return err
	}
	if !labeled {
		return nil
	}
	dir := Key(prefix, name) + "/"
	resp, err := cli.Get(ctx, dir, clientv3.WithPrefix(), clientv3.WithKeysOnly())
	if err != nil {
		return err
	}
	for _, kv := range resp.Kvs {
		if strings.Contains(strings.TrimPrefix(string(kv.Key), dir), "/") {
			continue // a name below name
		}
		if _, err := cli.Delete(ctx, string(kv.Key)); err != nil {
			return err
		}
	}
	return nil
}

// Key returns the etcd key of name below prefix (DefaultPrefix when empty),
// as external-dns and the etcd plugin compute it: app.example.com becomes
// /skydns/com/example/app.
func Key(prefix, name string) string {
	if prefix == "" {
		prefix = DefaultPrefix
	}
	labels := strings.Split(strings.ToLower(strings.TrimSuffix(name, ".")), ".")
	for i, j := 0, len(labels)-1; i < j; i, j = i+1, j-1 {
		labels[i], labels[j] = labels[j], labels[i]
	}
	return strings.TrimSuffix(prefix, "/") + "/" + strings.Join(labels, "/")
}

// put stores s under a new random label below name.
func put(ctx context.Context, cli *clientv3.Client, prefix, name string, s service) error {
	return putJSON(ctx, cli, fmt.Sprintf("%s/%08x", Key(prefix, name), rand.Int32()), s)
}

// putJSON stores s under key.
func putJSON(ctx context.Context, cli *clientv3.Client, key string, s service) error {
	value, err := json.Marshal(s)
	if err != nil {
		return err
	}
	_, err = cli.Put(ctx, key, string(value))
	return err
}

// registryName returns the name of the ownership record of name's records of
// type typ: external-dns's TXT registry prefixes the first label with the
// lower-case type ("a-app.example.com").
func registryName(typ, name string) string {
	return strings.ToLower(typ) + "-" + name
}
