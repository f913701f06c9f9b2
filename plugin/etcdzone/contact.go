package etcdzone

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/globaladdr/globaladdr/plugin/pkg/etcdclient"
)

// watchContact keeps the zones' metric of the time since they last heard
// from etcd, counts an etcd error of each zone each second of Unreachable
// or more without an answer, and logs when the zones expire (no answer for
// the SOA's expire: their queries get SERVFAIL) and when they are back,
// until ctx ends.
func (x *EtcdZone) watchContact(ctx context.Context, zones []*blockZone) {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	expired := false
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		silence := x.client.Silence()
		for _, z := range zones {
			z.metrics.set(sinceContact, silence.Seconds())
			if silence >= etcdclient.Unreachable {
				z.metrics.inc(etcdErrors)
			}
		}
		switch now := x.expired(); {
		case now && !expired:
			log.Errorf("zones %s: etcd at %s not heard from for %s, the SOA expire: answering SERVFAIL until it is back", listed(zones), x.client, silence.Round(time.Second))
		case !now && expired:
			log.Infof("zones %s: etcd at %s is back; answering again", listed(zones), x.client)
		}
		expired = x.expired()
	}
}

// expired reports whether the zones have not heard from etcd for the SOA's
// expire: then they are answered SERVFAIL, and the plugin is not ready, as a
// secondary whose primary went away stops answering.
func (x *EtcdZone) expired() bool {
	return x.client != nil && x.client.Silence() >= time.Duration(x.corefile.Apex.Expire)*time.Second
}

// listed names zones in the log: at most five, and how many more.
func listed(zones []*blockZone) string {
	names := zoneNames(zones)
	if len(names) > 5 {
		names = append(names[:5], fmt.Sprintf("and %d more", len(names)-5))
	}
	return strings.Join(names, " ")
}
