package signer

import (
	"fmt"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// hostsZone returns a zone of n hosts (A records) with its SOA and NS.
func hostsZone(b *testing.B, n int) []dns.RR {
	rrs := parseZone(b, "example.com. 3600 IN SOA ns1.example.net. hostmaster.example.com. 1 3600 600 1209600 300\nexample.com. 3600 IN NS ns1.example.net.\nexample.com. 3600 IN NS ns2.example.net.")
	for i := range n {
		rrs = append(rrs, &dns.A{Hdr: dns.RR_Header{Name: fmt.Sprintf("h%05d.example.com.", i), Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 300}, A: []byte{203, 0, 113, 10}})
	}
	return rrs
}

// BenchmarkSign30000 signs a zone of 30,000 hosts from scratch (KSK and
// ZSK, NSEC3), and reports the memory of the unsigned zone as RRsets
// (unsigned-MiB), that the signer holds (heap-MiB: its copy of the zone's
// records, the signatures and the chain) and the CPU time it takes
// (cpu-s/op, on every core: the wall time says little on a shared machine).
func BenchmarkSign30000(b *testing.B) {
	for _, alg := range []uint8{dns.ECDSAP256SHA256, dns.ED25519} {
		b.Run(dns.AlgorithmToString[alg], func(b *testing.B) {
			keys := makeKeys(b, []uint16{257, 256}, alg)
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			zone := Sets(hostsZone(b, 30000))
			runtime.GC()
			runtime.ReadMemStats(&after)
			unsigned := after.HeapAlloc - before.HeapAlloc
			var heap uint64
			cpu := cpuTime()
			for b.Loop() {
				var before, after runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&before)
				s, err := New("example.com.", keys, Options{}, time.Now())
				if err != nil {
					b.Fatal(err)
				}
				if _, err := s.Apply(zone, time.Now()); err != nil {
					b.Fatal(err)
				}
				runtime.GC()
				runtime.ReadMemStats(&after)
				heap = after.HeapAlloc - before.HeapAlloc
				runtime.KeepAlive(s)
			}
			b.ReportMetric(float64(heap)/(1<<20), "heap-MiB")
			b.ReportMetric(float64(unsigned)/(1<<20), "unsigned-MiB")
			b.ReportMetric((cpuTime()-cpu).Seconds()/float64(b.N), "cpu-s/op")
		})
	}
}

// BenchmarkApplyOne adds and deletes one host (and moves the SOA serial)
// in a signed zone of 30,000 hosts: the work of one change.
func BenchmarkApplyOne(b *testing.B) {
	keys := makeKeys(b, []uint16{257, 256}, dns.ECDSAP256SHA256)
	s, err := New("example.com.", keys, Options{}, time.Now())
	if err != nil {
		b.Fatal(err)
	}
	if _, err := s.Apply(Sets(hostsZone(b, 30000)), time.Now()); err != nil {
		b.Fatal(err)
	}
	soa := hostsZone(b, 0)[0].(*dns.SOA)
	host := &dns.A{Hdr: dns.RR_Header{Name: "new.example.com.", Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 300}, A: []byte{203, 0, 113, 11}}
	records := 0
	for i := 0; b.Loop(); i++ {
		soa.Serial++
		change := []RRset{{Name: "example.com.", Type: dns.TypeSOA, RRs: []dns.RR{soa}}, {Name: host.Hdr.Name, Type: dns.TypeA}}
		if i%2 == 0 {
			change[1].RRs = []dns.RR{host}
		}
		d, err := s.Apply(change, time.Now())
		if err != nil {
			b.Fatal(err)
		}
		records += len(d.Added)
	}
	b.ReportMetric(float64(records)/float64(b.N), "records-added/op")
}

// cpuTime returns the CPU time the process has used (user and system).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
