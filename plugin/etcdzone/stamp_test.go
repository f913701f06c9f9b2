package etcdzone

import (
	"context"
	"fmt"
	"net"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/coredns/coredns/plugin"
	"github.com/globaladdr/globaladdr/internal/etcdtest"
	"github.com/globaladdr/globaladdr/internal/externaldns"
	"github.com/globaladdr/globaladdr/internal/poll"
	"github.com/globaladdr/globaladdr/plugin/etcdzone/stamp"
	"github.com/globaladdr/globaladdr/plugin/pkg/horizon"

	"github.com/miekg/dns"
)

// globalView is a view that rewrites every A record to its global address,
// and can run a hook at the first Current after a change (see change).
type globalView struct {
	mu    sync.Mutex
	state *horizon.State
	hook  func()
	// subscribers are told of each change.
	subscribers []func()
}

// change makes global the view's address, and has hook run when the zone
// next asks for the view's state, before it gets it; then it tells the
// subscribers, as a view does.
func (v *globalView) change(global string, hook func()) {
	v.mu.Lock()
	v.state, v.hook = globalState(global), hook
	subscribers := slices.Clone(v.subscribers)
	v.mu.Unlock()
	for _, f := range subscribers {
		f()
	}
}

func (v *globalView) Subscribe(f func()) func() {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.subscribers = append(v.subscribers, f)
	return func() {}
}

func (v *globalView) Current() *horizon.State {
	v.mu.Lock()
	st, hook := v.state, v.hook
	v.hook = nil
	v.mu.Unlock()
	if hook != nil {
		hook()
	}
	return st
}

func (v *globalView) Serve([]string) (undo func())                    { return func() {} }
func (v *globalView) Judged(context.Context, []dns.RR, horizon.Place) {}
func (v *globalView) Fallthrough(ctx context.Context, w dns.ResponseWriter, r *dns.Msg, next plugin.Handler) (int, error) {
	return plugin.NextOrFailure("view", next, ctx, w, r)
}

// globalState is the state of a view that shows every A record at global.
func globalState(global string) *horizon.State {
	return &horizon.State{Rules: "global " + global + "\n", Show: func(rrs []dns.RR) []dns.RR {
		out := make([]dns.RR, len(rrs))
		for i, rr := range rrs {
			out[i] = rr
			if a, ok := rr.(*dns.A); ok {
				a = dns.Copy(a).(*dns.A)
				a.A = net.ParseIP(global)
				out[i] = a
			}
		}
		return out
	}}
}

// stampedHosts are enough hosts that one more is sent by IXFR, not as the
// zone.
func stampedHosts() []externaldns.Record {
	var hosts []externaldns.Record
	for i := range 12 {
		hosts = append(hosts, externaldns.Record{Name: fmt.Sprintf("h%d.example.com", i), Type: "A", Targets: []string{"192.168.0.51"}})
	}
	return hosts
}

// startStamped starts following example.com on s as a block that transfers
// (its stamps under prefix) in the view v, on a server of its own (another
// process's, as far as the serials kept across reloads go).
func startStamped(t *testing.T, s *etcdtest.Server, v horizon.View, prefix, server string) *EtcdZone {
	t.Helper()
	x := newTestPlugin(t, s)
	x.view = v
	zones, err := x.newZones("dns://"+server+"/"+t.Name(), nil)
	if err != nil {
		t.Fatal(err)
	}
	x.block.Stamps = &stamp.Keeper{Client: x.client, Prefix: prefix}
	x.setZones(zones)
	t.Cleanup(x.follow(zones))
	x.waitLoaded(30 * time.Second)
	if !x.Ready() {
		t.Fatal("the zone did not load")
	}
	return x
}

// holds returns nil once x's zone holds name's address want.
func holds(x *EtcdZone, name, want string) error {
	v := x.zones[0].Current()
	if got := v.Addresses(name); len(got) != 1 || got[0].(*dns.A).A.String() != want {
		return fmt.Errorf("%s: %v at serial %d, want %s", name, got, v.Serial.Value(), want)
	}
	return nil
}

// TestStampWaitsForTheTree changes the view while a key of the zone has
// just been written, before the tree has its event: the stamp's revision
// is then ahead of the zone's records. The zone is published at the stamp's
// serial only with that key, as a replica that reads etcd afterwards
// publishes it: one serial, one zone.
func TestStampWaitsForTheTree(t *testing.T) {
	s := startTestEtcd(t, stampedHosts()...)
	v := &globalView{state: globalState("203.0.113.1")}
	a := startStamped(t, s, v, "/globaladdr/serial/test", "a")
	v.change("203.0.113.2", func() {
		put(t, s, externaldns.Record{Name: "after.example.com", Type: "A", Targets: []string{"192.168.0.70"}})
	})
	poll.Until(t, 10*time.Second, "the new address and the key written", func() error {
		if err := holds(a, "h0.example.com.", "203.0.113.2"); err != nil {
			return err
		}
		return holds(a, "after.example.com.", "203.0.113.2")
	})
	b := startStamped(t, s, &globalView{state: globalState("203.0.113.2")}, "/globaladdr/serial/test", "b")
	if sa, sb := a.zones[0].Current().Serial, b.zones[0].Current().Serial; sa != sb {
		t.Errorf("the zone with the key and the new address: serial %d, a replica that read it afterwards %d", sa.Value(), sb.Value())
	}
}

// TestStampRefused has etcd refuse the stamp (a key larger than a request
// may be) twice in a row: neither version's serial is vouched for, so no
// IXFR starts from them; the secondaries get the whole zone.
func TestStampRefused(t *testing.T) {
	s := startTestEtcd(t, stampedHosts()...)
	v := &globalView{state: globalState("203.0.113.1")}
	x := startStamped(t, s, v, "/"+string(make([]byte, 2<<20)), "refused")
	z := x.zones[0]
	first := z.Current()
	v.change("203.0.113.2", nil)
	poll.Until(t, 10*time.Second, "the new address", func() error { return holds(x, "h0.example.com.", "203.0.113.2") })
	second := z.Current()
	put(t, s, externaldns.Record{Name: "after.example.com", Type: "A", Targets: []string{"192.168.0.70"}})
	poll.Until(t, 10*time.Second, "the key written", func() error { return holds(x, "after.example.com.", "203.0.113.2") })
	for _, from := range []uint32{first.Serial.Value(), second.Serial.Value()} {
		ch, err := x.Transfer("example.com.", from)
		if err != nil {
			t.Fatal(err)
		}
		var n int
		for batch := range ch {
			n += len(batch)
		}
		if n < 12 {
			t.Errorf("IXFR from %d, whose stamp etcd refused: %d records, want the zone", from, n)
		}
	}
}
