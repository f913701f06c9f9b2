package etcdclient

import (
	"github.com/coredns/coredns/plugin"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// Holder is a plugin that holds the etcd connection of its server block
// (etcdzone, which the examples give endpoint, tls and credentials): the
// block's other plugins that read etcd (globaladdr's from etcd) take it,
// unless the Corefile gives them one of their own. The plugins meet through
// this type only, neither imports the other.
type Holder interface {
	// EtcdConfig returns the connection the Corefile gives the plugin; ok
	// is false when it gives none.
	EtcdConfig() (cfg Config, ok bool)
}

// BlockConfig returns the etcd connection of a server block whose plugins
// are handlers: the one a Holder among them holds, else the endpoints and
// credentials of etcdPlugin, the client of the block's etcd plugin (nil:
// none, the default endpoint). It reads only what set-up parsed: a Holder
// need not have started.
func BlockConfig(handlers []plugin.Handler, etcdPlugin *clientv3.Client) Config {
	for _, h := range handlers {
		if holder, ok := h.(Holder); ok {
			if cfg, ok := holder.EtcdConfig(); ok {
				return cfg
			}
		}
	}
	return ClientConfig(etcdPlugin)
}

// ClientConfig returns the endpoints and credentials of c, the etcd plugin's client,
// whose tls can't be read; none when c is nil.
func ClientConfig(c *clientv3.Client) Config {
	var cfg Config
	if c != nil {
		cfg.Endpoints = c.Endpoints()
		cfg.Username, cfg.Password = c.Username, c.Password
	}
	return cfg
}
