// Package test holds globaladdr's end-to-end tests: a real CoreDNS, built
// from plugin.cfg's plugin list and order, runs in the test process from a
// Corefile string, reads records that external-dns would have written into
// an embedded etcd, and answers real DNS queries over UDP and TCP.
//
// The harness, for every test in this package:
//
//   - startCoreDNS (coredns_test.go, on internal/corednstest, which the
//     external-dns conformance tests in test/externaldns/ use too) starts
//     CoreDNS from a Corefile whose listeners are named placeholders such as
//     {port:internal}, each replaced by a free port, and stops it when the
//     test ends;
//   - startEtcd (etcd_test.go) starts an embedded etcd and writes records in
//     external-dns's format;
//   - exchange and checkCase (query_test.go) send queries and compare replies.
//
// The pipeline test (pipeline_test.go) runs programs as well, built by
// `make kube-bins` into bin/kube/ and skipped without them: startAPIServer
// (apiserver_test.go) starts a kube-apiserver on the test's etcd, kubectl
// (kubectl_test.go) creates objects and sets their status through it, and
// runExternalDNS (externaldns_run_test.go) runs external-dns once.
package test
