package test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// chartCase is a values file of the chart's ci/ directory and the example
// of corefile-examples/ whose Corefile it renders: the example with the
// values filled in, but for the lines the values add (optional properties)
// or take out, each compared without its indentation.
type chartCase struct {
	values  string // the file's name in ci/
	example string
	added   []string
	removed []string
}

// chartCases are the chart's ci/ values files.
var chartCases = []chartCase{
	{values: "external-values.yaml", example: "external.Corefile", removed: etcdSecurity(1)},
	{values: "hidden-primary-values.yaml", example: "hidden-primary.Corefile", removed: etcdSecurity(1)},
	{
		values: "ports-values.yaml", example: "single-process.Corefile",
		added:   []string{"fallthrough", "from file /etc/globaladdr/addresses", "map 192.168.0.60 198.51.100.60", "hide internal.example.com"},
		removed: etcdSecurity(2),
	},
	{
		values: "clients-values.yaml", example: "client-split.Corefile",
		added:   []string{"from etcd /globaladdr/example.com", "endpoint http://etcd:2379"},
		removed: etcdSecurity(2),
	},
	{
		values: "etcd-tls-values.yaml", example: "external.Corefile",
		added: []string{
			"exempt-clients 198.51.100.0/24", "nxdomains-per-second 5", "slip 2",
			"ttl 300", "internal 10.0.0.0/8 192.168.0.0/16 fd00::/8", "expose unmarked",
			"refresh 1h", "rname admin.example.com", "glue ns1.example.com 203.0.113.10 2001:db8::10",
			"tls /etc/etcd-tls/tls.crt /etc/etcd-tls/tls.key /etc/etcd-tls/ca.crt",
		},
		removed: []string{"ttl 900", "tls {$ETCD_CERT} {$ETCD_KEY} {$ETCD_CA}"},
	},
	{
		values: "acme-values.yaml", example: "acme.Corefile",
		added:   []string{"update_lease 1h"},
		removed: etcdSecurity(2),
	},
	{
		// The chart's pods take the in-cluster configuration (no
		// kubeconfig), and the namespace of its Role: the release's.
		values: "publish-values.yaml", example: "publish.Corefile",
		added:   []string{"namespace default", "lease globaladdr-example-com 20s", "labels site=home", "property cloudflare/proxied true"},
		removed: append(etcdSecurity(1), "kubeconfig {$KUBECONFIG}", "namespace {$PUBLISH_NAMESPACE}"),
	},
	{
		// The certificate's and the keys' files are the Secrets' volumes.
		values: "xot-values.yaml", example: "xot-primary.Corefile",
		added:   []string{"tls /etc/globaladdr-xot/tls.crt /etc/globaladdr-xot/tls.key", "dnssec /etc/globaladdr-dnssec/", "source 192.0.2.53"},
		removed: append([]string{"tls {$TLS_CERT} {$TLS_KEY}"}, etcdSecurity(1)...),
	},
	{
		values: "tunnel-values.yaml", example: "tunnel.Corefile",
		removed: etcdSecurity(1),
	},
	{values: "bundled-etcd-values.yaml", example: "external.Corefile", added: bundledEtcdLines(1, 1), removed: withoutEndpoint(1)},
	{
		values: "bundled-etcd-ha-values.yaml", example: "acme.Corefile",
		added:   append([]string{"update_lease 1h"}, bundledEtcdLines(3, 2)...),
		removed: withoutEndpoint(2),
	},
	{values: "bundled-etcd-cert-manager-values.yaml", example: "external.Corefile", added: bundledEtcdLines(1, 1), removed: withoutEndpoint(1)},
	{
		values: "uplink-values.yaml", example: "uplink.Corefile",
		added:   []string{"from stun stun1.example.net 192.0.2.3:3478 stun2.example.org", "every 60s"},
		removed: etcdSecurity(1),
	},
}

// etcdSecurity are the lines of n etcdzone blocks of the examples that give
// etcd's credentials and TLS client certificate, which the chart leaves out
// unless its values give them.
func etcdSecurity(n int) []string {
	var lines []string
	for range n {
		lines = append(lines, "credentials {$ETCD_USERNAME} {$ETCD_PASSWORD}", "tls {$ETCD_CERT} {$ETCD_KEY} {$ETCD_CA}")
	}
	return lines
}

// bundledEtcdLines are the lines of n etcdzone blocks of a release that
// runs its own etcd of members members (the release helmRelease, in the
// default namespace): the members' client URLs, and the clients'
// certificate from its Secret's volume (the credentials stay the
// examples').
func bundledEtcdLines(members, n int) []string {
	var urls []string
	for i := range members {
		urls = append(urls, fmt.Sprintf("https://%[1]s-etcd-%[2]d.%[1]s-etcd-peer.default.svc:2379", helmRelease, i))
	}
	var lines []string
	for range n {
		lines = append(lines, "endpoint "+strings.Join(urls, " "), "tls /etc/etcd-tls/tls.crt /etc/etcd-tls/tls.key /etc/etcd-tls/ca.crt")
	}
	return lines
}

// withoutEndpoint are the lines of n etcdzone blocks of the examples that a
// release with its own etcd fills in otherwise: the endpoint (no value
// gives it) and the TLS client certificate.
func withoutEndpoint(n int) []string {
	var lines []string
	for range n {
		lines = append(lines, "endpoint", "tls {$ETCD_CERT} {$ETCD_KEY} {$ETCD_CA}")
	}
	return lines
}

