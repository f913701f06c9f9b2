package test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/globaladdr/globaladdr/internal/etcdlab"
	"github.com/globaladdr/globaladdr/internal/prereq"

	"github.com/miekg/dns"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// TestEtcdzoneDeletionBeforeStart starts a view on Debian's etcd (3.4.23,
// which reports a watch's progress before the watch has caught up:
// etcd-io/etcd#15220) after the zone's last change was a deletion, behind
// thousands of revisions of other keys: the zone's serial is that of the
// deletion, as a replica that saw it happen publishes, never earlier, and
// never later.
func TestEtcdzoneDeletionBeforeStart(t *testing.T) {
	t.Parallel()
	lab := etcdlab.StartLab(t, prereq.Program(t, "etcd", "etcd-server"))
	lab.AddUser(t, "reader", "reader-secret", etcdlab.Perm{Prefix: "/skydns/"})
	putRecords2(t, lab, a("app.example.com", "192.168.0.51"), a("old.example.com", "192.168.0.52"))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cli := lab.Admin.Client
	// Other keys' revisions, which the read of the history goes through.
	var wg sync.WaitGroup
	for g := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 500 {
				if _, err := cli.Put(ctx, fmt.Sprintf("/other/%d/%d", g, i), "x"); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	resp, err := cli.Delete(ctx, "/skydns/com/example/old/", clientv3.WithPrefix())
	if err != nil || resp.Deleted == 0 {
		t.Fatalf("deleting old.example.com: %v (%d keys)", err, resp.Deleted)
	}
	want := uint32(2_000_000_000 + 10*resp.Header.Revision)
	for i := range 100 { // and more revisions of other keys after it
		if _, err := cli.Put(ctx, fmt.Sprintf("/other/after/%d", i), "x"); err != nil {
			t.Fatal(err)
		}
	}
	corefile := strings.NewReplacer("ETCD", lab.Member.ClientURL, "TLS", lab.Client.CertFile+" "+lab.Client.KeyFile+" "+lab.CA.CertFile, "CREDENTIALS", "reader reader-secret").Replace(failingCorefile)
	c := startCoreDNS(t, corefile)
	eventually(t, 30*time.Second, fmt.Sprintf("serial %d, the deletion's", want), func() error {
		r := query(t, "udp", c.Addr("dns"), "example.com.", dns.TypeSOA)
		if r.Rcode != dns.RcodeSuccess || len(r.Answer) != 1 {
			return fmt.Errorf("SOA: %s", dns.RcodeToString[r.Rcode])
		}
		switch got := r.Answer[0].(*dns.SOA).Serial; {
		case got > want:
			t.Fatalf("serial %d, after the deletion's %d", got, want)
		case got < want:
			return fmt.Errorf("serial %d", got)
		}
		return nil
	})
}
