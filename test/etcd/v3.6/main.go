// Command etcd is etcd's server of release 3.6, built from the Go module proxy
// for the tests that run the etcd releases the README supports
// (test/etcd_release_test.go). `make etcd-bins` builds it into
// bin/etcd/etcd-3.6.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
