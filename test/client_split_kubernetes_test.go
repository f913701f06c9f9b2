package test

import (
	"testing"

	"github.com/coredns/coredns/plugin/test"

	"github.com/miekg/dns"
	corev1 "k8s.io/api/core/v1"
)

// TestKubernetesClientSplit checks corefile-examples/kubernetes/
// client-split.yaml, decoded strictly with the other manifests: the
// Deployment runs the image as coredns-external's does, with
// client-split.Corefile from its ConfigMap; the LoadBalancer Service reaches
// its DNS ports and keeps the clients' addresses (externalTrafficPolicy:
// Local). Then it starts CoreDNS with that Corefile and the Deployment's
// environment (LAN_NETWORKS set to lanNetworks, and the test's etcd and
// upstream), and asks it from the LAN, from the Internet and as the probes
// would.
func TestKubernetesClientSplit(t *testing.T) {
	m := readManifests(t)
	deploy := m.deployment(t, "coredns-split")
	c := deploy.Spec.Template.Spec.Containers[0]
	checkCoreDNSPod(t, deploy)
	svc := m.service(t, "coredns-split")
	checkService(t, svc, deploy)
	if svc.Spec.ExternalTrafficPolicy != corev1.ServiceExternalTrafficPolicyLocal {
		t.Errorf("service %s has externalTrafficPolicy %q: every client would come from a node's address", svc.Name, svc.Spec.ExternalTrafficPolicy)
	}
	corefile := withPortPlaceholders(t, m.corefile(t, deploy), c)
	if want := withoutHeader(examplePorts.Replace(readExample(t, "client-split.Corefile"))); corefile != want {
		t.Errorf("the ConfigMap's Corefile differs from client-split.Corefile's:\n%s\nclient-split.Corefile:\n%s", corefile, want)
	}
	env := withoutEtcdSecurity(containerEnv(c))
	if env["LAN_NETWORKS"] == "" {
		t.Error("the Deployment sets no LAN_NETWORKS: nobody would get the LAN view")
	}

	etcd := startEtcd(t)
	putRecords(t, etcd, a("app."+env["DOMAIN"], exampleInternal))
	upstream := startCoreDNS(t, upstreamCorefile)
	env["ETCD_ENDPOINT"] = etcd.Endpoint()
	env["UPSTREAM"] = upstream.Addr("upstream")
	env["LAN_NETWORKS"] = lanNetworks
	setEnv(t, env)
	srv := clientSplit{startExample(t, corefile, env)}
	t.Run("LAN", func(t *testing.T) { checkInternal(t, srv.Addr("dns")) })
	t.Run("Internet", func(t *testing.T) {
		srv.check(t, internetClient, test.Case{
			Qname: "app." + env["DOMAIN"] + ".", Qtype: dns.TypeA,
			Answer: []dns.RR{test.A("app." + env["DOMAIN"] + ". 303 IN A " + env["GLOBAL_ADDR"])},
		})
	})
	checkProbes(t, srv.coreDNS, c)
}
