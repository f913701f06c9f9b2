package router

import "errors"

// ErrNoUsableAddress is the router's answer that it has no WAN address it
// can report: NAT-PMP's and PCP's "network failure" and UPnP's empty
// address. miniupnpd gives it when its WAN interface has no address, or a
// reserved one (carrier-grade NAT's 100.64.0.0/10, a documentation prefix).
var ErrNoUsableAddress = errors.New("the router has no usable WAN address (it answered \"network failure\": no WAN address, or a reserved one such as carrier-grade NAT's 100.64.0.0/10)")
