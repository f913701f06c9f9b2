package publish

import (
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/globaladdr/globaladdr/internal/setuptest"

	"github.com/coredns/caddy"
)

// inBlockOf returns setup for the server block example.com:53, as
// CoreDNS's parser gives its keys.
func inBlockOf(setup func(*caddy.Controller) error) func(*caddy.Controller) error {
	return func(c *caddy.Controller) error {
		c.ServerBlockKeys = []string{"example.com:53"}
		return setup(c)
	}
}

func TestSetup(t *testing.T) {
	tests := []setuptest.Case{
		{"publish", false, ""},
		{"publish example.com sub.example.com", false, ""},
		{"publish {\n kubeconfig\n}", false, ""},
		{"publish {\n kubeconfig /etc/kube/config\n}", false, ""},
		{"publish {\n kubeconfig /etc/kube/config lab\n}", false, ""},
		{"publish {\n namespace\n}", false, ""},
		{"publish {\n namespace dns\n}", false, ""},
		{"publish {\n lease globaladdr-external\n}", false, ""},
		{"publish {\n lease globaladdr.external 30s\n}", false, ""},
		{"publish {\n lease globaladdr 2s\n}", false, ""},
		{"publish {\n set home\n}", false, ""},
		{"publish {\n labels team=dns app.kubernetes.io/part-of=globaladdr empty=\n labels view=external\n}", false, ""},

		{"publish\npublish", true, `publish is given twice in this server block`},
		{"publish example.org", true, `zone example.org. is not in this server block`},
		{"publish {\n kubeconfig a b c\n}", true, `kubeconfig takes a KUBECONFIG file and a CONTEXT, not "a b c"`},
		{"publish {\n namespace a b\n}", true, `namespace takes one NAMESPACE, not "a b"`},
		{"publish {\n namespace Kube_System\n}", true, `namespace "Kube_System": a lowercase RFC 1123 label`},
		{"publish {\n lease\n}", true, `lease takes a NAME and a DURATION`},
		{"publish {\n lease a 10s c\n}", true, `lease takes a NAME and a DURATION`},
		{"publish {\n lease Bad_Name\n}", true, `lease "Bad_Name": a lowercase RFC 1123 subdomain`},
		{"publish {\n lease globaladdr 1s\n}", true, `lease DURATION "1s": not a duration of 2s or more`},
		{"publish {\n lease globaladdr 1999ms\n}", true, `lease DURATION "1999ms": not a duration of 2s or more`},
		{"publish {\n lease globaladdr soon\n}", true, `lease DURATION "soon": not a duration of 2s or more`},
		{"publish {\n labels\n}", true, `labels takes KEY=VALUE pairs`},
		{"publish {\n labels team\n}", true, `labels "team": not KEY=VALUE`},
		{"publish {\n labels -team=dns\n}", true, `labels "-team=dns": name part must consist of alphanumeric characters`},
		{"publish {\n labels team=-dns\n}", true, `labels "team=-dns": a valid label must be an empty string or consist of alphanumeric characters`},
		{"publish {\n labels app.kubernetes.io/managed-by=me\n}", true, `labels "app.kubernetes.io/managed-by=me": app.kubernetes.io/managed-by is set by publish itself`},
		{"publish {\n labels globaladdr/zone=example.org\n}", true, `labels "globaladdr/zone=example.org": globaladdr/zone is set by publish itself`},
		{"publish {\n labels globaladdr/block=other\n}", true, `labels "globaladdr/block=other": globaladdr/block is set by publish itself`},
		{"publish {\n labels globaladdr/set=other\n}", true, `labels "globaladdr/set=other": globaladdr/set is set by publish itself`},
		{"publish {\n set\n}", true, `set takes one NAME`},
		{"publish {\n set a b\n}", true, `set takes one NAME`},
		{"publish {\n property cloudflare/proxied true tunnelled\n property cloudflare/record-comment globaladdr\n}", false, ""},
		{"publish {\n property cloudflare/proxied\n}", true, `property takes a NAME, a VALUE and, for the tunnel's CNAMEs alone, tunnelled, not "cloudflare/proxied"`},
		{"publish {\n property cloudflare/proxied true cnames\n}", true, `property takes a NAME, a VALUE`},
		{"publish {\n set Home_Lab\n}", true, `set "Home_Lab": a lowercase RFC 1123 label`},
		{"publish {\n namespaces dns\n}", true, `unknown property "namespaces"`},
	}
	setuptest.Run(t, pluginName, inBlockOf(setup), tests)
}

func TestParse(t *testing.T) {
	c := caddy.NewTestController("dns", "publish example.com SUB.example.com. {\n kubeconfig /etc/kube/config lab\n namespace dns\n lease globaladdr-external 30s\n labels team=dns\n labels view=external\n}")
	c.ServerBlockKeys = []string{"dns://example.com:53"}
	p, err := parse(c)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"example.com.", "sub.example.com."}; !slices.Equal(p.zones, want) {
		t.Errorf("zones %v, want %v", p.zones, want)
	}
	if p.kubeconfig != "/etc/kube/config" || p.context != "lab" {
		t.Errorf("kubeconfig %q, context %q", p.kubeconfig, p.context)
	}
	if p.namespace != "dns" || p.lease != "globaladdr-external" || p.leaseDuration != 30*time.Second {
		t.Errorf("namespace %q, lease %q for %s", p.namespace, p.lease, p.leaseDuration)
	}
	if want := map[string]string{"team": "dns", "view": "external"}; !maps.Equal(p.labels, want) {
		t.Errorf("labels %v, want %v", p.labels, want)
	}
	if p.block != "example.com-53" || p.where != "Testfile:1" {
		t.Errorf("block %q, where %q", p.block, p.where)
	}
}

func TestParseDefaults(t *testing.T) {
	c := caddy.NewTestController("dns", "publish {\n kubeconfig\n namespace\n}")
	c.ServerBlockKeys = []string{"example.com:53", "example.org:53"}
	p, err := parse(c)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"example.com.", "example.org."}; !slices.Equal(p.zones, want) {
		t.Errorf("zones %v, want the block's %v", p.zones, want)
	}
	if p.kubeconfig != "" || p.context != "" || p.namespace != "" || p.lease != "" {
		t.Errorf("kubeconfig %q, context %q, namespace %q, lease %q: want none", p.kubeconfig, p.context, p.namespace, p.lease)
	}
	if p.leaseDuration != defaultLeaseDuration || len(p.labels) != 0 {
		t.Errorf("lease duration %s, labels %v", p.leaseDuration, p.labels)
	}
}
