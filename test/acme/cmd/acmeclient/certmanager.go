package main

import (
	"context"
	"encoding/json"

	whapi "github.com/cert-manager/cert-manager/pkg/acme/webhook/apis/acme/v1alpha1"
	cmacme "github.com/cert-manager/cert-manager/pkg/apis/acme/v1"
	cmmeta "github.com/cert-manager/cert-manager/pkg/apis/meta/v1"
	"github.com/cert-manager/cert-manager/pkg/issuer/acme/dns/rfc2136"
	"github.com/cert-manager/cert-manager/pkg/issuer/acme/dns/util"
	"github.com/go-acme/lego/v5/challenge/dns01"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
)

// The Secret that holds the TSIG secret, as README.md's ClusterIssuer names
// it, in the namespace where cert-manager reads a ClusterIssuer's Secrets.
const (
	secretNamespace = "cert-manager"
	secretName      = "globaladdr-tsig"
	secretKey       = "secret"
)

// certManager is cert-manager's rfc2136 solver behind lego's
// challenge.Provider: for each challenge it builds the ChallengeRequest that
// cert-manager's DNS-01 solver builds (pkg/issuer/acme/dns), and the solver
// reads the issuer's rfc2136 settings and the TSIG secret from it, as in a
// cluster, and sends its UPDATEs.
type certManager struct {
	solver *rfc2136.Solver
	// config is the rfc2136 block of the ClusterIssuer's solver, as JSON.
	config []byte
	// nameservers are cert-manager's --dns01-recursive-nameservers.
	nameservers []string
}

// certManagerSolver returns cert-manager's rfc2136 solver for o, with the
// settings README.md's ClusterIssuer gives and its Secret, and
// cert-manager's propagation check as with --dns01-recursive-nameservers-only
// at o.resolver. cert-manager writes all challenges at once, so a name and
// its wildcard have two values at once.
func certManagerSolver(o options) (solver, error) {
	config, err := json.Marshal(cmacme.ACMEIssuerDNS01ProviderRFC2136{
		Nameserver:    o.nameserver,
		TSIGKeyName:   o.tsigKey,
		TSIGAlgorithm: "HMACSHA256",
		TSIGSecret:    cmmeta.SecretKeySelector{LocalObjectReference: cmmeta.LocalObjectReference{Name: secretName}, Key: secretKey},
	})
	if err != nil {
		return solver{}, err
	}
	secrets := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	if err := secrets.Add(&corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: secretNamespace, Name: secretName},
		Data:       map[string][]byte{secretKey: []byte(o.tsigSecret)},
	}); err != nil {
		return solver{}, err
	}
	cm := &certManager{
		solver:      rfc2136.New(rfc2136.WithSecretsLister(corelisters.NewSecretLister(secrets))),
		config:      config,
		nameservers: []string{o.resolver},
	}
	return solver{provider: cm, options: []dns01.ChallengeOption{dns01.WrapPreCheck(cm.propagated)}}, nil
}

// Present writes the challenge of domain through cert-manager's solver.
func (c *certManager) Present(ctx context.Context, domain, _, keyAuth string) error {
	req, err := c.request(ctx, domain, keyAuth)
	if err != nil {
		return err
	}
	return c.solver.Present(req)
}

// CleanUp removes the challenge of domain through cert-manager's solver.
func (c *certManager) CleanUp(ctx context.Context, domain, _, keyAuth string) error {
	req, err := c.request(ctx, domain, keyAuth)
	if err != nil {
		return err
	}
	return c.solver.CleanUp(req)
}

// request returns the ChallengeRequest that cert-manager's DNS-01 solver
// hands its rfc2136 solver for domain's challenge (prepareChallengeRequest):
// the challenge's name, its zone as the recursive name servers find it, the
// TXT value, the issuer's settings and the namespace of its Secret.
func (c *certManager) request(ctx context.Context, domain, keyAuth string) (*whapi.ChallengeRequest, error) {
	fqdn, err := util.DNS01LookupFQDN(ctx, domain, false, c.nameservers...)
	if err != nil {
		return nil, err
	}
	zone, err := util.FindZoneByFqdn(ctx, fqdn, c.nameservers)
	if err != nil {
		return nil, err
	}
	return &whapi.ChallengeRequest{
		Type:              "dns-01",
		DNSName:           domain,
		Key:               dns01.GetChallengeInfo(ctx, domain, keyAuth).Value,
		ResourceNamespace: secretNamespace,
		ResolvedFQDN:      fqdn,
		ResolvedZone:      zone,
		Config:            &apiextensionsv1.JSON{Raw: c.config},
	}, nil
}

// propagated is cert-manager's propagation check, with
// --dns01-recursive-nameservers-only: the recursive name servers answer the
// challenge's value.
func (c *certManager) propagated(ctx context.Context, _, fqdn, value string, _ dns01.PreCheckFunc) (bool, error) {
	return util.PreCheckDNS(ctx, fqdn, value, c.nameservers, false)
}
