package router

import (
	"errors"
	"fmt"
)

// The kinds of error a probe returns besides the network's own, for
// errors.Is.
var (
	// ErrNoUsableAddress is the router's answer that it has no WAN address
	// it can report: NAT-PMP's and PCP's "network failure" and UPnP's empty
	// address. miniupnpd gives it when its WAN interface has no address, or
	// a reserved one (carrier-grade NAT's 100.64.0.0/10, a documentation
	// prefix).
	ErrNoUsableAddress = errors.New("the router has no usable WAN address: it answered \"network failure\" (no WAN address, or a reserved one such as carrier-grade NAT's 100.64.0.0/10)")
	// ErrMalformed is an answer that does not parse.
	ErrMalformed = errors.New("malformed answer")
	// ErrRefused is an answer that refuses the request: a result code
	// other than success and network failure, a SOAP fault.
	ErrRefused = errors.New("request refused")
	// ErrNotFound is a router that could not be found: no SSDP answer, no
	// default route.
	ErrNotFound = errors.New("no router found")
)

// kindError is an error of one of the kinds above, in words of its own.
type kindError struct {
	kind error
	text string
}

func (e *kindError) Error() string        { return e.text }
func (e *kindError) Is(target error) bool { return target == e.kind }

// malformed returns an ErrMalformed error, formatted as fmt.Sprintf does.
func malformed(format string, args ...any) error {
	return &kindError{kind: ErrMalformed, text: fmt.Sprintf(format, args...)}
}

// refused returns an ErrRefused error, formatted as fmt.Sprintf does.
func refused(format string, args ...any) error {
	return &kindError{kind: ErrRefused, text: fmt.Sprintf(format, args...)}
}

// notFound returns an ErrNotFound error, formatted as fmt.Sprintf does.
func notFound(format string, args ...any) error {
	return &kindError{kind: ErrNotFound, text: fmt.Sprintf(format, args...)}
}
