package stamp

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	clog "github.com/coredns/coredns/plugin/pkg/log"
	"github.com/globaladdr/globaladdr/plugin/pkg/etcdclient"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
)

var log = clog.NewWithPlugin("etcdzone")

// Timeout bounds the reads and writes of a stamp: they hold up the builds
// of the zones of the tree, which wait meanwhile.
const Timeout = 2 * time.Second

// errSilent says why a stamp is not kept while etcd does not answer.
var errSilent = errors.New("etcd has not answered for a while")

// Keeper keeps the stamps of a server block's zones in etcd, each at the
// key Prefix/ZONE.
type Keeper struct {
	Client *etcdclient.Client
	Prefix string

	// mu guards failed: the failure last logged at warning, by zone.
	mu     sync.Mutex
	failed map[string]string
}

// claims are the keys of the stamps that the server blocks of the running
// Corefile instances keep, by instance.
var claims = struct {
	sync.Mutex
	m map[claim]bool
}{m: map[claim]bool{}}

// claim is a stamp's key kept by a block of a Corefile instance.
type claim struct {
	instance any
	key      string
}

// Claim has a server block of the Corefile instance keep the stamps of
// zones; it fails when another block of the instance keeps one of them
// already (the two would write each other's). release gives them up.
func (k *Keeper) Claim(instance any, zones []string) (release func(), err error) {
	claims.Lock()
	defer claims.Unlock()
	var held []claim
	for _, z := range zones {
		c := claim{instance, k.Key(z)}
		if claims.m[c] {
			for _, h := range held {
				delete(claims.m, h)
			}
			return nil, fmt.Errorf("another server block keeps the stamp %s", c.key)
		}
		claims.m[c] = true
		held = append(held, c)
	}
	return func() {
		claims.Lock()
		defer claims.Unlock()
		for _, h := range held {
			delete(claims.m, h)
		}
	}, nil
}

// Key returns the etcd key of zone's stamp.
func (k *Keeper) Key(zone string) string { return k.Prefix + "/" + zone }

// Keep makes text zone's stamp, and returns the revision at which its key
// took that value (see package stamp); ok is false when etcd refused it or
// did not answer within Timeout, or has not answered the client for
// etcdclient.Unreachable (its builds are not held up then), which is
// logged: at warning the first time, with what it takes, and while it goes
// on at debug. A new stamp is logged with what changed.
func (k *Keeper) Keep(zone, text string) (rev int64, ok bool) {
	key := k.Key(zone)
	var before string
	err := errSilent
	if k.Client.Silence() < etcdclient.Unreachable {
		ctx, cancel := context.WithTimeout(context.Background(), Timeout)
		rev, before, err = keep(ctx, k.Client.Client, key, text)
		cancel()
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if err != nil {
		hint := ""
		if errors.Is(rpctypes.Error(err), rpctypes.ErrPermissionDenied) {
			err = k.Client.Explain(err) // names the user
			hint = fmt.Sprintf(": grant read and write on %s/", k.Prefix)
		}
		if k.failed[zone] == err.Error() {
			log.Debugf("zone %s: the stamp %s: %v", zone, key, err)
			return 0, false
		}
		if k.failed == nil {
			k.failed = map[string]string{}
		}
		k.failed[zone] = err.Error()
		log.Warningf("zone %s: the stamp %s can't be kept in etcd at %s: %v; until it can, a restart or a reload with the zone changed may keep "+
			"the serial the secondaries hold, and they the old zone%s", zone, key, k.Client, err, hint)
		return 0, false
	}
	delete(k.failed, zone)
	switch before {
	case text:
	case "":
		log.Infof("zone %s: stamp %s written at revision %d", zone, key, rev)
	default:
		log.Infof("zone %s: made otherwise than its stamp said (%s): stamp written at revision %d", zone, strings.Join(Diff(before, text), "; "), rev)
	}
	return rev, true
}
