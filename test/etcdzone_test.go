package test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/globaladdr/globaladdr/internal/etcdtest"

	"github.com/miekg/dns"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// zoneCorefile is an external view of example.com served by etcdzone from the
// etcd at ETCD.
const zoneCorefile = `example.com:{port:view} {
	prometheus :{httpport:metrics}
	ready :{httpport:ready}
	globaladdr 203.0.113.10
	etcdzone {
		ns ns1.example.net ns2.example.net
	}
	etcd example.com {
		endpoint ETCD
	}
}
`

// startZoneView starts CoreDNS serving zoneCorefile from the etcd at
// endpoint.
func startZoneView(t *testing.T, endpoint string) *coreDNS {
	t.Helper()
	return startCoreDNS(t, strings.ReplaceAll(zoneCorefile, "ETCD", endpoint))
}

// TestEtcdzoneStartsWithEtcdDown starts the view while etcd is down: the
// zone's queries get SERVFAIL, never a partial zone or NXDOMAIN, and the
// ready plugin reports it not ready, until etcd is back; then the zone loads
// by itself.
func TestEtcdzoneStartsWithEtcdDown(t *testing.T) {
	etcd := startEtcd(t)
	putRecords(t, etcd, a("app.example.com", "192.168.0.51"))
	etcd.Stop()
	c := startZoneView(t, etcd.Endpoint())
	for _, name := range []string{"app.example.com.", "nothing.example.com.", "example.com."} {
		if r := query(t, "udp", c.Addr("view"), name, dns.TypeA); r.Rcode != dns.RcodeServerFailure {
			t.Errorf("%s before the zone is loaded: %s, want SERVFAIL", name, dns.RcodeToString[r.Rcode])
		}
	}
	ready := "http://" + c.Addr("ready") + "/ready"
	resp, err := http.Get(ready)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("ready before the zone is loaded: %s, want 503", resp.Status)
	}
	if err := etcd.Restart(); err != nil {
		t.Fatal(err)
	}
	eventually(t, 60*time.Second, "the zone once etcd is up", func() error {
		return answers(c.Addr("view"), "app.example.com.", dns.TypeA, []string{"203.0.113.10"})
	})
	waitReady(t, ready)
}

// TestEtcdzoneEtcdLostAndBack takes etcd away from the view (not from the
// test) while keys are written and deleted: the view keeps answering from
// the zone it holds, and catches up once etcd is back, with the serial of
// the last change. With compact set, etcd compacts its history meanwhile, so
// that the watch can't resume: the zone is read again. Either way, a replica
// started afterwards serves the same serial.
func TestEtcdzoneEtcdLostAndBack(t *testing.T) {
	for _, compact := range []bool{false, true} {
		t.Run(fmt.Sprintf("compact=%v", compact), func(t *testing.T) {
			etcd := startEtcd(t)
			putRecords(t, etcd, a("app.example.com", "192.168.0.51"), a("old.example.com", "192.168.0.52"))
			p := startProxy(t, strings.TrimPrefix(etcd.Endpoint(), "http://"))
			c := startZoneView(t, "http://"+p.Addr())
			view := c.Addr("view")
			eventually(t, 30*time.Second, "the zone", func() error {
				return answers(view, "app.example.com.", dns.TypeA, []string{"203.0.113.10"})
			})

			p.Cut()
			putRecords(t, etcd, a("new.example.com", "192.168.0.53"))
			deleteRecords(t, etcd, "old.example.com")
			rev := currentRevision(t, etcd)
			if compact {
				if _, err := etcd.Client().Compact(context.Background(), rev); err != nil {
					t.Fatal(err)
				}
			}
			for _, q := range []struct {
				name string
				want []string
			}{{"app.example.com.", []string{"203.0.113.10"}}, {"old.example.com.", []string{"203.0.113.10"}}, {"new.example.com.", nil}} {
				if err := answers(view, q.name, dns.TypeA, q.want); err != nil {
					t.Errorf("while etcd is away, the zone answers as it was: %v", err)
				}
			}

			p.Mend()
			eventually(t, 60*time.Second, "the zone once etcd is back", func() error {
				if err := answers(view, "new.example.com.", dns.TypeA, []string{"203.0.113.10"}); err != nil {
					return err
				}
				return answers(view, "old.example.com.", dns.TypeA, nil)
			})
			serial := soaSerial(t, view, "example.com.")
			if serial != zoneSerial(rev) {
				t.Errorf("serial %d, want %d, that of revision %d", serial, zoneSerial(rev), rev)
			}
			fresh := waitLoaded(t, startZoneView(t, etcd.Endpoint()))
			if got := soaSerial(t, fresh.Addr("view"), "example.com."); got != serial {
				t.Errorf("a replica started now serves serial %d, the one that caught up %d", got, serial)
			}
		})
	}
}

