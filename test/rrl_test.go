package test

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/globaladdr/globaladdr/internal/goroutines"

	"github.com/miekg/dns"
)

// rrlZone is the zone the rrl tests serve: app has an internal IPv4 and an
// internal IPv6 address; the external view has a global IPv4 address only.
const rrlZone = `$ORIGIN example.com.
@ 300 IN SOA ns.example.com. hostmaster.example.com. 1 7200 1800 86400 30
@ 300 IN NS ns.example.com.
ns 300 IN A 203.0.113.53
app 300 IN A 192.168.0.51
app 300 IN AAAA fd00::51
`

// rrlCorefile is an external view with rrl above cache and globaladdr;
// OPTIONS are rrl's.
const rrlCorefile = `example.com:{port:dns} {
	prometheus 127.0.0.1:{httpport:metrics}
	rrl {
		OPTIONS
	}
	cache 30
	globaladdr 203.0.113.10
	file ZONE
}
`

// startRRL starts CoreDNS serving rrlZone through rrlCorefile with options.
func startRRL(t *testing.T, options ...string) *coreDNS {
	t.Helper()
	zone := filepath.Join(t.TempDir(), "db.example.com")
	if err := os.WriteFile(zone, []byte(rrlZone), 0o644); err != nil {
		t.Fatal(err)
	}
	return startCoreDNS(t, strings.NewReplacer("OPTIONS", strings.Join(options, "\n\t\t"), "ZONE", zone).Replace(rrlCorefile))
}

// burstResult is what a client got for a burst of UDP queries.
type burstResult struct {
	full, truncated int
	// bytes is the size of every reply, summed.
	bytes int
	// elapsed is from the first query sent to the last full answer
	// received: the time in which the server can have earned credits for
	// the full answers.
	elapsed time.Duration
}

// udpBurst sends n queries for name and qtype to addr over UDP from the
// address source, one every interval, each with EDNS and a buffer of
// ednsSize (none when 0), and collects the replies until none
// came for a second. A reply is a full answer, or a slip: truncated and
// empty. (A reply that bufsize truncated keeps the records that fit.)
func udpBurst(t *testing.T, addr, source, name string, qtype uint16, ednsSize uint16, n int, interval time.Duration) burstResult {
	t.Helper()
	server, err := net.ResolveUDPAddr("udp", addr)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.ParseIP(source)})
	if err != nil {
		t.Fatalf("bind %s: %v", source, err)
	}
	defer conn.Close()
	start := time.Now()
	sent := make(chan error, 1)
	go func() {
		for i := range n {
			q := new(dns.Msg)
			q.SetQuestion(name, qtype)
			q.Id = uint16(i + 1)
			if ednsSize > 0 {
				q.SetEdns0(ednsSize, false)
			}
			buf, err := q.Pack()
			if err == nil {
				_, err = conn.WriteToUDP(buf, server)
			}
			if err != nil {
				sent <- err
				return
			}
			time.Sleep(interval)
		}
		sent <- nil
	}()
	var res burstResult
	seen := map[uint16]bool{}
	buf := make([]byte, 65535)
	for {
		conn.SetReadDeadline(time.Now().Add(time.Second + time.Duration(n)*interval))
		size, err := conn.Read(buf)
		if errors.Is(err, os.ErrDeadlineExceeded) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		m := new(dns.Msg)
		if err := m.Unpack(buf[:size]); err != nil || seen[m.Id] || m.Id == 0 || int(m.Id) > n {
			t.Fatalf("not a single reply to one of the queries (%v): %v", err, m)
		}
		seen[m.Id] = true
		res.bytes += size
		if m.Truncated && len(m.Answer)+len(m.Ns) == 0 {
			res.truncated++
		} else {
			res.full++
			res.elapsed = time.Since(start)
		}
	}
	if err := <-sent; err != nil {
		t.Fatal(err)
	}
	return res
}

// askFrom asks addr over network for name's records of type qtype from the
// address source, and returns the reply or the error (a timeout when the
// reply was dropped).
func askFrom(network, addr, source, name string, qtype uint16) (*dns.Msg, error) {
	var local net.Addr = &net.UDPAddr{IP: net.ParseIP(source)}
	if network == "tcp" {
		local = &net.TCPAddr{IP: net.ParseIP(source)}
	}
	c := &dns.Client{Net: network, Timeout: 2 * time.Second, Dialer: &net.Dialer{LocalAddr: local, Timeout: 2 * time.Second}}
	m := new(dns.Msg)
	m.SetQuestion(name, qtype)
	r, _, err := c.Exchange(m, addr)
	return r, err
}

