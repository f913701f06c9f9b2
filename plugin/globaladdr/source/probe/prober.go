// Package probe asks peers for the uplink's global addresses: the router
// (UPnP IGD, NAT-PMP, PCP, over package router), a server that sees the
// uplink from outside (STUN, HTTPS), or a local interface. Each probe
// reads the arguments of its from line and reports what its peer answers,
// unchecked, or why it could not: judging, voting on and serving the
// addresses is the source package's job.
package probe

import (
	"context"
	"net/netip"
)

// Prober asks one peer for the uplink's global addresses: a router (UPnP
// IGD, NAT-PMP, PCP) or a server that sees the uplink from outside (STUN,
// HTTPS). The from lines of the polled sources hold one Prober per server;
// the runner of the line asks them and checks, votes on and serves what they
// answer.
//
// The contract:
//   - Probe is called at start, then once each `every` (60s by default, 1s
//     at least), and when a Listener asks; never concurrently with itself for
//     one Prober. Its ctx has a deadline (at most `every`, at most 10s) and
//     is cancelled when the server stops: Probe returns by then.
//   - It returns the addresses as the peer reported them, unchecked and
//     unfiltered: a private, shared (100.64.0.0/10, carrier-grade NAT),
//     loopback or otherwise reserved address is returned as it is. The
//     runner refuses what is not globally reachable or is internal to the
//     block, says why in the log and counts it, and keeps the last good
//     address.
//   - An error means no answer this time; the last good address is kept. The
//     error is logged once while it lasts (give it words a user understands:
//     "the router at 192.168.0.1 has no usable external address (NAT-PMP
//     result 3, network failure)") and counted by reason: wrap it with
//     Errorf to give the reason (one of the reason constants); ReasonOf
//     classifies the others (ctx's deadline: ReasonTimeout; a *net.OpError:
//     ReasonUnreachable; else "other"). No address and no error is counted
//     as ReasonNoAddress.
//   - A reply is hostile input: parse it strictly, bound what is read, and
//     return reason "malformed" rather than a part of it.
//   - A Prober that implements fmt.Stringer is named so in logs and in the
//     source label of the metrics ("natpmp 192.168.0.1"); otherwise the
//     line's keyword and arguments name it.
//   - A Prober that holds something across probes (a PCP mapping) releases
//     it in Close, when it implements io.Closer: called once, after the last
//     Probe and Listen have returned, when the server stops or reloads. Close
//     bounds its own time (a second or two).
type Prober interface {
	Probe(ctx context.Context) ([]netip.Addr, error)
}

// Listener is implemented by a Prober that also hears of changes between
// probes: a router's NAT-PMP or PCP announcements. Listen runs from start
// until ctx is done. It calls heard with the addresses a message carries,
// which the runner takes as a probe's answer (checked the same way), or with
// nil to ask for a probe at once. heard returns at once; a change heard is
// served within milliseconds. When Listen can't listen (the port is taken,
// the network carries no multicast), it returns the error: the runner logs
// it once at info, and the line goes on polling.
type Listener interface {
	Listen(ctx context.Context, heard func(addrs []netip.Addr)) error
}

// Kind tells what a polled source sees, for the double-NAT diagnosis and
// for which sources speak for the uplink.
type Kind uint8

const (
	// Router sources ask the router for its WAN address (upnp, natpmp,
	// pcp). A private address from one, beside a public one from an
	// Observer, means that the router sits behind another NAT.
	Router Kind = iota + 1
	// Observer sources see the uplink's address from outside (stun,
	// https).
	Observer
)

// Local is the kind of from interface: the address is on the node itself.
const Local Kind = 0