// TestEtcdzoneReplicasAgree runs two replicas of the view on one etcd, and a
// third started later: they serve the same serial, before and after a key
// is written and deleted. With the global addresses from an etcd key, they
// agree too when the key changes, or is written again unchanged.
func TestEtcdzoneReplicasAgree(t *testing.T) {
	t.Run("addresses in the Corefile", func(t *testing.T) { replicasAgree(t, false) })
	t.Run("addresses from etcd", func(t *testing.T) { replicasAgree(t, true) })
}

func replicasAgree(t *testing.T, fromEtcd bool) {
	etcd := startEtcd(t)
	putRecords(t, etcd, a("app.example.com", "192.168.0.51"))
	corefile := strings.ReplaceAll(zoneCorefile, "ETCD", etcd.Endpoint())
	if fromEtcd {
		putGlobal(t, etcd, "203.0.113.10")
		corefile = strings.ReplaceAll(corefile, "globaladdr 203.0.113.10", "globaladdr {\n\t\tfrom etcd "+globalKey+"\n\t}")
	}
	replica := func() *coreDNS { return waitLoaded(t, startCoreDNS(t, corefile)) }
	replicas := []*coreDNS{replica(), replica()}
	agree := func(what string, want uint32) {
		t.Helper()
		for i, r := range replicas {
			eventually(t, 10*time.Second, fmt.Sprintf("%s, replica %d", what, i), func() error {
				if got, err := serialAt(r.Addr("view"), "example.com."); err != nil || got != want {
					return fmt.Errorf("serial %d, want %d (%v)", got, want, err)
				}
				return nil
			})
		}
	}
	agree("at start", zoneSerial(currentRevision(t, etcd)))
	putRecords(t, etcd, a("new.example.com", "192.168.0.52"))
	agree("after a put", zoneSerial(currentRevision(t, etcd)))
	deleteRecords(t, etcd, "new.example.com")
	rev := currentRevision(t, etcd)
	agree("after a delete", zoneSerial(rev))
	if _, err := etcd.Client().Put(context.Background(), "/elsewhere/key", "x"); err != nil {
		t.Fatal(err)
	}
	replicas = append(replicas, replica())
	agree("with a replica started after the delete and a write elsewhere", zoneSerial(rev))
	if !fromEtcd {
		return
	}
	putGlobal(t, etcd, "203.0.113.20")
	agree("after new global addresses", zoneSerial(currentRevision(t, etcd)))
	putGlobal(t, etcd, "203.0.113.20")
	rev = currentRevision(t, etcd)
	agree("after the same global addresses written again", zoneSerial(rev))
	replicas = append(replicas, replica())
	agree("with a replica started after that", zoneSerial(rev))
}

