// Package externaldns writes DNS records into etcd the way external-dns's
// coredns provider and its TXT registry write them, so tests and the demo
// serve exactly what a cluster would hold.
//
// external-dns stores each target of a record under its own key: the record's
// name reversed into a path below the prefix, plus one random label of 8
// hexadecimal digits, e.g. /skydns/com/example/app/1a2b3c4d holding
// {"host":"192.168.0.51","targetstrip":1}. Its TXT registry marks ownership
// with a TXT record per record type under a type-prefixed name (a-app,
// aaaa-app, cname-app, txt-app), e.g.
// {"text":"\"heritage=external-dns,external-dns/owner=default,external-dns/resource=ingress/default/app\"","targetstrip":1}.
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

// Record is one DNS record set as external-dns manages it.
type Record struct {
	// Name is the record's domain name, e.g. "app.example.com".
	Name string
	// Type is "A", "AAAA", "CNAME" or "TXT".
	Type string
	// Targets are the addresses (A, AAAA), the canonical name (CNAME) or
	// the texts (TXT); each one is stored under a key of its own.
	Targets []string
	// TTL in seconds; 0 leaves it to the DNS server's default.
	TTL uint32
	// Resource names the Kubernetes object the record comes from, e.g.
	// "ingress/default/app". Empty: no ownership record is written.
	Resource string
	// Owner is the registry's owner id; empty means DefaultOwner.
	Owner string
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
// and, when r names a Resource, its ownership TXT record. Records already
// stored for the name stay; use Delete first to replace them.
func Put(ctx context.Context, cli *clientv3.Client, prefix string, r Record) error {
	for _, target := range r.Targets {
		s := service{Host: target, TTL: r.TTL, TargetStrip: 1}
		if r.Type == "TXT" {
			s = service{Text: target, TTL: r.TTL, TargetStrip: 1}
		}
		if err := put(ctx, cli, prefix, r.Name, s); err != nil {
			return err
		}
	}
	if r.Resource == "" {
		return nil
	}
	owner := r.Owner
	if owner == "" {
		owner = DefaultOwner
	}
	return put(ctx, cli, prefix, registryName(r.Type, r.Name), service{
		Text:        fmt.Sprintf(`"heritage=external-dns,external-dns/owner=%s,external-dns/resource=%s"`, owner, r.Resource),
		TargetStrip: 1,
	})
}

// Delete removes every record external-dns stored for name under prefix
// (DefaultPrefix when empty), of any type, and their ownership records, as
// external-dns does when the resource behind name goes away. Names below
// name are not touched.
func Delete(ctx context.Context, cli *clientv3.Client, prefix, name string) error {
	names := []string{name}
	for _, typ := range []string{"A", "AAAA", "CNAME", "TXT"} {
		names = append(names, registryName(typ, name))
	}
	for _, n := range names {
		dir := Key(prefix, n) + "/"
		resp, err := cli.Get(ctx, dir, clientv3.WithPrefix(), clientv3.WithKeysOnly())
		if err != nil {
			return err
		}
		for _, kv := range resp.Kvs {
			if strings.Contains(strings.TrimPrefix(string(kv.Key), dir), "/") {
				continue // a name below n
			}
			if _, err := cli.Delete(ctx, string(kv.Key)); err != nil {
				return err
			}
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
	value, err := json.Marshal(s)
	if err != nil {
		return err
	}
	key := fmt.Sprintf("%s/%08x", Key(prefix, name), rand.Int32())
	_, err = cli.Put(ctx, key, string(value))
	return err
}

// registryName returns the name of the ownership record of name's records of
// type typ: external-dns's TXT registry prefixes the first label with the
// lower-case type ("a-app.example.com").
func registryName(typ, name string) string {
	return strings.ToLower(typ) + "-" + name
}
