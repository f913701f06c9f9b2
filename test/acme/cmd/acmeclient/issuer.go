package main

import (
	"bytes"
	"fmt"
	"os"

	cmacme "github.com/cert-manager/cert-manager/pkg/apis/acme/v1"
	cmapi "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// issuer is what cert-manager's rfc2136 solver reads in a cluster: the
// rfc2136 settings of a ClusterIssuer's solver, and the Secret they name.
type issuer struct {
	rfc2136 *cmacme.ACMEIssuerDNS01ProviderRFC2136
	secret  *corev1.Secret
}

// readIssuer decodes file, the manifests of a Secret and of a ClusterIssuer
// whose one solver is rfc2136 (docs/acme.md's), strictly into cert-manager's
// and Kubernetes's API types: a field they do not know fails.
func readIssuer(file string) (issuer, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return issuer{}, err
	}
	var iss issuer
	for i, doc := range bytes.Split(b, []byte("\n---\n")) {
		if err := iss.decode(doc); err != nil {
			return issuer{}, fmt.Errorf("%s, document %d: %w", file, i+1, err)
		}
	}
	if iss.rfc2136 == nil || iss.secret == nil {
		return issuer{}, fmt.Errorf("%s: want a Secret and a ClusterIssuer", file)
	}
	ref := iss.rfc2136.TSIGSecret
	if ref.Name != iss.secret.Name {
		return issuer{}, fmt.Errorf("%s: the ClusterIssuer's tsigSecretSecretRef names Secret %q, the Secret is %q", file, ref.Name, iss.secret.Name)
	}
	if _, ok := iss.secret.StringData[ref.Key]; !ok {
		return issuer{}, fmt.Errorf("%s: Secret %s has no %q", file, ref.Name, ref.Key)
	}
	return iss, nil
}

// decode decodes doc, one object, into iss.
func (iss *issuer) decode(doc []byte) error {
	var meta metav1.TypeMeta
	if err := yaml.Unmarshal(doc, &meta); err != nil {
		return err
	}
	switch gvk := meta.APIVersion + " " + meta.Kind; gvk {
	case "v1 Secret":
		iss.secret = new(corev1.Secret)
		return yaml.UnmarshalStrict(doc, iss.secret)
	case "cert-manager.io/v1 ClusterIssuer":
		ci := new(cmapi.ClusterIssuer)
		if err := yaml.UnmarshalStrict(doc, ci); err != nil {
			return err
		}
		if ci.Spec.ACME == nil || len(ci.Spec.ACME.Solvers) != 1 || ci.Spec.ACME.Solvers[0].DNS01 == nil || ci.Spec.ACME.Solvers[0].DNS01.RFC2136 == nil {
			return fmt.Errorf("ClusterIssuer %s: want one ACME solver, dns01 rfc2136", ci.Name)
		}
		iss.rfc2136 = ci.Spec.ACME.Solvers[0].DNS01.RFC2136
		return nil
	default:
		return fmt.Errorf("unexpected kind %q", gvk)
	}
}
