package etcdtest

import (
	"context"
	"testing"
	"time"
)

func TestRestartKeepsEndpointAndData(t *testing.T) {
	s, err := Start(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	endpoint := s.Endpoint()
	ctx := context.Background()
	if _, err := s.Client().Put(ctx, "/k", "v"); err != nil {
		t.Fatal(err)
	}

	s.Stop()
	short, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
	defer cancel()
	if _, err := s.Client().Get(short, "/k"); err == nil {
		t.Fatal("Get succeeded while etcd was stopped")
	}

	if err := s.Restart(); err != nil {
		t.Fatal(err)
	}
	if s.Endpoint() != endpoint {
		t.Errorf("endpoint after restart is %s, want %s", s.Endpoint(), endpoint)
	}
	resp, err := s.Client().Get(ctx, "/k")
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Kvs) != 1 || string(resp.Kvs[0].Value) != "v" {
		t.Errorf("after restart /k holds %v, want v", resp.Kvs)
	}
}
