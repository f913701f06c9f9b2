package publish

import (
	"github.com/coredns/caddy"
)

// claimsKey keys, in a Corefile instance's storage, the sets its publish
// directives write: by where the objects go and the set, the place of the
// directive that writes it.
type claimsKey struct{}

// claim records, for the Corefile instance c sets up, that p writes its
// zones' sets, and returns "" or, for a set that another of its blocks
// writes to the same API server and namespace, the zone and the place of
// that block's directive. Two such blocks would take turns writing one
// set, each with its own view. A reload is a new instance, which claims
// anew.
func (p *Publish) claim(c *caddy.Controller) (zone, where string) {
	claims, _ := c.Get(claimsKey{}).(map[string]string)
	if claims == nil {
		claims = map[string]string{}
		c.Set(claimsKey{}, claims)
	}
	for _, z := range p.zones {
		if w, ok := claims[p.setKey(z)]; ok {
			return z, w
		}
	}
	for _, z := range p.zones {
		claims[p.setKey(z)] = p.where
	}
	return "", ""
}

// setKey names where zone's set goes: the connection and namespace as the
// Corefile gives them, and the set.
func (p *Publish) setKey(zone string) string {
	return p.kubeconfig + "\x00" + p.context + "\x00" + p.namespace + "\x00" + setOf(zone, p.setName)
}
