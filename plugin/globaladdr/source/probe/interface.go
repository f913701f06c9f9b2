package probe

import (
	"context"
	"fmt"
	"net/netip"
	"time"

	clog "github.com/coredns/coredns/plugin/pkg/log"

	"github.com/globaladdr/globaladdr/internal/wait"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

var log = clog.NewWithPlugin("globaladdr")

// resubscribe is how long from interface waits before it subscribes again
// to the kernel's address notifications after the subscription failed.
const resubscribe = time.Second

// leftOut are the flags of the addresses from interface leaves out:
// temporary (privacy) and deprecated IPv6 addresses, which do not last, and
// those still checked or found duplicate.
const leftOut = unix.IFA_F_TEMPORARY | unix.IFA_F_DEPRECATED | unix.IFA_F_TENTATIVE | unix.IFA_F_DADFAILED

// ifaceProber is "from interface NAME": the global-scope addresses of a
// local interface. Its Listener follows the kernel's address notifications
// (netlink): it is never polled.
type ifaceProber struct{ name string }

// Interface returns the Prober of "from interface NAME", of kind Local.
func Interface(name string) Prober { return &ifaceProber{name: name} }

// String implements fmt.Stringer.
func (p *ifaceProber) String() string { return "interface " + p.name }

// Probe implements Prober: the interface's global-scope addresses, but for
// those leftOut names.
func (p *ifaceProber) Probe(context.Context) ([]netip.Addr, error) {
	link, err := netlink.LinkByName(p.name)
	if err != nil {
		return nil, Errorf(ReasonNoAddress, "no interface %s: %w", p.name, err)
	}
	list, err := netlink.AddrList(link, netlink.FAMILY_ALL)
	if err != nil {
		return nil, fmt.Errorf("listing the addresses of %s: %w", p.name, err)
	}
	var addrs []netip.Addr
	for _, a := range list {
		if a.Scope != unix.RT_SCOPE_UNIVERSE || a.Flags&leftOut != 0 {
			continue
		}
		if ip, ok := netip.AddrFromSlice(a.IP); ok {
			addrs = append(addrs, ip.Unmap())
		}
	}
	if len(addrs) == 0 {
		return nil, Errorf(ReasonNoAddress, "the interface %s has no global address (removed?)", p.name)
	}
	return addrs, nil
}

// Listen implements Listener: it asks for a probe each time the kernel
// tells of an address added, changed or removed, and after it subscribed
// again once a subscription failed (a notification may have been lost).
func (p *ifaceProber) Listen(ctx context.Context, heard func([]netip.Addr)) error {
	for first := true; wait.For(ctx, resubscribeDelay(first)); first = false {
		if !first {
			heard(nil)
		}
		if err := p.follow(ctx, heard); err != nil {
			return err
		}
	}
	return nil
}

// resubscribeDelay is the wait before a subscription: none for the first.
func resubscribeDelay(first bool) time.Duration {
	if first {
		return 0
	}
	return resubscribe
}

// follow subscribes to the address notifications and calls heard(nil) for
// each that concerns the interface, until ctx is done or the subscription
// ends. It returns an error only when it could not subscribe.
func (p *ifaceProber) follow(ctx context.Context, heard func([]netip.Addr)) error {
	updates := make(chan netlink.AddrUpdate, 64)
	done := make(chan struct{})
	defer func() {
		close(done)
		for range updates { // the subscription's goroutine closes it
		}
	}()
	err := netlink.AddrSubscribeWithOptions(updates, done, netlink.AddrSubscribeOptions{
		ErrorCallback: func(err error) { log.Debugf("%s: address notifications: %v", p, err) },
	})
	if err != nil {
		close(updates)
		return fmt.Errorf("subscribing to the address notifications: %w", err)
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case u, ok := <-updates:
			if !ok {
				return nil
			}
			if link, err := netlink.LinkByName(p.name); err != nil || link.Attrs().Index == u.LinkIndex {
				heard(nil)
			}
		}
	}
}
