package zone

import (
	"fmt"
	"net"
	"runtime"
	"testing"

	"github.com/coredns/coredns/plugin/file"

	"github.com/miekg/dns"
)

// benchIndex returns an index of n hosts, each an A record with an internal
// address, as external-dns writes them.
func benchIndex(n int) *Index {
	idx := NewIndex(nil)
	for i := range n {
		name := fmt.Sprintf("h%05d.example.com.", i)
		add(idx, "/skydns/com/example/"+name, name, []dns.RR{&dns.A{
			Hdr: dns.RR_Header{Name: name, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 300},
			A:   net.IPv4(10, 30, byte(i>>8), byte(i)).To4(),
		}}, nil)
	}
	return idx
}

// BenchmarkBuildChange builds the version after one new host in a zone of
// 30,000 hosts, as the external view shows it (two global addresses).
func BenchmarkBuildChange(b *testing.B) {
	idx := benchIndex(30000)
	z := &Zone{Name: "example.com.", Apex: testApex}
	st := externalView("203.0.113.10", "203.0.113.11")
	v, _ := Build(z, idx, nil, nil, st, Serial{}.At(1))
	b.ResetTimer()
	for i := range b.N {
		name := fmt.Sprintf("new%d.example.com.", i)
		changed := map[string]bool{}
		add(idx, name, name, []dns.RR{&dns.A{Hdr: dns.RR_Header{Name: name, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 300}, A: net.IPv4(10, 0, 0, 1).To4()}}, changed)
		v, _ = Build(z, idx, v, changed, st, v.Serial.At(int64(i+2)))
	}
}

// BenchmarkBuildView builds a zone of 30,000 hosts anew for new global
// addresses.
func BenchmarkBuildView(b *testing.B) {
	idx := benchIndex(30000)
	z := &Zone{Name: "example.com.", Apex: testApex}
	v, _ := Build(z, idx, nil, nil, externalView("203.0.113.10"), Serial{}.At(1))
	b.ResetTimer()
	for i := range b.N {
		v, _ = Build(z, idx, v, nil, externalView(fmt.Sprintf("203.0.113.%d", i%200)), v.Serial)
	}
}

// heap returns the bytes in use on the heap after a collection.
func heap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// TestMemory logs the memory of 10,000 hosts: the index, the internal view,
// the external view, both views of one index, and the file plugin's zone of
// the same records. A measurement, not an assertion: see BENCHMARKS.md.
func TestMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("a measurement")
	}
	const n = 10000
	z := &Zone{Name: "example.com.", Apex: testApex}
	base := heap()
	idx := benchIndex(n)
	withIndex := heap()
	internal, _ := Build(z, idx, nil, nil, nil, Serial{}.At(1))
	withInternal := heap()
	external, _ := Build(z, idx, nil, nil, externalView("203.0.113.10", "203.0.113.11"), Serial{}.At(1))
	withBoth := heap()
	fz := file.NewZone("example.com.", "")
	for _, rr := range internal.Records() {
		if rr.Header().Rrtype != dns.TypeSOA && rr.Header().Rrtype != dns.TypeNS {
			fz.Insert(dns.Copy(rr))
		}
	}
	withFile := heap()
	t.Logf("%d hosts: index %d KiB, index and internal view %d KiB, and external view (two addresses) %d KiB more; the file plugin's zone %d KiB",
		n, (withIndex-base)>>10, (withInternal-base)>>10, (withBoth-withInternal)>>10, (withFile-withBoth)>>10)
	runtime.KeepAlive(idx)
	runtime.KeepAlive(internal)
	runtime.KeepAlive(external)
	runtime.KeepAlive(fz)
}
