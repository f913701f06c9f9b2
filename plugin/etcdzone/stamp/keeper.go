package stamp

import (
	"context"
	"strings"
	"sync"

	clog "github.com/coredns/coredns/plugin/pkg/log"
	"github.com/globaladdr/globaladdr/plugin/etcdclient"
)

var log = clog.NewWithPlugin("etcdzone")

// Keeper keeps the stamps of a server block's zones in etcd, each at the
// key Prefix/ZONE.
type Keeper struct {
	Client *etcdclient.Client
	Prefix string

	// mu guards failed: the failure last logged at warning, by zone.
	mu     sync.Mutex
	failed map[string]string
}

// Key returns the etcd key of zone's stamp.
func (k *Keeper) Key(zone string) string { return k.Prefix + "/" + zone }

// Keep makes text zone's stamp, and returns the revision at which its key
// took that value (see package stamp); ok is false when etcd refused it or
// did not answer within etcdclient.Timeout, which is logged: at warning
// the first time, with what it takes, and while it goes on at debug.
// A new stamp is logged with what changed.
func (k *Keeper) Keep(zone, text string) (rev int64, ok bool) {
	ctx, cancel := context.WithTimeout(context.Background(), etcdclient.Timeout)
	defer cancel()
	key := k.Key(zone)
	rev, before, err := keep(ctx, k.Client.Client, key, text)
	k.mu.Lock()
	defer k.mu.Unlock()
	if err != nil {
		err = k.Client.Explain(err)
		if k.failed[zone] == err.Error() {
			log.Debugf("zone %s: the stamp %s: %v", zone, key, err)
			return 0, false
		}
		if k.failed == nil {
			k.failed = map[string]string{}
		}
		k.failed[zone] = err.Error()
		log.Warningf("zone %s: the stamp %s can't be kept in etcd at %s: %v; until it can, a restart or a reload with the zone changed may keep "+
			"the serial the secondaries hold, and they the old zone: grant read and write on %s/", zone, key, k.Client, err, k.Prefix)
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
