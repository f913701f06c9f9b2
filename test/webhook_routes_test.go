package test

import (
	"testing"
	"time"
)

// routeAnnotation routes a resource's records outside: "tunnel" through the
// view's tunnel (a CNAME), "address" by the global address (see globaladdr's
// tunnel).
const routeAnnotation = "external-dns.kubernetes.io/webhook-globaladdr-target"

// The names of the routes phase: one Ingress routed through the tunnel, one
// by address, one with a route no view has.
var (
	pipeTunnelled = "tun." + exampleDomain
	pipeDirect    = "direct." + exampleDomain
	pipeUnrouted  = "lost." + exampleDomain
)

// routes creates three Ingresses routed by their annotation, beside blog,
// not routed: the route is stored, the internal view answers every name by
// its internal address, an external view without a tunnel lacks the one
// routed through a tunnel, and of the two external views with a tunnel, the
// one for the marked names (tunnelMarked) makes the one routed "tunnel" a
// CNAME and serves the others by address, the one for every name
// (tunnelAll) serves the one routed "address" by address; a route no view
// has is NXDOMAIN in both. A second sync writes nothing. The annotation
// flipped to "address", the next sync brings the address back. The
// Ingresses are deleted at the end.
func (p *webhookPipeline) routes(t *testing.T) {
	tun, direct, lost := ingress("tun", pipeTunnelled), ingress("direct", pipeDirect), ingress("lost", pipeUnrouted)
	tun.Annotations = map[string]string{routeAnnotation: "tunnel"}
	direct.Annotations = map[string]string{routeAnnotation: "address"}
	lost.Annotations = map[string]string{routeAnnotation: "vpn"}
	p.k.apply(t, tun, direct, lost)
	p.k.setStatus(t, "ingress/tun", ingressStatus("192.168.0.81"))
	p.k.setStatus(t, "ingress/direct", ingressStatus("192.168.0.82"))
	p.k.setStatus(t, "ingress/lost", ingressStatus("192.168.0.83"))
	p.sync(t)
	p.checkMark(t, pipeTunnelled, `"globaladdr-target":"tunnel"`)
	p.checkMark(t, pipeDirect, `"globaladdr-target":"address"`)
	p.checkMark(t, pipeUnrouted, `"globaladdr-target":"vpn"`)

	views := []struct {
		name string
		c    *coreDNS
		want map[string]viewAnswer
	}{
		{"tunnel for the marked names", p.tunnelMarked, map[string]viewAnswer{
			pipeTunnelled: aliased(pipeTunnelled, tunnelTarget),
			pipeDirect:    addressed(pipeDirect, exampleGlobal),
			pipeBlog:      addressed(pipeBlog, exampleGlobal),
			pipeUnrouted:  nxdomain,
		}},
		{"tunnel for every name", p.tunnelAll, map[string]viewAnswer{
			pipeTunnelled: aliased(pipeTunnelled, tunnelTarget),
			pipeDirect:    addressed(pipeDirect, exampleGlobal),
			pipeBlog:      aliased(pipeBlog, tunnelTarget),
			pipeUnrouted:  nxdomain,
		}},
	}
	for _, v := range views {
		for name, want := range v.want {
			eventually(t, 10*time.Second, v.name+": "+name, func() error { return want.check(v.c.Addr("dns"), name) })
		}
	}
	// single-process.Corefile's external view has no tunnel: the name
	// routed through one is missing there (fail closed).
	awaitViews(t, p.views, []pipelineCase{
		{pipeTunnelled, addressed(pipeTunnelled, "192.168.0.81"), nxdomain},
		{pipeDirect, addressed(pipeDirect, "192.168.0.82"), addressed(pipeDirect, exampleGlobal)},
		{pipeUnrouted, addressed(pipeUnrouted, "192.168.0.83"), nxdomain},
	})
	p.noChurn(t)

	tun.Annotations[routeAnnotation] = "address"
	p.k.apply(t, tun)
	p.sync(t)
	p.checkMark(t, pipeTunnelled, `"globaladdr-target":"address"`)
	eventually(t, 10*time.Second, "the flipped route serves the address", func() error {
		return addressed(pipeTunnelled, exampleGlobal).check(p.tunnelMarked.Addr("dns"), pipeTunnelled)
	})
	eventually(t, 10*time.Second, "the flipped route, in the view with a tunnel for every name", func() error {
		return addressed(pipeTunnelled, exampleGlobal).check(p.tunnelAll.Addr("dns"), pipeTunnelled)
	})

	// The next phase compares the tree with the coredns provider's, which
	// stores no route.
	p.k.run(t, nil, "delete", "ingress/tun", "ingress/direct", "ingress/lost")
	p.sync(t)
}
