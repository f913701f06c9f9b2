package main

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"net/http"
	"time"

	"github.com/go-acme/lego/v5/acme"
	"github.com/go-acme/lego/v5/certcrypto"
	"github.com/go-acme/lego/v5/certificate"
	"github.com/go-acme/lego/v5/challenge"
	"github.com/go-acme/lego/v5/challenge/dns01"
	"github.com/go-acme/lego/v5/lego"
	"github.com/go-acme/lego/v5/registration"
)

// solver is a DNS-01 solver for lego's core: the provider that writes and
// removes the challenges, and the options of its propagation check.
type solver struct {
	provider challenge.Provider
	options  []dns01.ChallengeOption
}

// obtain registers a new account with the CA of o.directory and obtains a
// certificate for o.names (with its issuer) through lego's core, solving
// DNS-01 with s. lego checks a challenge's propagation at o.resolver.
func obtain(ctx context.Context, o options, s solver) (*certificate.Resource, error) {
	roots, err := lego.CreateCertPool([]string{o.caFile}, false)
	if err != nil {
		return nil, err
	}
	dns01.SetDefaultClient(dns01.NewClient(&dns01.Options{RecursiveNameservers: []string{o.resolver}, Timeout: 5 * time.Second}))
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	u := &user{key: key}
	config := lego.NewConfig(u)
	config.CADirURL = o.directory
	config.HTTPClient = &http.Client{Timeout: time.Minute, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}}}
	client, err := lego.NewClient(config)
	if err != nil {
		return nil, err
	}
	if err := client.Challenge.SetDNS01Provider(s.provider, s.options...); err != nil {
		return nil, err
	}
	if u.account, err = client.Registration.Register(ctx, registration.RegisterOptions{TermsOfServiceAgreed: true}); err != nil {
		return nil, err
	}
	return client.Certificate.Obtain(ctx, certificate.ObtainRequest{Domains: o.names, KeyType: certcrypto.EC256, Bundle: true})
}

// user is the ACME account: no e-mail address, a new key.
type user struct {
	key     crypto.Signer
	account *acme.ExtendedAccount
}

// GetEmail returns no address: the account has none.
func (u *user) GetEmail() string { return "" }

// GetRegistration returns the account once registered.
func (u *user) GetRegistration() *acme.ExtendedAccount { return u.account }

// GetPrivateKey returns the account's key.
func (u *user) GetPrivateKey() crypto.Signer { return u.key }