// checkAnswered fails t unless name's A query from source over network gets
// the global address.
func checkAnswered(t *testing.T, network, addr, source string) {
	t.Helper()
	r, err := askFrom(network, addr, source, "app.example.com.", dns.TypeA)
	if err != nil {
		t.Fatalf("%s from %s: %v", network, source, err)
	}
	if r.Truncated || len(r.Answer) != 1 || !strings.Contains(r.Answer[0].String(), "203.0.113.10") {
		t.Fatalf("%s from %s: not the full answer:\n%v", network, source, r)
	}
}

// TestRRLBurst floods the external view with 200 UDP queries in a second
// from one /24 and checks BIND's accounting end to end: about the rate's
// worth of full answers, the rest dropped but for every slip-th, which is
// truncated; meanwhile another /24, TCP and an exempt network are answered;
// after the window the flooded network is answered again.
func TestRRLBurst(t *testing.T) {
	const rate, window, slipEvery = 10, 5, 2
	c := startRRL(t, "responses-per-second "+strconv.Itoa(rate), "window "+strconv.Itoa(window),
		"slip "+strconv.Itoa(slipEvery), "exempt-clients 127.0.9.0/24")
	addr := c.Addr("dns")
	const flooder = "127.0.5.1"

	during := make(chan error, 1)
	go func() {
		time.Sleep(300 * time.Millisecond) // in the middle of the burst
		var errs []error
		for i := range 5 {
			if _, err := askFrom("udp", addr, "127.0.6."+strconv.Itoa(i+1), "app.example.com.", dns.TypeA); err != nil {
				errs = append(errs, fmt.Errorf("another /24: %w", err))
			}
		}
		during <- errors.Join(errs...)
	}()
	res := udpBurst(t, addr, flooder, "app.example.com.", dns.TypeA, 0, 200, 5*time.Millisecond)
	burstEnd := time.Now()
	if err := <-during; err != nil {
		t.Error(err)
	}

	// A new account holds rate credits and earns rate per second: at least
	// rate full answers, at most rate plus what was earned until the last.
	most := rate + int(float64(rate)*res.elapsed.Seconds()) + 1
	if res.full < rate || res.full > most {
		t.Errorf("%d full answers in %v, want %d to %d", res.full, res.elapsed.Round(time.Millisecond), rate, most)
	}
	// Every slip-th limited reply is sent truncated. An answer earned in
	// between resets the count, by at most one each.
	limited := 200 - res.full
	if d := res.truncated - limited/slipEvery; d > 0 || -d > res.full-rate+1 {
		t.Errorf("%d truncated replies of %d limited ones, want about 1 in %d", res.truncated, limited, slipEvery)
	}
	t.Logf("burst: %d full answers, %d truncated, %d dropped; last answer after %v", res.full, res.truncated, limited-res.truncated, res.elapsed.Round(time.Millisecond))

	// The flooder's network is in debt for window seconds; TCP and the
	// exempt network are never limited.
	if r, err := askFrom("udp", addr, flooder, "app.example.com.", dns.TypeA); err == nil && !r.Truncated {
		t.Errorf("the flooder got a full answer %v after the burst, within the window", time.Since(burstEnd))
	}
	for range 20 {
		checkAnswered(t, "tcp", addr, flooder)
	}
	for i := range 200 {
		checkAnswered(t, "udp", addr, "127.0.9."+strconv.Itoa(i%250+1))
	}

	body := scrape(t, "http://"+c.Addr("metrics")+"/metrics")
	if got := rrlSample(body, "slipped_total", addr, "response"); got < float64(res.truncated) {
		t.Errorf("slipped_total{class=response} %v, want at least the %d truncated replies", got, res.truncated)
	}
	if got := rrlSample(body, "dropped_total", addr, "response"); got < float64(limited-res.truncated) {
		t.Errorf("dropped_total{class=response} %v, want at least %d", got, limited-res.truncated)
	}

	// The debt is at most window seconds' worth: a second after the window
	// the credits are back.
	time.Sleep(time.Until(burstEnd.Add((window + 1) * time.Second)))
	checkAnswered(t, "udp", addr, flooder)
}

