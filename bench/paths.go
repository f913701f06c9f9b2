//go:build linux

package main

import (
	"fmt"
	"strings"

	"github.com/miekg/dns"
)

// The two blocks of a path.
const (
	without = iota
	with
)

var variantNames = [2]string{"without", "with"}

// path is a way a query takes through CoreDNS, served by two server blocks
// that differ only by globaladdr.
type path struct {
	name    string
	cache   bool
	backend string // "etcd", "etcdzone" or "file"
	// rrl makes the blocks differ by rrl instead: both have globaladdr.
	rrl    bool
	blocks [2]*block
}

// block is one server block: a path without or with globaladdr.
type block struct {
	path    *path
	variant int
	port    int
	srv     *coreDNS // the process serving it
	// metrics makes the block export coredns's metrics on metricsPort.
	metrics     bool
	metricsPort int
}

func (b *block) dnsPort() int { return b.port }

func (b *block) process() *coreDNS { return b.srv }

func (b *block) String() string {
	return fmt.Sprintf("%s %s globaladdr (127.0.0.1:%d)", b.path.name, variantNames[b.variant], b.port)
}

// newPaths returns the measured paths.
func newPaths() []*path {
	paths := []*path{
		{name: "etcd+cache", cache: true, backend: "etcd"},
		{name: "etcd", backend: "etcd"},
		{name: "etcdzone", backend: "etcdzone"},
		{name: "file", backend: "file"},
		rrlPath(),
	}
	for _, p := range paths {
		for v := range p.blocks {
			p.blocks[v] = &block{path: p, variant: v}
		}
	}
	return paths
}

// blocksOf returns the blocks of paths without (variant 0) or with
// globaladdr (1).
func blocksOf(paths []*path, variant int) []*block {
	var bs []*block
	for _, p := range paths {
		bs = append(bs, p.blocks[variant])
	}
	return bs
}

// selectPaths returns the paths named in list, comma-separated, in the
// order of paths; all of them when list is empty.
func selectPaths(paths []*path, list string) ([]*path, error) {
	if list == "" {
		return paths, nil
	}
	var names []string
	for _, p := range paths {
		names = append(names, p.name)
	}
	want := map[string]bool{}
	for _, name := range strings.Split(list, ",") {
		if findPath(paths, name) == nil {
			return nil, fmt.Errorf("-paths: no path %q; the paths are %s", name, strings.Join(names, ", "))
		}
		want[name] = true
	}
	var selected []*path
	for _, p := range paths {
		if want[p.name] {
			selected = append(selected, p)
		}
	}
	return selected, nil
}

func findPath(paths []*path, name string) *path {
	for _, p := range paths {
		if p.name == name {
			return p
		}
	}
	return nil
}

// corefile returns the Corefile of blocks. The plugins' order is
// plugin.cfg's, not the Corefile's: cache above globaladdr above the backend.
func corefile(blocks []*block, etcdEndpoint, zoneFile string) string {
	var b strings.Builder
	for _, bl := range blocks {
		fmt.Fprintf(&b, "%s:%d {\n\tbind 127.0.0.1\n", zoneOrigin, bl.port)
		if bl.path.cache {
			b.WriteString("\tcache 30\n")
		}
		if bl.metrics {
			fmt.Fprintf(&b, "\tprometheus 127.0.0.1:%d\n", bl.metricsPort)
		}
		if bl.rewrites() {
			fmt.Fprintf(&b, "\tglobaladdr %s %s {\n\t\tttl %d\n\t}\n", globalV4, globalV6, globalTTL)
		}
		b.WriteString(bl.rrlDirective())
		switch bl.path.backend {
		case "etcdzone":
			b.WriteString("\tetcdzone\n")
			fallthrough
		case "etcd":
			fmt.Fprintf(&b, "\tetcd %s {\n\t\tpath /skydns\n\t\tendpoint %s\n\t}\n", zoneOrigin, etcdEndpoint)
		case "file":
			fmt.Fprintf(&b, "\tfile %s %s\n", zoneFile, zoneOrigin)
		}
		b.WriteString("}\n")
	}
	return b.String()
}

// checkViews makes sure that the blocks serve what they are meant to before
// they are measured: internal addresses without globaladdr, the global ones
// with it.
func checkViews(paths []*path) error {
	checks := []struct {
		name  string
		qtype uint16
		want  [2]string
	}{
		{"app-000.example.com.", dns.TypeA, [2]string{"10.1.0.1", globalV4}},
		{"app-000.example.com.", dns.TypeAAAA, [2]string{"fd00::1:1", globalV6}},
		{"pub-00.example.com.", dns.TypeA, [2]string{"198.51.100.1", "198.51.100.1"}},
	}
	for _, p := range paths {
		for _, b := range p.blocks {
			for _, c := range checks {
				r, err := query(b.port, c.name, c.qtype)
				if err != nil {
					return fmt.Errorf("%s: %s: %w", b, c.name, err)
				}
				want := c.want[without]
				if b.rewrites() {
					want = c.want[with]
				}
				if got := addresses(r); got != want {
					return fmt.Errorf("%s: %s %s is %q, want %q", b, c.name, dns.TypeToString[c.qtype], got, want)
				}
			}
		}
	}
	return nil
}

// addresses returns the addresses in r's answer, separated by spaces.
func addresses(r *dns.Msg) string {
	var out []string
	for _, rr := range r.Answer {
		switch rr := rr.(type) {
		case *dns.A:
			out = append(out, rr.A.String())
		case *dns.AAAA:
			out = append(out, rr.AAAA.String())
		}
	}
	return strings.Join(out, " ")
}
