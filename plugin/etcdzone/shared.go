package etcdzone

import (
	"fmt"
	"path"
	"sync"

	"github.com/coredns/caddy"
	"github.com/coredns/coredns/plugin/etcd"
	"github.com/coredns/coredns/plugin/etcd/msg"
	"github.com/globaladdr/globaladdr/plugin/etcdzone/etcdtree"
	"github.com/globaladdr/globaladdr/plugin/etcdzone/zone"
	"github.com/globaladdr/globaladdr/plugin/pkg/etcdclient"

	"go.etcd.io/etcd/api/v3/mvccpb"
)

// trees are the etcd trees that the server blocks of the running
// instances follow. The blocks of one instance that read the same tree
// (the same etcd connection and path, and the etcd plugin's TTL rules)
// share one connection, one load, one watch and each key's records, read
// once. A reloaded Corefile starts a new instance, which opens its own: its
// certificates may have been renewed.
var trees = struct {
	sync.Mutex
	m map[treeID]*sharedTree
}{m: map[treeID]*sharedTree{}}

// treeID tells a tree apart from the others.
type treeID struct {
	// instance is the Corefile instance's (see instanceOf); nil in tests.
	instance any
	// conn is the connection's etcdclient.Config.ID: it holds the
	// password, so it is never logged.
	conn           string
	path           string
	minTTL, maxTTL uint32
}

// String says which tree id is, for the zones' stamps: its path and the
// TTLs of leases.
func (id treeID) String() string {
	return fmt.Sprintf("%s, leases' TTLs %d to %d", id.path, id.minTTL, id.maxTTL)
}

// sharedTree is one tree, followed over its own connection to etcd, and the
// number of blocks that read it.
type sharedTree struct {
	id     treeID
	tree   *etcdtree.Tree
	client *etcdclient.Client
	// ttl is the etcd plugin over client: it makes the TTLs of keys with
	// a lease.
	ttl  *etcd.Etcd
	refs int
}

// instanceKey keys an instance's token in its storage (see instanceOf).
type instanceKey struct{}

// instanceOf returns a token of the Corefile instance that c sets up, the
// same for all its server blocks.
func instanceOf(c *caddy.Controller) any {
	if token := c.Get(instanceKey{}); token != nil {
		return token
	}
	token := new(byte)
	c.Set(instanceKey{}, token)
	return token
}

// openTree opens the tree x's block reads, over the connection the Corefile
// gives the directive, else the etcd plugin's endpoints and credentials
// (the etcd plugin's tls can't be read: give it to etcdzone); unless a block
// of the same instance opened it already.
func (x *EtcdZone) openTree() (*sharedTree, error) {
	cfg := x.corefile.Conn
	if !cfg.Given() {
		cfg = etcdclient.ClientConfig(x.etcd.Client)
	}
	id := treeID{instance: x.instance, conn: cfg.ID(), path: path.Clean("/" + x.etcd.PathPrefix), minTTL: x.etcd.MinLeaseTTL, maxTTL: x.etcd.MaxLeaseTTL}
	trees.Lock()
	defer trees.Unlock()
	if t := trees.m[id]; t != nil {
		t.refs++
		return t, nil
	}
	c, err := etcdclient.New(cfg, log)
	if err != nil {
		return nil, x.errorf(x.corefile.Where, "%v", err)
	}
	ttl := *x.etcd
	ttl.Client = c.Client
	t := &sharedTree{id: id, client: c, ttl: &ttl, refs: 1}
	t.tree = etcdtree.New(etcdtree.Config{
		Client:  c.Client,
		Where:   c.String(),
		Explain: c.Explain,
		Path:    id.path,
		Read:    t.read,
		Stream:  "tree " + id.path,
	})
	trees.m[id] = t
	return t, nil
}

// release has a block stop reading t: the last one stops following it and
// closes its connection.
func (t *sharedTree) release() {
	trees.Lock()
	t.refs--
	last := t.refs == 0
	if last {
		delete(trees.m, t.id)
	}
	trees.Unlock()
	if last {
		// Closed between the two, the client ends a request under way
		// that has no deadline (the etcd plugin's lease look-up).
		t.tree.Cancel()
		t.client.Close()
		t.tree.Wait()
	}
}

// read returns the records kv, a put of one of t's keys, holds, with the
// TTLs the etcd plugin gives them, or why it holds none.
func (t *sharedTree) read(key string, kv *mvccpb.KeyValue) (*zone.Source, error) {
	return zone.Decode(key, kv.Value, func(s *msg.Service) uint32 { return t.ttl.TTL(kv, s) })
}