// TestRRLClassifiesWhatIsSent checks that rrl accounts for the reply as
// globaladdr made it: app's AAAA is internal and the view has no global IPv6
// address, so the client gets NODATA, and nodata-per-second applies, not
// responses-per-second.
func TestRRLClassifiesWhatIsSent(t *testing.T) {
	const nodataRate = 2
	c := startRRL(t, "responses-per-second 100", "nodata-per-second "+strconv.Itoa(nodataRate), "slip 0")
	addr := c.Addr("dns")
	before := scrape(t, "http://"+c.Addr("metrics")+"/metrics") // see counted
	res := udpBurst(t, addr, "127.0.7.1", "app.example.com.", dns.TypeAAAA, 0, 30, 5*time.Millisecond)
	if most := nodataRate + int(nodataRate*res.elapsed.Seconds()) + 1; res.full < nodataRate || res.full > most || res.truncated != 0 {
		t.Errorf("%d NODATA replies and %d truncated ones, want %d to %d and none", res.full, res.truncated, nodataRate, most)
	}
	after := scrape(t, "http://"+c.Addr("metrics")+"/metrics")
	if got := rrlSample(after, "dropped_total", addr, "nodata") - rrlSample(before, "dropped_total", addr, "nodata"); got != float64(30-res.full) {
		t.Errorf("dropped_total{class=nodata} %v, want %d", got, 30-res.full)
	}
	if got := rrlSample(after, "dropped_total", addr, "response") - rrlSample(before, "dropped_total", addr, "response"); got != 0 {
		t.Errorf("dropped_total{class=response} %v, want 0", got)
	}
}

// TestRRLTableBound sends queries from thousands of loopback addresses, each
// its own account (ipv4-prefix-length 32), and checks that the table stays
// at max-table-size, that the legitimate clients are answered throughout,
// and that neither the heap nor the goroutines grow from one round to the
// next.
func TestRRLTableBound(t *testing.T) {
	const tableSize = 100
	c := startRRL(t, "responses-per-second 5", "ipv4-prefix-length 32", "max-table-size "+strconv.Itoa(tableSize))
	addr, metrics := c.Addr("dns"), "http://"+c.Addr("metrics")+"/metrics"
	round := func(third int) {
		for i := range 2000 {
			source := fmt.Sprintf("127.%d.%d.%d", 10+third, i/250, i%250+1)
			if _, err := askFrom("udp", addr, source, "app.example.com.", dns.TypeA); err != nil {
				t.Fatalf("%s: %v", source, err) // each source's first query is within its credits
			}
		}
		if got := rrlSample(scrape(t, metrics), "table_size", addr, ""); got != tableSize {
			t.Fatalf("table_size %v after 2000 sources, want %d", got, tableSize)
		}
	}
	round(0)
	heap, routines := heapInUse(), goroutines.Take()
	round(1)
	round(2)
	if grown := heapInUse() - heap; grown > 4<<20 {
		t.Errorf("the heap grew by %d KiB over 4000 more sources", grown>>10)
	}
	if left := routines.Left(5*time.Second, "github.com/coredns/", "github.com/globaladdr/"); len(left) > 0 {
		t.Errorf("%d goroutines more after 4000 more sources:\n%s", len(left), strings.Join(left, "\n\n"))
	}
}

// heapInUse returns the bytes of the heap in use after a collection.
func heapInUse() int64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapInuse)
}

// rrlSample returns the value of coredns_rrl_NAME for the server at addr
// (and class, unless empty) in a Prometheus exposition; 0 when absent.
func rrlSample(body, name, addr, class string) float64 {
	_, port, _ := net.SplitHostPort(addr)
	labels := `server="dns://[^"]*:` + port + `"`
	if class != "" {
		labels = `class="` + class + `",` + labels
	}
	m := regexp.MustCompile(`(?m)^coredns_rrl_` + name + `\{` + labels + `\} (\S+)$`).FindStringSubmatch(body)
	if m == nil {
		return 0
	}
	v, _ := strconv.ParseFloat(m[1], 64)
	return v
}