// TestEtcdzoneBypassesCache runs single-process.Corefile, whose views both
// have cache 30, and checks that a new host is answered by both within 2 s
// of its write although each view answered its name NXDOMAIN just before,
// and that a deleted host is gone from both within 2 s: the cache keeps
// nothing of etcdzone's zones.
func TestEtcdzoneBypassesCache(t *testing.T) {
	etcd := startEtcd(t)
	putRecords(t, etcd, a("app."+exampleDomain, exampleInternal))
	env, _ := exampleEnv(t, etcd)
	setEnv(t, env)
	c := startExample(t, examplePorts.Replace(readExample(t, "single-process.Corefile")), env)
	views := map[string]string{"internal": "192.168.0.60", "external": exampleGlobal}
	for view := range views {
		waitServing(t, c.Addr(view))
		if err := answers(c.Addr(view), "new.example.com.", dns.TypeA, nil); err != nil {
			t.Fatal(err)
		}
	}
	putRecords(t, etcd, a("new.example.com", "192.168.0.60"))
	for view, want := range views {
		eventually(t, 2*time.Second, view+" view: the new host", func() error {
			return answers(c.Addr(view), "new.example.com.", dns.TypeA, []string{want})
		})
	}
	deleteRecords(t, etcd, "new.example.com")
	for view := range views {
		eventually(t, 2*time.Second, view+" view: the deleted host", func() error {
			return answers(c.Addr(view), "new.example.com.", dns.TypeA, nil)
		})
	}
}

// TestEtcdzoneRefusesTransfers asks a block without a transfer plugin for
// the zone: AXFR and IXFR are refused.
func TestEtcdzoneRefusesTransfers(t *testing.T) {
	etcd := startEtcd(t)
	putRecords(t, etcd, a("app.example.com", "192.168.0.51"))
	c := waitLoaded(t, startZoneView(t, etcd.Endpoint()))
	for _, qtype := range []uint16{dns.TypeAXFR, dns.TypeIXFR} {
		if r := query(t, "tcp", c.Addr("view"), "example.com.", qtype); r.Rcode != dns.RcodeRefused {
			t.Errorf("%s: %s, want REFUSED", dns.TypeToString[qtype], dns.RcodeToString[r.Rcode])
		}
	}
}

// TestEtcdzoneGarbage writes a value that holds no record into a key of the
// zone: it is left out and counted, and the zone serves on.
func TestEtcdzoneGarbage(t *testing.T) {
	etcd := startEtcd(t)
	putRecords(t, etcd, a("app.example.com", "192.168.0.51"))
	c := startZoneView(t, etcd.Endpoint())
	if _, err := etcd.Client().Put(context.Background(), "/skydns/com/example/garbage", `{"host":`); err != nil {
		t.Fatal(err)
	}
	putRecords(t, etcd, a("after.example.com", "192.168.0.52"))
	eventually(t, 10*time.Second, "the key after the garbage", func() error {
		return answers(c.Addr("view"), "after.example.com.", dns.TypeA, []string{"203.0.113.10"})
	})
	if err := answers(c.Addr("view"), "garbage.example.com.", dns.TypeA, nil); err != nil {
		t.Error(err)
	}
	if body := scrape(t, "http://"+c.Addr("metrics")+"/metrics"); !strings.Contains(body, `coredns_etcdzone_skipped_keys_total{server="dns://:`) {
		t.Errorf("no skipped key counted:\n%.2000s", body)
	}
}

// waitLoaded waits until c's view answers the apex's SOA: its zone is
// loaded, and caught up with etcd.
func waitLoaded(t *testing.T, c *coreDNS) *coreDNS {
	t.Helper()
	eventually(t, 30*time.Second, "the zone loaded", func() error {
		if r := query(t, "udp", c.Addr("view"), "example.com.", dns.TypeSOA); r.Rcode != dns.RcodeSuccess {
			return fmt.Errorf("SOA: %s", dns.RcodeToString[r.Rcode])
		}
		return nil
	})
	return c
}

// currentRevision returns etcd's current revision.
func currentRevision(t *testing.T, etcd *etcdtest.Server) int64 {
	t.Helper()
	resp, err := etcd.Client().Get(context.Background(), "/", clientv3.WithCountOnly())
	if err != nil {
		t.Fatal(err)
	}
	return resp.Header.Revision
}

// zoneSerial is the serial of a zone whose last change was at revision rev.
func zoneSerial(rev int64) uint32 { return uint32(2_000_000_000 + 10*rev) }
