package test

import (
	"context"
	"slices"
	"strings"
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// migration has each provider sync the tree the other wrote. The webhook
// takes over the coredns provider's tree without a write, and a copy of
// its own back from the coredns provider without a write. The coredns
// provider writes both, its own after the webhook synced it too, as it
// does at every sync: it keeps their records, but rewrites the names that
// have records of two types (see coreDNSTakesOver).
func (p *webhookPipeline) migration(t *testing.T) {
	before := currentRevision(t, p.etcd)
	p.syncAt(t, coreDNSTree)
	if after := currentRevision(t, p.etcd); after != before {
		t.Errorf("the webhook wrote to the coredns provider's tree: revision %d, was %d", after, before)
	}
	p.coreDNSTakesOver(t, coreDNSTree)

	const copied = "/rollback/"
	p.copyTree(t, webhookTree, copied)
	p.coreDNSTakesOver(t, copied)
	before = currentRevision(t, p.etcd)
	p.syncAt(t, copied)
	if after := currentRevision(t, p.etcd); after != before {
		t.Errorf("the webhook wrote to its tree after the coredns provider synced it: revision %d, was %d", after, before)
	}
}

// coreDNSTakesOver syncs the tree at prefix with the coredns provider, and
// fails t unless the tree keeps its records, and the provider writes only
// names with records of two types (A and AAAA, A and TXT) and their
// ownership records. Its Records makes one endpoint of a name's records,
// of the type of the first key, so that it rewrites such a name at every
// sync and leaves records there twice: ownership records, or a key holding
// the A record and the text the webhook keeps apart.
func (p *webhookPipeline) coreDNSTakesOver(t *testing.T, prefix string) {
	t.Helper()
	records := func() []string {
		tree, _ := skydnsTree(t, p.etcd, prefix)
		unfolded, _ := unfoldTexts(t, tree)
		return slices.Compact(unfolded)
	}
	was := records()
	written := p.coreDNSWrites(t, prefix)
	var twoTypes []string
	for _, name := range []string{pipeDual, pipeMulti, pipeMixed} {
		twoTypes = append(twoTypes, name, "a-"+name, "aaaa-"+name, "txt-"+name)
	}
	for _, name := range written {
		if !slices.Contains(twoTypes, name) {
			t.Errorf("the coredns provider rewrote %s%s, which has records of one type", prefix, name)
		}
	}
	if now := records(); !slices.Equal(now, was) {
		t.Errorf("the coredns provider changed the records of %s:\n%s", prefix, diffText(was, now))
	}
	t.Logf("the coredns provider rewrote %q of %s", written, prefix)
}

// syncAt runs external-dns once through a webhook writing the tree at
// path.
func (p *webhookPipeline) syncAt(t *testing.T, path string) {
	t.Helper()
	w := p.startWebhook(t, path)
	defer w.Stop()
	runExternalDNS(t, p.api, webhookProvider(webhookURL(w)), pipelineFlags...)
}

// copyTree copies the keys below from to below to.
func (p *webhookPipeline) copyTree(t *testing.T, from, to string) {
	t.Helper()
	resp, err := p.etcd.Client().Get(context.Background(), from, clientv3.WithPrefix())
	if err != nil {
		t.Fatal(err)
	}
	var puts []clientv3.Op
	for _, kv := range resp.Kvs {
		puts = append(puts, clientv3.OpPut(to+strings.TrimPrefix(string(kv.Key), from), string(kv.Value)))
	}
	if _, err := p.etcd.Client().Txn(context.Background()).Then(puts...).Commit(); err != nil {
		t.Fatal(err)
	}
}

// coreDNSWrites syncs the tree at prefix with the coredns provider, and
// returns the names of the keys it wrote or deleted, sorted.
func (p *webhookPipeline) coreDNSWrites(t *testing.T, prefix string) []string {
	t.Helper()
	before := currentRevision(t, p.etcd)
	p.syncCoreDNS(t, prefix)
	was, err := p.etcd.Client().Get(context.Background(), prefix, clientv3.WithPrefix(), clientv3.WithRev(before))
	if err != nil {
		t.Fatal(err)
	}
	now, err := p.etcd.Client().Get(context.Background(), prefix, clientv3.WithPrefix())
	if err != nil {
		t.Fatal(err)
	}
	kept := map[string]bool{}
	var names []string
	for _, kv := range now.Kvs {
		kept[string(kv.Key)] = true
		if kv.ModRevision > before {
			names = append(names, ownerName(t, prefix, kv))
		}
	}
	for _, kv := range was.Kvs {
		if !kept[string(kv.Key)] {
			names = append(names, ownerName(t, prefix, kv))
		}
	}
	slices.Sort(names)
	return slices.Compact(names)
}
