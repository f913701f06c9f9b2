// Command acmeclient obtains one certificate from an ACME CA for the names
// it is given, solving their DNS-01 challenges by RFC 2136 UPDATEs signed
// with TSIG, either with lego's RFC 2136 provider (-solver lego) or with
// cert-manager's rfc2136 solver (-solver cert-manager), and writes the
// certificate with its issuer, and its key. It is the client of the
// certificate test (test/acme_test.go); `make acme-bins` builds it.
//
//	acmeclient -directory URL -ca FILE -nameserver ADDR -tsig-key NAME \
//		-tsig-secret BASE64 -resolver ADDR [-solver cert-manager -issuer FILE] \
//		-cert FILE -key FILE NAME...
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"time"
)

// options are acmeclient's flags and names.
type options struct {
	directory  string // the ACME directory's URL
	caFile     string // PEM roots the ACME server's HTTPS certificate chains to
	nameserver string // host:port the UPDATEs go to
	tsigKey    string // the TSIG key's name
	tsigSecret string // the TSIG key's secret, base64
	resolver   string // host:port where a challenge's propagation is checked
	solver     string // "lego" or "cert-manager"
	issuer     string // cert-manager's Secret and ClusterIssuer, YAML
	certFile   string // where the certificate and its issuer go, PEM
	keyFile    string // where the certificate's private key goes, PEM
	timeout    time.Duration
	names      []string
}

func main() {
	var o options
	flag.StringVar(&o.directory, "directory", "", "the ACME directory's URL")
	flag.StringVar(&o.caFile, "ca", "", "PEM file of the roots the ACME server's HTTPS certificate chains to")
	flag.StringVar(&o.nameserver, "nameserver", "", "host:port to send the RFC 2136 UPDATEs to")
	flag.StringVar(&o.tsigKey, "tsig-key", "", "the name of the TSIG key (hmac-sha256) the UPDATEs are signed with")
	flag.StringVar(&o.tsigSecret, "tsig-secret", "", "the TSIG key's secret, base64")
	flag.StringVar(&o.resolver, "resolver", "", "host:port to check a challenge's propagation at: where the CA asks")
	flag.StringVar(&o.solver, "solver", "lego", "who writes the challenges: lego (its RFC 2136 provider) or cert-manager (its rfc2136 solver)")
	flag.StringVar(&o.issuer, "issuer", "", "with -solver cert-manager: the manifests of the Secret and the ClusterIssuer (rfc2136) whose settings cert-manager's solver reads; -nameserver, -tsig-key and -tsig-secret replace the example's")
	flag.StringVar(&o.certFile, "cert", "cert.pem", "where to write the certificate and its issuer")
	flag.StringVar(&o.keyFile, "key", "key.pem", "where to write the certificate's private key")
	flag.DurationVar(&o.timeout, "timeout", 2*time.Minute, "how long to wait for the certificate")
	flag.Parse()
	o.names = flag.Args()
	if err := run(o); err != nil {
		log.Fatalf("acmeclient: %v", err)
	}
}

// run obtains the certificate o asks for and writes it.
func run(o options) error {
	for name, value := range map[string]string{"-directory": o.directory, "-ca": o.caFile, "-nameserver": o.nameserver, "-tsig-key": o.tsigKey, "-tsig-secret": o.tsigSecret, "-resolver": o.resolver} {
		if value == "" {
			return fmt.Errorf("%s is missing", name)
		}
	}
	if len(o.names) == 0 {
		return fmt.Errorf("no names to obtain a certificate for")
	}
	s, err := newSolver(o)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), o.timeout)
	defer cancel()
	res, err := obtain(ctx, o, s)
	if err != nil {
		return err
	}
	if err := os.WriteFile(o.keyFile, res.PrivateKey, 0o600); err != nil {
		return err
	}
	return os.WriteFile(o.certFile, res.Certificate, 0o644)
}

// newSolver returns the DNS-01 solver o.solver names.
func newSolver(o options) (solver, error) {
	switch o.solver {
	case "lego":
		return legoSolver(o)
	case "cert-manager":
		return certManagerSolver(o)
	}
	return solver{}, fmt.Errorf("-solver %q: lego or cert-manager", o.solver)
}
