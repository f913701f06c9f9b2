package etcdzone

import (
	"context"
	"time"

	"github.com/globaladdr/globaladdr/plugin/etcdclient"
)

// openClient opens the zones' connection to etcd: the one the Corefile
// gives the directive, else the etcd plugin's endpoints and credentials
// (the etcd plugin's tls can't be read: give it to etcdzone).
func (x *EtcdZone) openClient() error {
	cfg := x.conn
	if !cfg.Given() {
		cfg.Endpoints = x.etcd.Client.Endpoints()
		cfg.Username, cfg.Password = x.etcd.Client.Username, x.etcd.Client.Password
	}
	c, err := etcdclient.New(cfg, log)
	if err != nil {
		return x.errorf(x.where, "%v", err)
	}
	ttl := *x.etcd
	ttl.Client = c.Client
	x.mu.Lock() // Ready may be asked meanwhile
	x.client, x.etcdTTL = c, &ttl
	x.mu.Unlock()
	return nil
}

// watchContact keeps z's metric of the time since the zone last heard from
// etcd, counts an etcd error each second of Unreachable or more without an
// answer, and logs when the zone expires (no answer for the SOA's expire:
// its queries get SERVFAIL) and when it is back, until ctx ends.
func (x *EtcdZone) watchContact(ctx context.Context, z *hosted) {
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
		sinceContact.WithLabelValues(z.server, z.name).Set(silence.Seconds())
		if silence >= etcdclient.Unreachable {
			etcdErrors.WithLabelValues(z.server, z.name).Inc()
		}
		switch now := x.expired(); {
		case now && !expired:
			log.Errorf("zone %s: etcd at %s not heard from for %s, the SOA expire: answering SERVFAIL until it is back", z.name, x.client, silence.Round(time.Second))
		case !now && expired:
			log.Infof("zone %s: etcd at %s is back; answering again", z.name, x.client)
		}
		expired = x.expired()
	}
}

// expired reports whether the zones have not heard from etcd for the SOA's
// expire: then they are answered SERVFAIL, and the plugin is not ready, as a
// secondary whose primary went away stops answering.
func (x *EtcdZone) expired() bool {
	return x.client != nil && x.client.Silence() >= time.Duration(x.apex.Expire)*time.Second
}
