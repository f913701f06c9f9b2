package router

import (
	"context"
	"errors"
	"net/netip"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/globaladdr/globaladdr/internal/netlab"
	"github.com/globaladdr/globaladdr/internal/routerlab"
)

// TestLab asks Debian's miniupnpd, in a lab of network namespaces, for its
// WAN address with UPnP (found by SSDP, and at its URL), NAT-PMP and PCP,
// through a change of the address (announced by NAT-PMP and PCP), a WAN
// address it won't report, its absence, and a player in its place that
// reports carrier-grade NAT's. PCP keeps one mapping, and Close deletes it.
func TestLab(t *testing.T) {
	if !netlab.Enter(t) {
		return
	}
	lab := routerlab.New(t)
	gw, err := DefaultGateway()
	if err != nil || gw != routerlab.RouterLAN {
		t.Fatalf("DefaultGateway = %v, %v; want %v", gw, err, routerlab.RouterLAN)
	}
	desc, _ := url.Parse(lab.DescURL())
	pcp := &PCP{Server: gw}
	probers := []interface {
		Probe(context.Context) (netip.Addr, error)
		String() string
	}{&UPnP{}, &UPnP{URL: desc}, &NATPMP{Gateway: gw}, pcp}
	expect := func(want string) {
		t.Helper()
		for _, p := range probers {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			a, err := p.Probe(ctx)
			cancel()
			if got := describe(a, err); got != want {
				t.Errorf("%s: %v, %v: %s; want %s", p, a, err, got, want)
			}
		}
	}
	expect(routerlab.FirstWAN.String())

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	heard := map[Kind]chan struct{}{AnnounceNATPMP: make(chan struct{}, 8), AnnouncePCP: make(chan struct{}, 8)}
	for kind, c := range heard {
		go ListenAnnouncements(ctx, gw, kind, func(netip.Addr) { c <- struct{}{} })
	}
	time.Sleep(100 * time.Millisecond) // the listeners join the group
	next := netip.MustParseAddr("11.22.33.3")
	lab.SetWAN(next)
	for kind, c := range heard {
		select {
		case <-c:
		case <-time.After(2 * time.Second):
			t.Errorf("no announcement of kind %d within 2s", kind)
		}
	}
	expect(next.String())

	// miniupnpd 2.3.1 reports no reserved address: UPnP's empty address,
	// NAT-PMP's network failure; PCP's MAP gets no resources.
	lab.SetWAN(netip.MustParseAddr("100.64.3.4"))
	for _, p := range probers {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_, err := p.Probe(ctx)
		cancel()
		switch {
		case p == pcp:
			if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "reserved") {
				t.Errorf("%s with a WAN address in 100.64.0.0/10: %v; want no resources, with a hint", p, err)
			}
		case !errors.Is(err, ErrNoUsableAddress) || !strings.Contains(err.Error(), "no usable WAN address"):
			t.Errorf("%s with a WAN address in 100.64.0.0/10: %v; want network failure in words", p, err)
		}
	}
	lab.SetWAN(next)

	lab.Stop()
	for _, p := range probers {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		if a, err := p.Probe(ctx); err == nil {
			t.Errorf("%s without the router: %v", p, a)
		}
		cancel()
	}
	lab.Start()
	desc, _ = url.Parse(lab.DescURL())
	probers[1] = &UPnP{URL: desc}
	expect(next.String())

	// One mapping, renewed; gone once closed.
	if rules := lab.Router.Run("nft", "list", "chain", "inet", "filter", "prerouting_miniupnpd"); strings.Count(rules, "dnat") != 1 {
		t.Errorf("PCP mappings in miniupnpd's chain: want 1\n%s", rules)
	}
	closeCtx, closeCancel := context.WithTimeout(context.Background(), 2*time.Second)
	if err := pcp.Close(closeCtx); err != nil {
		t.Errorf("deleting the PCP mapping: %v", err)
	}
	closeCancel()
	if rules := lab.Router.Run("nft", "list", "chain", "inet", "filter", "prerouting_miniupnpd"); strings.Contains(rules, "dnat") {
		t.Errorf("the PCP mapping is left after Close:\n%s", rules)
	}

	cgnat := netip.MustParseAddr("100.64.1.2")
	player := lab.Play(t, cgnat)
	desc, _ = url.Parse(player.DescURL)
	probers = append(probers[2:], &UPnP{URL: desc})
	expect(cgnat.String())

	ctx, cancel = context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := pcp.Close(ctx); err != nil {
		t.Errorf("deleting the PCP mapping: %v", err)
	}
}
