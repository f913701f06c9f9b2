package source

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/globaladdr/globaladdr/internal/goroutines"
)

// TestSourceStopLeaksNothing starts a file source and an etcd source with a
// connection of its own, and stops them as a Corefile reload or shutdown
// does: every goroutine they started must end, the connection's too. Not
// parallel: other tests' sources would count.
func TestSourceStopLeaksNothing(t *testing.T) {
	key := "/globaladdr/" + t.Name()
	srv := etcdWithKey(t, key, "2001:db8::10")
	path := filepath.Join(t.TempDir(), "wan")
	write(t, path, "203.0.113.10")

	before := goroutines.Take()
	s := startSources(t, "globaladdr {\n from file "+path+"\n from etcd "+key+"\n endpoint "+srv.Endpoint()+"\n}", nil)
	waitAddrs(t, s, "203.0.113.10 2001:db8::10")
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	// The embedded etcd's own goroutines (started before) do not count; its
	// gRPC server's for globaladdr's connection (started after) do.
	if left := before.Left(deadline, "plugin/globaladdr/source.", "go.etcd.io/etcd/client/v3", "google.golang.org/grpc"); len(left) > 0 {
		t.Fatalf("%d goroutines left after stop:\n\n%s", len(left), strings.Join(left, "\n\n"))
	}
}
