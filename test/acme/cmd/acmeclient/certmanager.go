package main

import (
	"context"
	"encoding/json"
	"fmt"

	whapi "github.com/cert-manager/cert-manager/pkg/acme/webhook/apis/acme/v1alpha1"
	"github.com/cert-manager/cert-manager/pkg/issuer/acme/dns/rfc2136"
	"github.com/cert-manager/cert-manager/pkg/issuer/acme/dns/util"
	"github.com/go-acme/lego/v5/challenge/dns01"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
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
	// namespace is that of the Secret: cert-manager's, where it reads a
	// ClusterIssuer's Secrets.
	namespace string
	// nameservers are cert-manager's --dns01-recursive-nameservers.
	nameservers []string
}

// certManagerSolver returns cert-manager's rfc2136 solver for o, with the
// settings of the ClusterIssuer and the Secret of o.issuer, and
// cert-manager's propagation check as with --dns01-recursive-nameservers-only
// at o.resolver. The lab's own are the name server (o.nameserver), the
// key's name (o.tsigKey) and the secret (o.tsigSecret). cert-manager writes
// all challenges at once, so a name and its wildcard have two values at
// once.
func certManagerSolver(o options) (solver, error) {
	if o.issuer == "" {
		return solver{}, fmt.Errorf("-solver cert-manager: -issuer is missing")
	}
	iss, err := readIssuer(o.issuer)
	if err != nil {
		return solver{}, err
	}
	settings := *iss.rfc2136
	settings.Nameserver, settings.TSIGKeyName = o.nameserver, o.tsigKey
	config, err := json.Marshal(settings)
	if err != nil {
		return solver{}, err
	}
	secret := iss.secret.DeepCopy()
	secret.StringData = nil
	secret.Data = map[string][]byte{settings.TSIGSecret.Key: []byte(o.tsigSecret)}
	secrets := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	if err := secrets.Add(secret); err != nil {
		return solver{}, err
	}
	cm := &certManager{
		solver:      rfc2136.New(rfc2136.WithSecretsLister(corelisters.NewSecretLister(secrets))),
		config:      config,
		namespace:   secret.Namespace,
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
		ResourceNamespace: c.namespace,
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
