package stamp

import (
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/globaladdr/globaladdr/internal/etcdtest"

	"github.com/miekg/dns"
)

// TestKeep keeps a stamp in a real etcd: the first keep writes it; the same
// text again writes nothing and gives the revision it was written at;
// another text writes anew, at a greater revision, and says what the key
// held before.
func TestKeep(t *testing.T) {
	s := etcdtest.StartT(t)
	ctx := context.Background()
	const key = "/globaladdr/serial/skydns/external/example.com."
	first, before, err := keep(ctx, s.Client(), key, "global 203.0.113.10\n")
	if err != nil || before != "" {
		t.Fatalf("first keep: %v, held %q", err, before)
	}
	again, before, err := keep(ctx, s.Client(), key, "global 203.0.113.10\n")
	if err != nil || again != first || before != "global 203.0.113.10\n" {
		t.Errorf("the same text: revision %d (was %d), held %q, %v", again, first, before, err)
	}
	if resp, err := s.Client().Get(ctx, key); err != nil || resp.Header.Revision != first {
		t.Errorf("the same text was written again: etcd at revision %d, the stamp at %d (%v)", resp.Header.Revision, first, err)
	}
	changed, before, err := keep(ctx, s.Client(), key, "global 203.0.113.11\n")
	if err != nil || changed <= first || before != "global 203.0.113.10\n" {
		t.Errorf("another text: revision %d after %d, held %q, %v", changed, first, before, err)
	}
}

// TestKeepReplicas has replicas keep the same stamp at once: one writes it,
// and they all get its revision.
func TestKeepReplicas(t *testing.T) {
	s := etcdtest.StartT(t)
	const key = "/globaladdr/serial/skydns/external/example.com."
	revs := make([]int64, 8)
	var wg sync.WaitGroup
	for i := range revs {
		wg.Go(func() {
			rev, _, err := keep(context.Background(), s.Client(), key, "global 203.0.113.10\n")
			if err != nil {
				t.Error(err)
			}
			revs[i] = rev
		})
	}
	wg.Wait()
	if slices.Min(revs) != slices.Max(revs) {
		t.Errorf("replicas disagree on the stamp's revision: %v", revs)
	}
}

func TestDiff(t *testing.T) {
	got := Diff("a\nb\nc\n", "a\nc\nd\n")
	if want := []string{"-b", "+d"}; !slices.Equal(got, want) {
		t.Errorf("Diff = %v, want %v", got, want)
	}
}

// TestText checks a stamp's text: the records sorted, a line each, the
// view's rules each marked.
func TestText(t *testing.T) {
	ns, _ := dns.NewRR("example.com. 3600 IN NS ns2.example.net.")
	ns1, _ := dns.NewRR("example.com. 3600 IN NS ns1.example.net.")
	z := Zone{Program: "CoreDNS-1.15.0 globaladdr-0.1.0", Tree: "/skydns", Zones: []string{"example.com."}, Records: []dns.RR{ns, ns1}, View: "ttl 900\nglobal 203.0.113.10\n"}
	want := "program CoreDNS-1.15.0 globaladdr-0.1.0\ntree /skydns\nzones example.com.\n" +
		"example.com. 3600 IN NS ns1.example.net.\nexample.com. 3600 IN NS ns2.example.net.\n" +
		"view ttl 900\nview global 203.0.113.10\n"
	if got := z.Text(); got != want {
		t.Errorf("Text:\n%s\nwant\n%s", got, want)
	}
}
