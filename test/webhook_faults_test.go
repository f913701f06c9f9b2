package test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"
)

// faults makes a fault as each of three change sets arrives at the
// webhook. etcd stopped, or the webhook stopped: external-dns fails, and
// once etcd, or a new webhook, is back, the next sync converges and the one
// after writes nothing. external-dns killed, its change set applied all
// the same: external-dns, run again, writes nothing. In the end the
// webhook's tree holds each record once: those the coredns provider holds
// for the same resources.
func (p *webhookPipeline) faults(t *testing.T) {
	t.Run("etcd down", func(t *testing.T) {
		p.k.run(t, nil, "delete", "ingress/blog")
		p.setServiceIPs(t, "multi", append(multiAddrs, "192.168.0.63")...)
		before := currentRevision(t, p.etcd)
		p.failedSync(t, p.etcd.Stop)
		if err := p.etcd.Restart(); err != nil {
			t.Fatal(err)
		}
		if after := currentRevision(t, p.etcd); after != before {
			t.Errorf("etcd's revision moved from %d to %d while it was down", before, after)
		}
		p.converge(t)
		checkStored(t, p.etcd, map[string][]string{
			pipeBlog:  nil,
			pipeMulti: {"192.168.0.61", "192.168.0.62", "192.168.0.63", "fd00::61"},
		})
	})
	t.Run("webhook restarted", func(t *testing.T) {
		news := "news." + exampleDomain
		p.k.apply(t, ingress("news", news))
		p.k.setStatus(t, "ingress/news", ingressStatus("192.168.0.55", "fd00::55"))
		p.failedSync(t, p.webhook.Stop)
		p.webhook = p.startWebhook(p.test, webhookTree)
		p.proxy.retarget(t, webhookURL(p.webhook))
		p.converge(t)
		checkStored(t, p.etcd, map[string][]string{news: {"192.168.0.55", "fd00::55"}})
	})
	t.Run("external-dns killed", func(t *testing.T) {
		p.k.setStatus(t, "ingress/app", ingressStatus("192.168.0.57"))
		p.k.run(t, nil, "delete", "ingress/grafana", "dnsendpoint/wiki")
		ctx, kill := context.WithCancel(context.Background())
		defer kill()
		exited := make(chan struct{})
		applied := p.proxy.arm(func() {
			kill()
			<-exited
		})
		out, err := tryExternalDNS(t, ctx, p.api, webhookProvider(p.proxy.url), pipelineFlags...)
		close(exited)
		if err == nil {
			t.Fatalf("external-dns, killed, succeeded:\n%s", out)
		}
		awaitApplied(t, applied, out)
		checkStored(t, p.etcd, map[string][]string{pipeApp: {"192.168.0.57"}, pipeGrafana: nil, pipeWiki: nil})
		before := currentRevision(t, p.etcd)
		if after := p.sync(t); after != before {
			t.Errorf("external-dns, restarted, wrote a change set the webhook had applied: revision %d, was %d", after, before)
		}
	})

	got, _ := skydnsTree(t, p.etcd, webhookTree)
	if distinct := slices.Compact(slices.Clone(got)); len(distinct) != len(got) {
		t.Errorf("the webhook's tree holds a record twice:\n%s", strings.Join(got, "\n"))
	}
	p.syncCoreDNS(t, coreDNSTree)
	ref, _ := skydnsTree(t, p.etcd, coreDNSTree)
	records, _ := unfoldTexts(t, ref)
	if want := slices.Compact(records); !slices.Equal(got, want) {
		t.Errorf("the webhook's tree differs from the coredns provider's (its records once each, the texts in keys of their own):\n%s", diffText(want, got))
	}
}

// failedSync runs external-dns once through the proxy, armed with fault,
// and fails t unless it fails.
func (p *webhookPipeline) failedSync(t *testing.T, fault func()) {
	t.Helper()
	applied := p.proxy.arm(fault)
	out, err := tryExternalDNS(t, context.Background(), p.api, webhookProvider(p.proxy.url), pipelineFlags...)
	if err == nil {
		t.Fatalf("external-dns succeeded, with the change set failed:\n%s", out)
	}
	awaitApplied(t, applied, out)
}

// awaitApplied waits until the webhook answered the change set that met a
// fault (applied, from webhookProxy.arm), and fails t at once when none
// comes: external-dns, whose output is out, failed before it sent one.
func awaitApplied(t *testing.T, applied <-chan struct{}, out string) {
	t.Helper()
	select {
	case <-applied:
	case <-time.After(time.Minute):
		t.Fatalf("no change set reached the webhook; external-dns said:\n%s", out)
	}
}

// converge syncs once, which writes, and again, which does not.
func (p *webhookPipeline) converge(t *testing.T) {
	t.Helper()
	before := currentRevision(t, p.etcd)
	rev := p.sync(t)
	if rev == before {
		t.Errorf("the sync after the fault wrote nothing")
	}
	if again := p.sync(t); again != rev {
		t.Errorf("the second sync after the fault wrote to etcd: revision %d, was %d", again, rev)
	}
}
