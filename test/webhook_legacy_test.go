package test

import (
	"strings"
	"testing"
	"time"
)

// legacyExposureAnnotation is exposureAnnotation under the prefix that
// external-dns read up to v0.21 (external-dns.alpha.kubernetes.io/), which
// v0.22 stopped reading and v0.23 reads again with
// --enable-legacy-annotation-prefix.
const legacyExposureAnnotation = "external-dns.alpha.kubernetes.io/webhook-globaladdr-external"

// pipeLegacy is the name of the legacy annotations phase.
var pipeLegacy = "old." + exampleDomain

// legacyAnnotations is what a user who upgrades external-dns from v0.21 and
// keeps the old annotations meets: an Ingress marked "false" under the old
// prefix, synced by v0.23.0 as it runs by default, loses its mark: the name
// is stored unmarked, public in the external view that shows unmarked names
// (the default), and missing from the one that shows marked names alone
// (expose marked: the way that fails closed). Synced with
// --enable-legacy-annotation-prefix, the mark holds: the name leaves the
// external views. docs/external-dns.md says what to do before upgrading.
func (p *webhookPipeline) legacyAnnotations(t *testing.T) {
	old := ingress("old", pipeLegacy)
	old.Annotations = map[string]string{legacyExposureAnnotation: "false"}
	p.k.apply(t, old)
	p.k.setStatus(t, "ingress/old", ingressStatus("192.168.0.84"))
	p.sync(t)
	tree, _ := skydnsTree(t, p.etcd, webhookTree)
	for _, l := range tree {
		if strings.HasPrefix(l, pipeLegacy+" ") && strings.Contains(l, "globaladdr-external") {
			t.Errorf("v0.23.0 by default read the legacy annotation: etcd holds %s", l)
		}
	}
	awaitViews(t, p.views, []pipelineCase{
		{pipeLegacy, addressed(pipeLegacy, "192.168.0.84"), addressed(pipeLegacy, exampleGlobal)},
	})
	eventually(t, 10*time.Second, "expose marked: "+pipeLegacy, func() error { return nxdomain.check(p.marked.Addr("dns"), pipeLegacy) })

	runExternalDNS(t, p.api, webhookProvider(p.proxy.url), append(pipelineFlags, "--enable-legacy-annotation-prefix")...)
	p.checkMark(t, pipeLegacy, `"globaladdr-external":"false"`)
	awaitViews(t, p.views, []pipelineCase{
		{pipeLegacy, addressed(pipeLegacy, "192.168.0.84"), nxdomain},
	})
	eventually(t, 10*time.Second, "expose marked: "+pipeLegacy, func() error { return nxdomain.check(p.marked.Addr("dns"), pipeLegacy) })

	p.k.run(t, nil, "delete", "ingress/old")
	p.sync(t)
}
