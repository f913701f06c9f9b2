package hosted

import (
	"context"
	"testing"

	"github.com/coredns/coredns/plugin/etcd/msg"
	"github.com/coredns/coredns/plugin/test"
	"github.com/coredns/coredns/request"
	"github.com/globaladdr/globaladdr/internal/etcdtest"
	"github.com/globaladdr/globaladdr/plugin/etcdzone/etcdtree"
	"github.com/globaladdr/globaladdr/plugin/etcdzone/zone"
	"github.com/globaladdr/globaladdr/plugin/pkg/dnsname"
	"github.com/globaladdr/globaladdr/plugin/pkg/horizon"

	"github.com/miekg/dns"
	"go.etcd.io/etcd/api/v3/mvccpb"
)

// testApex is the zones' SOA and NS set.
var testApex = zone.Apex{NS: []string{"ns1.example.net."}, TTL: 3600, Refresh: 3600, Retry: 600, Expire: 1209600, Minimum: 300}

// testZones are the zones of one block, as etcdzone makes them: they follow
// an etcd tree under /skydns, and a CNAME of one is chased into the others.
type testZones struct {
	block *Block
	zones []*Zone
	names dnsname.Zones[*Zone]
}

// newTestZones returns the zones names of a block with the view v (nil for
// none) on the etcd s.
func newTestZones(t testing.TB, s *etcdtest.Server, v horizon.View, names ...string) *testZones {
	t.Helper()
	tree := etcdtree.New(etcdtree.Config{
		Client: s.Client(),
		Where:  "test",
		Path:   "/skydns",
		Read: func(key string, kv *mvccpb.KeyValue) (*zone.Source, error) {
			return zone.Decode(key, kv.Value, func(*msg.Service) uint32 { return 300 })
		},
		Stream: t.Name(),
	})
	t.Cleanup(func() { tree.Cancel(); tree.Wait() })
	x := &testZones{names: dnsname.Zones[*Zone]{}}
	x.block = &Block{
		View:      v,
		Tree:      tree,
		TreeText:  "/skydns",
		Zones:     names,
		Names:     dnsname.Set(names),
		Served:    x.names.Holds,
		Published: make(chan struct{}, 1),
	}
	for _, name := range names {
		config := &zone.Zone{Name: name, Apex: &testApex, Upstream: x}
		z := New(x.block, config, msg.Path(name, "skydns"), "dns://test/"+t.Name(), zone.NewJournal(0, 0), nopMeter{})
		x.zones = append(x.zones, z)
		x.names[name] = z
	}
	return x
}

// follow has the zones follow the tree, until leave.
func (x *testZones) follow() (leave func()) {
	apexes := make([]string, len(x.zones))
	followers := make([]etcdtree.Follower, len(x.zones))
	for i, z := range x.zones {
		apexes[i], followers[i] = z.ApexKey(), z.Follower()
	}
	subs := x.block.Tree.Join(x, apexes, followers)
	for i, z := range x.zones {
		z.Joined(subs[i])
	}
	return func() {
		for _, s := range subs {
			s.Leave()
		}
	}
}

// Lookup implements zone.Upstream: a CNAME's target is looked up in the
// zone that holds it.
func (x *testZones) Lookup(ctx context.Context, state request.Request, name string, qtype uint16) (*dns.Msg, error) {
	_, z, _ := x.names.Deepest(name)
	if z == nil {
		return new(dns.Msg).SetRcode(state.Req, dns.RcodeRefused), nil
	}
	return z.Answer(ctx, state.NewWithQuestion(name, qtype)), nil
}

// askDO asks the zones for name's records of qtype with DO set.
func askDO(x *testZones, name string, qtype uint16) *dns.Msg {
	r := new(dns.Msg)
	r.SetQuestion(name, qtype)
	r.SetEdns0(4096, true)
	m, _ := x.Lookup(context.Background(), request.Request{W: &test.ResponseWriter{}, Req: r}, name, qtype)
	return m
}

// nopMeter counts nothing.
type nopMeter struct{}

func (nopMeter) Loaded(bool)            {}
func (nopMeter) Records(int)            {}
func (nopMeter) Serial(uint32)          {}
func (nopMeter) Skipped()               {}
func (nopMeter) Failed()                {}
func (nopMeter) SignaturesExpire(int64) {}
