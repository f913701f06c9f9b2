// Package router asks the router for its WAN address, the way most home and
// office routers can tell it: UPnP IGD (GetExternalIPAddress), NAT-PMP
// (RFC 6886) and PCP (RFC 6887). It also hears the NAT-PMP and PCP
// announcements a router multicasts when its address changes. Every reply
// is hostile input: a malformed one is an error, and no address comes out of
// it. Whether an address it reports is global is for the caller to judge.
package router
