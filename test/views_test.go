package test

import (
	"strings"
	"testing"

	"github.com/globaladdr/globaladdr/internal/etcdtest"
	"github.com/globaladdr/globaladdr/internal/externaldns"
)

// viewsCorefile is the split horizon the end-to-end tests run: one etcd tree
// served by three server blocks of one CoreDNS on ports of their own:
//
//   - internal: the records as stored;
//   - external: globaladdr with an IPv4 and an IPv6 address, a TTL, maps of
//     both kinds and hidden names;
//   - external4: globaladdr with an IPv4 address only.
//
// BACKENDS stands for viewsBackends, EXTRA for directives given to every
// block (cache, say), EXTERNAL for directives of the external block only
// (dnssec, say).
const viewsCorefile = `
example.com:{port:internal} example.net:{port:internal} {
	BACKENDS
	EXTRA
}

example.com:{port:external} example.net:{port:external} {
	globaladdr 203.0.113.10 2001:db8::10 {
		ttl 900
		map 192.168.0.99 198.51.100.99
		map 10.20.0.0/24 198.51.100.0/24
		map fd00:20::/64 2001:db8:20::/64
		hide secret.example.com db.svc.example.com
	}
	BACKENDS
	EXTRA
	EXTERNAL
}

example.com:{port:external4} {
	globaladdr 203.0.113.10 {
		ttl 900
	}
	BACKENDS
	EXTRA
}
`

// viewsBackends are the backends of every block of viewsCorefile: etcd for
// example.com (ETCD stands for its endpoint), and hosts for example.net, so
// that CNAMEs from example.com to example.net lead out of the etcd zone and
// back into the chain.
const viewsBackends = `etcd example.com {
		endpoint ETCD
	}
	hosts /dev/null example.net {
		10.0.0.7 edge.example.net
		198.51.100.80 www.example.net
	}`

// directives are directives added to the server blocks of viewsCorefile.
type directives struct {
	// all goes into every server block.
	all string
	// external goes into the external block only.
	external string
}

// startViews starts an embedded etcd holding records, and a CoreDNS serving
// it through viewsCorefile with extra directives. Query the views at
// c.Addr("internal"), c.Addr("external") and c.Addr("external4").
func startViews(t testing.TB, extra directives, records ...externaldns.Record) (*coreDNS, *etcdtest.Server) {
	t.Helper()
	etcd := startEtcd(t)
	putRecords(t, etcd, records...)
	return startCoreDNS(t, viewsCorefileFor(etcd.Endpoint(), extra)), etcd
}

// viewsCorefileFor fills viewsCorefile: its etcd plugins read endpoints (one
// or several, separated by spaces), and extra adds directives.
func viewsCorefileFor(endpoints string, extra directives) string {
	return strings.NewReplacer(
		"BACKENDS", strings.ReplaceAll(viewsBackends, "ETCD", endpoints),
		"EXTRA", extra.all,
		"EXTERNAL", extra.external,
	).Replace(viewsCorefile)
}

// a, aaaa, cname and txt describe records as external-dns writes them for an
// Ingress named after the record.
func a(name string, targets ...string) externaldns.Record {
	return record(name, "A", targets)
}

func aaaa(name string, targets ...string) externaldns.Record {
	return record(name, "AAAA", targets)
}

func cname(name, target string) externaldns.Record {
	return record(name, "CNAME", []string{target})
}

func txt(name string, texts ...string) externaldns.Record {
	return record(name, "TXT", texts)
}

func record(name, typ string, targets []string) externaldns.Record {
	return externaldns.Record{
		Name:     name,
		Type:     typ,
		Targets:  targets,
		Resource: "ingress/default/" + strings.SplitN(name, ".", 2)[0],
	}
}
