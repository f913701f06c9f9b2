package test

import (
	"context"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/globaladdr/globaladdr/internal/externaldns"
	"github.com/globaladdr/globaladdr/internal/samplezone"

	"github.com/miekg/dns"
)

// amplificationBlock is the external view of the zone under etcd path
// PATH, as external.Corefile had it before rrl, on port PORT, with EXTRA.
const amplificationBlock = `example.com:{port:PORT} {
	EXTRA
	cache 30
	globaladdr 203.0.113.10 2001:db8::10 {
		ttl 900
	}
	etcd example.com {
		path PATH
		endpoint ETCD
	}
}
`

// amplificationCorefile serves the zone under etcd path on {port:before}
// as external.Corefile did before rrl, and on {port:after} with bufsize
// 1232 and rrl, as it does now.
func amplificationCorefile(path, etcd string) string {
	block := func(port, extra string) string {
		return strings.NewReplacer("PORT", port, "EXTRA", extra, "PATH", path, "ETCD", etcd).Replace(amplificationBlock)
	}
	return block("before", "") + "\n" + block("after", "bufsize 1232\n\trrl {\n\t\tresponses-per-second 10\n\t}")
}

// amplificationTypes are the types an attacker may ask for each name.
var amplificationTypes = []uint16{dns.TypeA, dns.TypeAAAA, dns.TypeSRV, dns.TypeTXT, dns.TypeMX, dns.TypeNS, dns.TypeSOA, dns.TypeANY}

// TestAmplification measures the amplification factor (reply bytes / query
// bytes) an attacker gets from the external view of the demo's zone and of
// the benchmarks' 200-host zone, before and after bufsize 1232 and rrl: the
// largest single reply to a query with EDNS and a 4096-byte buffer (every
// name of the zone and its apex, every type of amplificationTypes), and a
// flood of 200 copies of that query in a second from one network. It logs
// the figures of BENCHMARKS.md (go test -v -run TestAmplification ./test/)
// and checks that after, no reply is over 1232 bytes and the flood gets
// nothing back beyond rrl's few full answers but slips the size of the
// query.
func TestAmplification(t *testing.T) {
	t.Parallel()
	etcd := startEtcd(t)
	zones := []struct {
		name    string
		path    string
		records []externaldns.Record
	}{
		{"demo (demo/records.go)", "/demo", samplezone.Demo()},
		{"200 hosts (bench)", "/hosts", samplezone.Hosts(300)},
	}
	var report strings.Builder
	report.WriteString("| zone | worst query | query bytes | before: largest reply | factor | flood factor | after: largest reply | factor | flood factor |\n|---|---|---|---|---|---|---|---|---|\n")
	for i, z := range zones {
		for _, r := range z.records {
			if err := externaldns.Put(context.Background(), etcd.Client(), z.path, r); err != nil {
				t.Fatal(err)
			}
		}
		c := startCoreDNS(t, amplificationCorefile(z.path, etcd.Endpoint()))
		names := []string{"example.com."}
		for _, r := range z.records {
			names = append(names, dns.Fqdn(r.Name))
		}
		worst := largestReply(t, c.Addr("before"), names)
		after := largestReply(t, c.Addr("after"), names)
		if after.reply > 1232 {
			t.Errorf("%s: a reply of %d bytes with bufsize 1232 (%s)", z.name, after.reply, after)
		}
		// The flood, from its own network for each server.
		q := worst.msg
		floodBefore := udpBurst(t, c.Addr("before"), fmt.Sprintf("127.0.%d.1", 20+i), q.Question[0].Name, q.Question[0].Qtype, 4096, 200, 5*time.Millisecond)
		floodAfter := udpBurst(t, c.Addr("after"), fmt.Sprintf("127.0.%d.1", 30+i), q.Question[0].Name, q.Question[0].Qtype, 4096, 200, 5*time.Millisecond)
		factor := func(n int) float64 { return float64(n) / float64(worst.query) }
		flood := func(b burstResult) float64 { return float64(b.bytes) / float64(200*worst.query) }
		// What the flood gets back beyond rrl's full answers are slips, each
		// no larger than its query.
		if most := floodAfter.full*after.reply + floodAfter.truncated*worst.query; floodAfter.bytes > most {
			t.Errorf("%s: the flood got %d bytes back, more than %d full answers and %d slips the size of the query", z.name, floodAfter.bytes, floodAfter.full, floodAfter.truncated)
		}
		fmt.Fprintf(&report, "| %s | %s | %d | %d | %.1f | %.1f | %d | %.1f | %.2f |\n", z.name, worst, worst.query,
			worst.reply, factor(worst.reply), flood(floodBefore), after.reply, factor(after.reply), flood(floodAfter))
	}
	t.Logf("amplification factors:\n%s", report.String())
}

// largest is the query with the largest reply.
type largest struct {
	msg          *dns.Msg
	query, reply int // bytes
}

// largestReply asks addr every type of amplificationTypes for each name,
// with EDNS and a 4096-byte buffer, and returns the query with the largest
// reply in bytes.
func largestReply(t *testing.T, addr string, names []string) largest {
	t.Helper()
	conn, err := net.Dial("udp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var best largest
	buf := make([]byte, 65535)
	for _, name := range names {
		for _, qtype := range amplificationTypes {
			q := new(dns.Msg)
			q.SetQuestion(name, qtype)
			q.SetEdns0(4096, false)
			packed, err := q.Pack()
			if err != nil {
				t.Fatal(err)
			}
			conn.SetDeadline(time.Now().Add(5 * time.Second))
			if _, err := conn.Write(packed); err != nil {
				t.Fatal(err)
			}
			n, err := conn.Read(buf)
			if err != nil {
				t.Fatalf("%s %s to %s: %v", name, dns.TypeToString[qtype], addr, err)
			}
			if n > best.reply {
				best = largest{msg: q, query: len(packed), reply: n}
			}
		}
	}
	return best
}

// String names the query as dig would.
func (l largest) String() string {
	return l.msg.Question[0].Name + " " + dns.TypeToString[l.msg.Question[0].Qtype]
}
