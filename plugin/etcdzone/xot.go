package etcdzone

import (
	"slices"
	"sync"

	"github.com/coredns/caddy"
	"github.com/coredns/coredns/core/dnsserver"
)

// alpnDoT is the ALPN protocol of DNS over TLS (RFC 7858), which zone
// transfers over TLS negotiate (RFC 9103 section 7.1): BIND 9.18 (named
// and dig +tls) closes a connection that does not.
const alpnDoT = "dot"

// dotBlocks are the configurations of the blocks with etcdzone that the
// tls plugin has not been set up for yet, by the caddy context (the
// Corefile instance) they belong to.
var dotBlocks = struct {
	sync.Mutex
	m map[caddy.Context][]*dnsserver.Config
}{m: map[caddy.Context][]*dnsserver.Config{}}

// The tls plugin comes after etcdzone in plugin.cfg, so the TLS
// configuration of a block exists only once every block's tls directive
// ran; CoreDNS's TLS listener copies it when the servers are made, which
// comes later.
func init() { caddy.RegisterParsingCallback("dns", "tls", offerDoT) }

// expectDoT notes cfg, the configuration of a block with etcdzone, so that
// its TLS listener (a tls:// key) offers ALPN "dot".
func expectDoT(c *caddy.Controller, cfg *dnsserver.Config) {
	dotBlocks.Lock()
	defer dotBlocks.Unlock()
	dotBlocks.m[c.Context()] = append(dotBlocks.m[c.Context()], cfg)
}

// offerDoT adds ALPN "dot" to the TLS configuration the tls plugin gave
// each block with etcdzone of ctx's Corefile. Without ALPN, Go's TLS server
// accepts clients that offer none (NSD) and negotiates nothing with those
// that offer "dot", which BIND takes for a failure. A block's other keys
// (dns://) ignore their TLS configuration; https:// and grpc:// set their
// own protocols.
func offerDoT(ctx caddy.Context) error {
	dotBlocks.Lock()
	cfgs := dotBlocks.m[ctx]
	delete(dotBlocks.m, ctx)
	dotBlocks.Unlock()
	for _, cfg := range cfgs {
		if cfg.TLSConfig != nil && !slices.Contains(cfg.TLSConfig.NextProtos, alpnDoT) {
			cfg.TLSConfig.NextProtos = append(cfg.TLSConfig.NextProtos, alpnDoT)
		}
	}
	return nil
}
