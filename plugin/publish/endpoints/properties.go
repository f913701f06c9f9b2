package endpoints

import (
	"strings"

	"github.com/globaladdr/globaladdr/plugin/webhook/wire"
)

// Property is a providerSpecific property that the Corefile gives the
// endpoints of a zone, for the provider of the external-dns that publishes
// them (Cloudflare's proxy: cloudflare/proxied true): on every endpoint,
// or, Tunnelled, on the CNAMEs to the view's tunnel alone.
type Property struct {
	Name, Value string
	Tunnelled   bool
}

// AddProperties gives each endpoint of eps the properties of props that
// fall on it; tunnel is the view's tunnel, a fully qualified host name, ""
// when it has none. An endpoint is tunnelled when it is a CNAME whose one
// target is the tunnel.
func AddProperties(eps []wire.Endpoint, props []Property, tunnel string) {
	if len(props) == 0 {
		return
	}
	for i := range eps {
		e := &eps[i]
		tunnelled := tunnel != "" && e.RecordType == "CNAME" && len(e.Targets) == 1 &&
			strings.EqualFold(strings.TrimSuffix(e.Targets[0], ".")+".", tunnel)
		for _, p := range props {
			if !p.Tunnelled || tunnelled {
				e.ProviderSpecific = append(e.ProviderSpecific, wire.Property{Name: p.Name, Value: p.Value})
			}
		}
	}
}
