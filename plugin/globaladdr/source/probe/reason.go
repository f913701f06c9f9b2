package probe

import (
	"context"
	"errors"
	"fmt"
	"net"
)

// The reasons of coredns_globaladdr_source_errors_total. A Prober gives one
// with Errorf; those only this package's probes give are unexported.
const (
	// ReasonTimeout: no reply in time.
	ReasonTimeout = "timeout"
	// ReasonUnreachable: the peer can't be reached (no route, connection
	// refused, ICMP unreachable, DNS lookup failed).
	ReasonUnreachable = "unreachable"
	// ReasonNoAddress: the peer answered that it has no usable address
	// (NAT-PMP or PCP "network failure", UPnP's empty address).
	ReasonNoAddress = "no_address"
	// reasonDiscovery: the peer could not be found (no SSDP answer, no
	// default route for the gateway).
	reasonDiscovery = "discovery"
	// reasonRejected: the peer answered with an error (a NAT-PMP or PCP
	// result code, a SOAP fault, an HTTP status, a STUN error response).
	reasonRejected = "rejected"
	// reasonMalformed: the reply could not be parsed.
	reasonMalformed = "malformed"
	// reasonTLS: the HTTPS peer's certificate did not verify.
	reasonTLS = "tls"
	// reasonOther: anything else.
	reasonOther = "other"
)

// probeError is an error with its reason, one of the reason constants.
type probeError struct {
	reason string
	err    error
}

// Error implements error.
func (e *probeError) Error() string { return e.err.Error() }

// Unwrap returns the underlying error.
func (e *probeError) Unwrap() error { return e.err }

// Errorf returns an error of reason, formatted as fmt.Errorf does (%w
// wraps).
func Errorf(reason, format string, args ...any) error {
	return &probeError{reason: reason, err: fmt.Errorf(format, args...)}
}

// ReasonOf classifies err, a Probe's error: the reason Errorf gave it; else
// ReasonTimeout for a deadline, ReasonUnreachable for a network error, and
// "other" for the rest.
func ReasonOf(err error) string {
	var pe *probeError
	var ne interface{ Timeout() bool }
	switch {
	case errors.As(err, &pe):
		return pe.reason
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return ReasonTimeout
	case errors.As(err, new(*net.OpError)), errors.As(err, new(*net.DNSError)):
		return ReasonUnreachable
	}
	return reasonOther
}
