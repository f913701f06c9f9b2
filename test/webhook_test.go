package test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/coredns/coredns/plugin/test"

	"github.com/miekg/dns"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// webhookMedia is external-dns's webhook protocol's media type.
const webhookMedia = "application/external.dns.webhook+json;version=1"

// TestWebhookExample starts webhook.Corefile, the sidecar of external-dns's
// webhook provider, and sends it what external-dns sends: the negotiation,
// a change set with one name marked internal-only and one exposed, and the
// read back. The records land in etcd as the coredns provider writes them,
// and the example Corefiles' views serve them: the internal view both
// names, the external view (external.Corefile) only the one not marked.
func TestWebhookExample(t *testing.T) {
	etcd := startEtcd(t)
	env, _ := exampleEnv(t, etcd)
	setEnv(t, env)
	corefile := readExample(t, "webhook.Corefile")
	checkHeader(t, "webhook.Corefile", corefile)
	c := startExample(t, examplePorts.Replace(corefile), env)
	api := "http://" + c.Addr("webhook")

	checkNegotiation(t, api, exampleDomain)
	changes := `{"create":[` +
		`{"dnsName":"app.` + exampleDomain + `","targets":["` + exampleInternal + `"],"recordType":"A","recordTTL":303},` +
		`{"dnsName":"grafana.` + exampleDomain + `","targets":["192.168.0.52"],"recordType":"A","recordTTL":303,"providerSpecific":[{"name":"webhook/globaladdr-external","value":"false"}]}]}`
	if resp, body := webhookCall(t, "POST", api+"/records", changes); resp.StatusCode != http.StatusNoContent {
		t.Fatalf("POST /records: %d %s", resp.StatusCode, body)
	}
	resp, body := webhookCall(t, "GET", api+"/records", "")
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, `"providerSpecific":[{"name":"webhook/globaladdr-external","value":"false"}]`) {
		t.Fatalf("GET /records: %d %s", resp.StatusCode, body)
	}
	stored, err := etcd.Client().Get(context.Background(), "/skydns/com/example/grafana/", clientv3.WithPrefix())
	if err != nil || len(stored.Kvs) != 1 || !strings.Contains(string(stored.Kvs[0].Value), `"globaladdr-external":"false"`) {
		t.Fatalf("etcd holds %v, %v", stored, err)
	}
	checkHTTP(t, "http://"+c.Addr("health")+"/healthz", "ok")

	views := startExample(t, examplePorts.Replace(readExample(t, "single-process.Corefile")), env)
	waitServing(t, views.Addr("internal"))
	waitServing(t, views.Addr("external"))
	checkInternal(t, views.Addr("internal"))
	checkCase(t, views.Addr("internal"), test.Case{
		Qname: "grafana." + exampleDomain + ".", Qtype: dns.TypeA,
		Answer: []dns.RR{test.A("grafana." + exampleDomain + ". 303 IN A 192.168.0.52")},
	})
	checkExternalView(t, views.Addr("external"), exampleDomain, exampleGlobal)
	if m := query(t, "udp", views.Addr("external"), "grafana."+exampleDomain+".", dns.TypeA); m.Rcode != dns.RcodeNameError {
		t.Errorf("the external view answers grafana, marked internal-only: %v", m)
	}
}

// checkNegotiation asks the webhook API at api what external-dns asks first:
// GET / answers 200 with external-dns's media type exactly (its client
// refuses any other Content-Type), and the zone domain as the domains the
// API manages.
func checkNegotiation(t *testing.T, api, domain string) {
	t.Helper()
	resp, body := webhookCall(t, "GET", api+"/", "")
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != webhookMedia ||
		strings.TrimSpace(body) != `{"include":["`+domain+`"]}` {
		t.Fatalf("GET /: %d, Content-Type %q, %s", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
}

// webhookCall sends external-dns's webhook request method url with body, as
// its client does, and returns the answer and its body.
func webhookCall(t *testing.T, method, url, body string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", webhookMedia)
	if body != "" {
		req.Header.Set("Content-Type", webhookMedia)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}
