package horizon

// Route is how the records of one owner name ask the outside to reach them:
// external-dns's webhook intake stores the ProviderSpecific property
// RouteProperty of an endpoint (the annotation
// external-dns.kubernetes.io/webhook-globaladdr-target on its Ingress or
// Service) in each etcd value it writes, under RouteField, as it stores the
// Mark; a backend gives the view the route of each owner name's records
// (Place).
type Route uint8

const (
	// ViewRoute records say nothing: the view routes them as it routes
	// every name (with a tunnel for the whole view, through it; else by
	// address).
	ViewRoute Route = iota
	// TunnelRoute records are marked "tunnel": outside, their name is a
	// CNAME to the view's tunnel.
	TunnelRoute
	// AddressRoute records are marked "address": their name is served by
	// the global address, not through the tunnel.
	AddressRoute
	// NoRoute records are marked with another value, a target no
	// Corefile defines, or several routes at once: the view never shows
	// them (fail closed).
	NoRoute
)

const (
	// RouteProperty is the ProviderSpecific property of an external-dns
	// endpoint that routes it.
	RouteProperty = "webhook/globaladdr-target"
	// RouteField is the field of a SkyDNS value in etcd that holds the
	// route, as RouteProperty's value.
	RouteField = "globaladdr-target"
)

// ParseRoute returns the route a value of RouteField or RouteProperty
// makes; ok is false for a value that is neither "tunnel" nor "address"
// (NoRoute: fail closed), for the caller to log.
func ParseRoute(value string) (r Route, ok bool) {
	switch value {
	case "tunnel":
		return TunnelRoute, true
	case "address":
		return AddressRoute, true
	}
	return NoRoute, false
}

// JoinRoutes returns the route of a name whose records are routed r and s:
// the same route, or NoRoute when they differ (a name is a CNAME or has
// addresses, never both).
func JoinRoutes(r, s Route) Route {
	if r == s {
		return r
	}
	return NoRoute
}

// Place is what a backend that builds a zone knows of one owner name beside
// its records: whether the name may be an alias (a CNAME's owner: not a
// zone's apex, a name server's name, or a name at or below a delegation;
// RFC 1034 section 3.6.2, RFC 2181 section 10.3), and the route its
// records ask for.
type Place struct {
	Alias bool
	Route Route
}
