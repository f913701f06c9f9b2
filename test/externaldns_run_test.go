package test

import (
	"context"
	"os"
	"os/exec"
	"testing"
	"time"
)

// externalDNSOwner is the TXT registry's owner id external-dns runs with.
const externalDNSOwner = "pipeline"

// runExternalDNS runs one synchronization of external-dns (from kubeBinDir,
// with --once) as a cluster would run it with the coredns provider: it
// reads the Ingresses and Services of the API server api, and writes their
// records for exampleDomain with their ownership records into the etcd at
// etcdURL, under /skydns. When it returns, etcd holds what the API server
// held when it ran; t fails at once unless it succeeds.
func runExternalDNS(t *testing.T, api *apiServer, etcdURL string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, kubeBin(t, "external-dns"),
		"--once",
		"--kubeconfig="+api.kubeconfig,
		"--provider=coredns",
		"--source=ingress",
		"--source=service",
		// Since v0.22.0 it has no default: sync deletes what no resource
		// asks for any more.
		"--policy=sync",
		"--registry=txt",
		"--txt-owner-id="+externalDNSOwner,
		"--domain-filter="+exampleDomain,
		// Any free port, on loopback: its default is :7979 on every
		// address, and it exits when that is taken.
		"--metrics-address=127.0.0.1:0",
		"--log-level=debug",
	)
	cmd.Env = append(os.Environ(), "ETCD_URLS="+etcdURL)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("external-dns: %v\n%s", err, out)
	}
}
