// Command demo shows globaladdr's split horizon on one machine: it starts an
// embedded etcd holding records as external-dns writes them, and a CoreDNS
// that serves them with internal addresses on 127.0.0.1:1053 and with the
// global address on 127.0.0.1:1054. It prints dig commands to try and runs
// until Ctrl-C, then stops everything and removes its files.
//
// Run it with `make demo`, or: go run ./demo -coredns ./coredns
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/globaladdr/globaladdr/internal/etcdtest"
)

// The listeners of the two views.
const (
	internalAddr = "127.0.0.1:1053"
	externalAddr = "127.0.0.1:1054"
)

func main() {
	binary := flag.String("coredns", "./coredns", "the CoreDNS binary with globaladdr (make build)")
	flag.Parse()
	log.SetFlags(0)
	log.SetPrefix("demo: ")
	if err := run(*binary); err != nil {
		log.Fatal(err)
	}
}

// run runs the demo until SIGINT or SIGTERM and cleans up after it.
func run(binary string) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	dir, err := os.MkdirTemp("", "globaladdr-demo-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)

	etcd, err := etcdtest.Start(filepath.Join(dir, "etcd"))
	if err != nil {
		return err
	}
	defer etcd.Close()
	if err := putSampleRecords(ctx, etcd); err != nil {
		return fmt.Errorf("write sample records: %w", err)
	}

	corefile := filepath.Join(dir, "Corefile")
	corefileText := demoCorefile(etcd.Endpoint())
	if err := os.WriteFile(corefile, []byte(corefileText), 0o644); err != nil {
		return err
	}
	dns, err := startCoreDNS(binary, corefile)
	if err != nil {
		return err
	}
	defer dns.stop()

	readyCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for _, addr := range []string{internalAddr, externalAddr} {
		if err := dns.waitAnswering(readyCtx, addr); err != nil {
			return err
		}
	}
	printTryIt(etcd.Endpoint(), corefileText)

	// Ctrl-C in a terminal signals CoreDNS too: it may exit first, cleanly.
	select {
	case <-ctx.Done():
	case <-dns.exited:
		if dns.err != nil {
			return fmt.Errorf("coredns failed: %v", dns.err)
		}
	}
	fmt.Println("\nstopping CoreDNS and etcd ...")
	return nil
}
