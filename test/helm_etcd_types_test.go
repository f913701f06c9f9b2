package test

import (
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// certManagerV1 is the API group and version of cert-manager's
// Certificate.
const certManagerV1 = "cert-manager.io/v1"

// bundledEtcd holds the objects of the chart's bundled etcd
// (templates/etcd/), by name.
type bundledEtcd struct {
	statefulSets    map[string]*appsv1.StatefulSet
	secrets         map[string]*corev1.Secret
	jobs            map[string]*batchv1.Job
	cronJobs        map[string]*batchv1.CronJob
	networkPolicies map[string]*networkingv1.NetworkPolicy
	claims          map[string]*corev1.PersistentVolumeClaim
	certificates    map[string]*certificate
}

// newBundledEtcd returns a bundledEtcd with nothing in it.
func newBundledEtcd() bundledEtcd {
	return bundledEtcd{
		statefulSets:    map[string]*appsv1.StatefulSet{},
		secrets:         map[string]*corev1.Secret{},
		jobs:            map[string]*batchv1.Job{},
		cronJobs:        map[string]*batchv1.CronJob{},
		networkPolicies: map[string]*networkingv1.NetworkPolicy{},
		claims:          map[string]*corev1.PersistentVolumeClaim{},
		certificates:    map[string]*certificate{},
	}
}

// certificate is cert-manager's Certificate as far as the chart sets it,
// with the JSON names of its CRD, so that a strict decoding fails on a
// field the chart misspells. The main module does not depend on
// cert-manager's API for it.
type certificate struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              struct {
		SecretName  string   `json:"secretName"`
		CommonName  string   `json:"commonName"`
		DNSNames    []string `json:"dnsNames"`
		IPAddresses []string `json:"ipAddresses"`
		Usages      []string `json:"usages"`
		PrivateKey  struct {
			Algorithm      string `json:"algorithm"`
			Size           int    `json:"size"`
			RotationPolicy string `json:"rotationPolicy"`
		} `json:"privateKey"`
		IssuerRef struct {
			Name  string `json:"name"`
			Kind  string `json:"kind"`
			Group string `json:"group"`
		} `json:"issuerRef"`
	} `json:"spec"`
}
