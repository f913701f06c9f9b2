package test

import (
	"context"
	"net"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/globaladdr/globaladdr/internal/nameserver"
)

// externalDNSOwner is the TXT registry's owner id external-dns runs with.
const externalDNSOwner = "pipeline"

// externalDNSProvider is the provider external-dns writes its records
// through: its flags and its environment.
type externalDNSProvider struct {
	flags, env []string
}

// coreDNSProvider is external-dns's coredns provider, writing into the etcd
// at etcdURL under prefix (its --coredns-prefix, /skydns/ by default).
func coreDNSProvider(etcdURL, prefix string) externalDNSProvider {
	return externalDNSProvider{
		flags: []string{"--provider=coredns", "--coredns-prefix=" + prefix},
		env:   []string{"ETCD_URLS=" + etcdURL},
	}
}

// webhookProvider is external-dns's webhook provider, sending its changes to
// the webhook API at url.
func webhookProvider(url string) externalDNSProvider {
	return externalDNSProvider{flags: []string{"--provider=webhook", "--webhook-provider-url=" + url}}
}

// rfc2136Provider is external-dns's rfc2136 provider, changing zone on the
// name server at addr (host:port) with RFC 2136 UPDATEs signed with key
// (hmac-sha256), and reading it back by AXFR signed with key. The secret
// goes through the environment, as a cluster passes it from a Secret, not
// on the command line.
func rfc2136Provider(addr, zone string, key nameserver.Key) externalDNSProvider {
	host, port, _ := net.SplitHostPort(addr)
	return externalDNSProvider{
		flags: []string{
			"--provider=rfc2136",
			"--rfc2136-host=" + host,
			"--rfc2136-port=" + port,
			// Without its trailing dot: the provider finds an endpoint's
			// zone by the suffix of its name, which has none, and sends
			// the update for any other to the root zone.
			"--rfc2136-zone=" + strings.TrimSuffix(zone, "."),
			"--rfc2136-tsig-keyname=" + key.Name,
			"--rfc2136-tsig-secret-alg=hmac-sha256",
			// Without it, it cannot read the zone and only ever adds.
			"--rfc2136-axfr",
		},
		env: []string{"EXTERNAL_DNS_RFC2136_TSIG_SECRET=" + key.Secret},
	}
}

// pdnsProvider is external-dns's pdns provider, changing the zones of the
// PowerDNS whose API is at url with the API key apiKey (through the
// environment, as rfc2136Provider's secret).
func pdnsProvider(url, apiKey string) externalDNSProvider {
	return externalDNSProvider{
		flags: []string{"--provider=pdns", "--pdns-server=" + url},
		env:   []string{"EXTERNAL_DNS_PDNS_API_KEY=" + apiKey},
	}
}

// runExternalDNS runs one synchronization of external-dns (from kubeBinDir,
// with --once) as a cluster would run it: it reads the Ingresses and
// Services of the API server api (or the sources the flags of p and extra
// give, such as --source=crd, alone), and writes their records for exampleDomain with their
// ownership records through p, owned by externalDNSOwner unless the flags
// give a --txt-owner-id. When it returns, the provider holds what the
// API server held when it ran; t fails at once unless it succeeds.
func runExternalDNS(t *testing.T, api *apiServer, p externalDNSProvider, extra ...string) {
	t.Helper()
	if out, err := tryExternalDNS(t, context.Background(), api, p, extra...); err != nil {
		t.Fatalf("external-dns: %v\n%s", err, out)
	}
}

// tryExternalDNS is runExternalDNS that returns external-dns's output and
// its error, which ending ctx causes too (it kills external-dns).
func tryExternalDNS(t *testing.T, ctx context.Context, api *apiServer, p externalDNSProvider, extra ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	args := externalDNSArgs(api, p, append([]string{"--once"}, extra...))
	cmd := exec.CommandContext(ctx, kubeBin(t, "external-dns"), args...)
	cmd.Env = append(os.Environ(), p.env...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// hasFlag reports whether args give the flag name (--name=value).
func hasFlag(args []string, name string) bool {
	return slices.ContainsFunc(args, func(a string) bool { return strings.HasPrefix(a, name+"=") })
}

// externalDNSArgs returns the arguments external-dns runs with against api
// and p, with the flags extra: those of a cluster's external-dns, with the
// Ingresses and Services as sources and externalDNSOwner as owner, unless
// the flags give theirs.
func externalDNSArgs(api *apiServer, p externalDNSProvider, extra []string) []string {
	given := append(slices.Clone(p.flags), extra...)
	args := []string{
		"--kubeconfig=" + api.kubeconfig,
		// Since v0.22.0 it has no default: sync deletes what no resource
		// asks for any more.
		"--policy=sync",
		"--registry=txt",
		"--domain-filter=" + exampleDomain,
		// Any free port, on loopback: its default is :7979 on every
		// address, and it exits when that is taken.
		"--metrics-address=127.0.0.1:0",
		"--log-level=debug",
	}
	// The sources and the owner, unless the flags give theirs: the second
	// external-dns, which publishes DNSEndpoints, reads no Ingress.
	if !hasFlag(given, "--source") {
		args = append(args, "--source=ingress", "--source=service")
	}
	if !hasFlag(given, "--txt-owner-id") {
		args = append(args, "--txt-owner-id="+externalDNSOwner)
	}
	args = append(args, given...)
	return args
}

// startExternalDNS runs external-dns against api and p, with the flags
// extra, in the background as a cluster runs it (no --once: it
// synchronizes every --interval), until t ends.
func startExternalDNS(t *testing.T, api *apiServer, p externalDNSProvider, extra ...string) {
	t.Helper()
	cmd := exec.Command(kubeBin(t, "external-dns"), externalDNSArgs(api, p, extra)...)
	cmd.Env = append(os.Environ(), p.env...)
	startProgram(t, "external-dns", cmd, t.TempDir())
}