// path is the case's values file, relative to this package.
func (c chartCase) path() string { return filepath.Join(chartDir, "ci", c.values) }

// exampleValues are the values of the chart that fill each placeholder of
// the examples. Secrets stay placeholders: the chart puts them into the
// environment from their Secrets.
var exampleValues = map[string]string{
	"DOMAIN":        "domain",
	"GLOBAL_ADDR":   "globaladdr.addresses",
	"ETCD_ENDPOINT": "etcd.endpoints",
	"NS":            "zone.ns",
	"UPSTREAM":      "lan.upstream",
	"LAN_NETWORKS":  "lan.networks",
	"SECONDARY":     "hiddenPrimary.secondaries",
	"TSIG_KEY":      "tsig.name",
	"HIDE":          "globaladdr.hide",
	"DNS_PORT":      "containerPorts.dns",
	"INTERNAL_PORT": "containerPorts.dns",
	"EXTERNAL_PORT": "containerPorts.external",
	"HEALTH_PORT":   "containerPorts.health",
	"READY_PORT":    "containerPorts.ready",
	"METRICS_PORT":  "containerPorts.metrics",
	"XOT_PORT":      "hiddenPrimary.xot.port",
	"ROUTER":        "globaladdr.from.natpmp.gateway",
	"INTERFACE":     "globaladdr.mapFrom.0.interface",
	"ULA_PREFIX":    "globaladdr.mapFrom.0.from",
	"TUNNEL_TARGET": "globaladdr.tunnel",
}

// checkChartCorefile fails t unless corefile, rendered from c's values, is
// c's example with the values filled in and c's lines added and removed.
func checkChartCorefile(t *testing.T, c chartCase, corefile string) {
	t.Helper()
	values := chartValues(t, c.path())
	want := envPlaceholder.ReplaceAllStringFunc(withoutHeader(readExample(t, c.example)), func(p string) string {
		name := envPlaceholder.FindStringSubmatch(p)[1]
		path, ok := exampleValues[name]
		if !ok {
			return p
		}
		return words(valueAt(values, path))
	})
	added, removed := lineDiff(strings.Split(want, "\n"), strings.Split(corefile, "\n"))
	if !slices.Equal(added, c.added) || !slices.Equal(removed, c.removed) {
		t.Errorf("the Corefile is %s with the values filled in and the lines\n  added %q\nremoved %q;\nwant\n  added %q\nremoved %q\nCorefile:\n%s",
			c.example, added, removed, c.added, c.removed, corefile)
	}
}

// chartValues returns the chart's values with those of the file over them,
// as helm merges them.
func chartValues(t *testing.T, file string) map[string]any {
	t.Helper()
	values := map[string]any{}
	for _, f := range []string{filepath.Join(chartDir, "values.yaml"), file} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var v map[string]any
		if err := yaml.Unmarshal(b, &v); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		mergeValues(values, v)
	}
	return values
}

// mergeValues merges over into dst: maps key by key, anything else whole.
func mergeValues(dst, over map[string]any) {
	for k, v := range over {
		sub, isMap := v.(map[string]any)
		if d, ok := dst[k].(map[string]any); ok && isMap {
			mergeValues(d, sub)
			continue
		}
		dst[k] = v
	}
}

// valueAt returns the value at the dotted path of values, or nil.
func valueAt(values map[string]any, path string) any {
	var v any = values
	for _, key := range strings.Split(path, ".") {
		switch c := v.(type) {
		case map[string]any:
			v = c[key]
		case []any: // a list's element, by its index
			i, err := strconv.Atoi(key)
			if err != nil || i < 0 || i >= len(c) {
				return nil
			}
			v = c[i]
		default:
			return nil
		}
	}
	return v
}

// words returns v as the Corefile writes it: a list's items separated by
// spaces, anything else as it prints.
func words(v any) string {
	if list, ok := v.([]any); ok {
		s := make([]string, len(list))
		for i, item := range list {
			s[i] = fmt.Sprint(item)
		}
		return strings.Join(s, " ")
	}
	return fmt.Sprint(v)
}

// spaces is a run of spaces within a line.
var spaces = regexp.MustCompile(`(\S) {2,}`)

// lineDiff returns the lines of b that a lacks and the lines of a that b
// lacks, along a longest common subsequence, each without its indentation.
// Lines compare with runs of spaces within them taken as one: an empty list
// filled in leaves two.
func lineDiff(a, b []string) (added, removed []string) {
	norm := func(l string) string { return spaces.ReplaceAllString(strings.TrimRight(l, " "), "$1 ") }
	// lcs[i][j] is the length of the longest common subsequence of a[i:] and b[j:].
	lcs := make([][]int, len(a)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if norm(a[i]) == norm(b[j]) {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case i < len(a) && j < len(b) && norm(a[i]) == norm(b[j]):
			i, j = i+1, j+1
		case j < len(b) && (i == len(a) || lcs[i][j+1] >= lcs[i+1][j]):
			added = append(added, strings.TrimSpace(b[j]))
			j++
		default:
			removed = append(removed, strings.TrimSpace(a[i]))
			i++
		}
	}
	return added, removed
}
