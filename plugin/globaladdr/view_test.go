package globaladdr

import (
	"bytes"
	"context"
	"fmt"
	golog "log"
	"strings"
	"testing"

	"github.com/coredns/coredns/plugin"
	"github.com/coredns/coredns/plugin/pkg/dnstest"
	"github.com/coredns/coredns/plugin/test"

	"github.com/miekg/dns"
)

// TestCurrent checks what the external view shows of one owner's records.
func TestCurrent(t *testing.T) {
	g := newTestPlugin(t, "globaladdr 203.0.113.10 203.0.113.11 {\n hide lan.example.com\n map 192.168.1.0/24 198.51.100.0/24\n}", nil)
	st := g.Current()
	for _, c := range []struct {
		in, want []string
	}{
		{[]string{"app.example.com. 300 IN A 192.168.0.51"}, []string{"app.example.com.\t300\tIN\tA\t203.0.113.10", "app.example.com.\t300\tIN\tA\t203.0.113.11"}},
		{[]string{"pub.example.com. 300 IN A 198.51.100.80"}, []string{"pub.example.com.\t300\tIN\tA\t198.51.100.80"}},
		{[]string{"m.example.com. 300 IN AAAA fd00::1"}, nil}, // no IPv6 global address
		{[]string{"m.example.com. 300 IN A 192.168.1.7"}, []string{"m.example.com.\t300\tIN\tA\t198.51.100.7"}},
		{[]string{"x.lan.example.com. 300 IN A 198.51.100.80"}, nil},          // hidden owner
		{[]string{"www.example.com. 300 IN CNAME app.lan.example.com."}, nil}, // hidden target
		{[]string{`a-app.example.com. 300 IN TXT "\"heritage=external-dns,external-dns/owner=default\""`}, nil},
		// One RRset, one TTL, no address twice.
		{[]string{"b.example.com. 300 IN A 192.168.0.1", "b.example.com. 600 IN A 192.168.0.2", "b.example.com. 60 IN A 198.51.100.9"},
			[]string{"b.example.com.\t60\tIN\tA\t203.0.113.10", "b.example.com.\t60\tIN\tA\t203.0.113.11", "b.example.com.\t60\tIN\tA\t198.51.100.9"}},
	} {
		var in []dns.RR
		for _, s := range c.in {
			rr, err := dns.NewRR(s)
			if err != nil {
				t.Fatal(err)
			}
			in = append(in, rr)
		}
		var got []string
		for _, rr := range st.Show(in) {
			got = append(got, rr.String())
		}
		if strings.Join(got, "\n") != strings.Join(c.want, "\n") {
			t.Errorf("Show(%v) = %v, want %v", c.in, got, c.want)
		}
	}
	kept := []dns.RR{test.A("pub.example.com. 300 IN A 198.51.100.80")}
	if out := st.Show(kept); &out[0] != &kept[0] {
		t.Errorf("Show copied records it shows as they are")
	}
}

// TestCurrentWaitsForSources checks that the view can't judge before a from
// source delivered addresses, and that map alone judges at once.
func TestCurrentWaitsForSources(t *testing.T) {
	if st := newTestPlugin(t, "globaladdr {\n from file /nonexistent\n}", nil).Current(); st != nil {
		t.Errorf("Current before the source delivered: %v, want nil", st)
	}
	st := newTestPlugin(t, "globaladdr {\n map 192.168.1.0/24 198.51.100.0/24\n}", nil).Current()
	if st == nil {
		t.Fatal("map alone: Current is nil")
	}
	if out := st.Show([]dns.RR{test.A("a.example.com. 300 IN A 192.168.0.1")}); len(out) != 0 {
		t.Errorf("map alone keeps an internal address no map covers: %v", out)
	}
}

// TestServe checks that the answers of a zone a backend serves as the view
// shows it pass through untouched, hidden names included, and that the
// others are rewritten.
func TestServe(t *testing.T) {
	var asked []string
	wildcard := reply{answer: []dns.RR{test.A("x.lan.example.com. 300 IN A 192.168.0.80")}}
	g := newTestPlugin(t, "globaladdr 203.0.113.10 {\n hide lan.example.com\n}", backend(wildcard, &asked))
	ask := func(name string) *dns.Msg {
		rec := dnstest.NewRecorder(&test.ResponseWriter{})
		g.ServeDNS(context.Background(), rec, new(dns.Msg).SetQuestion(name, dns.TypeA))
		return rec.Msg
	}
	if m := ask("x.lan.example.com."); m.Rcode != dns.RcodeNameError || len(asked) != 1 || !strings.HasSuffix(asked[0], "SOA") {
		t.Errorf("without a backend that serves the view: %s, the backend was asked %v", dns.RcodeToString[m.Rcode], asked)
	}
	undo := g.Serve([]string{"Example.com."})
	if m := ask("X.lan.EXAMPLE.com."); m.Rcode != dns.RcodeSuccess || len(m.Answer) != 1 || m.Answer[0] != wildcard.answer[0] {
		t.Errorf("with a backend that serves the view: want its answer untouched:\n%v", m)
	}
	undo()
	if m := ask("x.lan.example.com."); m.Rcode != dns.RcodeNameError {
		t.Errorf("after undo: %s", dns.RcodeToString[m.Rcode])
	}
}

// TestTransferLog checks the log line of a transfer: the records sent, of
// those the plugins below gave.
func TestTransferLog(t *testing.T) {
	var asked []string
	zone := reply{answer: []dns.RR{
		test.SOA(zoneSOA),
		test.A("app.example.com. 300 IN A 192.168.0.51"),
		test.TXT(`a-app.example.com. 300 IN TXT "\"heritage=external-dns,external-dns/owner=default\""`),
		test.SOA(zoneSOA),
	}}
	g := newTestPlugin(t, v4only, backend(zone, &asked))
	var out bytes.Buffer
	golog.SetOutput(&out)
	defer golog.SetOutput(golog.Writer())
	rec := dnstest.NewRecorder(&test.ResponseWriter{})
	g.ServeDNS(context.Background(), rec, new(dns.Msg).SetQuestion("example.com.", dns.TypeAXFR))
	if want := "transfer of example.com. to 10.240.0.1:40212: 3 records sent of the 4 given"; !strings.Contains(out.String(), want) {
		t.Errorf("log %q lacks %q", out.String(), want)
	}
}

// envelopes keeps each message written to it, packed as the server would.
type envelopes struct {
	test.ResponseWriter
	sizes   []int
	records int
}

func (e *envelopes) WriteMsg(m *dns.Msg) error {
	buf, err := m.Pack()
	e.sizes = append(e.sizes, len(buf))
	e.records += len(m.Answer)
	return err
}

// TestTransferEnvelopes checks that an envelope the rewrite made larger than
// a message can be leaves as several, each within the limit, with every
// record.
func TestTransferEnvelopes(t *testing.T) {
	var asked []string
	var zone reply
	for i := range 3000 {
		zone.answer = append(zone.answer, test.A(fmt.Sprintf("host-%d.example.com. 300 IN A 192.168.%d.%d", i, i/250, i%250+1)))
	}
	g := newTestPlugin(t, "globaladdr 203.0.113.10 203.0.113.11", backend(zone, &asked))
	w := &envelopes{}
	g.ServeDNS(context.Background(), w, new(dns.Msg).SetQuestion("example.com.", dns.TypeAXFR))
	if len(w.sizes) < 2 {
		t.Fatalf("%d envelopes, want the rewritten one split", len(w.sizes))
	}
	if w.records != 6000 {
		t.Errorf("%d records sent, want 6000", w.records)
	}
	for _, n := range w.sizes {
		if n > dns.MaxMsgSize {
			t.Errorf("an envelope of %d bytes", n)
		}
	}
}

// TestFallthrough has a backend that serves example.com as the view shows
// it leave the names it lacks to the plugins after it, through the view's
// Fallthrough: their answer is rewritten (no internal address leaks), a
// hidden name is NXDOMAIN without asking them, with the SOA of the
// backend's zone, and the SOA the rewrite asks for an answer it emptied
// comes back without a loop.
func TestFallthrough(t *testing.T) {
	var asked []string
	var g *GlobalAddr
	printer := map[uint16]plugin.Handler{
		dns.TypeA:    backend(reply{answer: []dns.RR{test.A("printer.example.com. 300 IN A 192.168.0.77")}}, &asked),
		dns.TypeAAAA: backend(reply{answer: []dns.RR{test.AAAA("printer.example.com. 300 IN AAAA fd00::77")}}, &asked),
		dns.TypeSOA:  backend(reply{}, &asked),
	}
	after := plugin.HandlerFunc(func(ctx context.Context, w dns.ResponseWriter, r *dns.Msg) (int, error) {
		return printer[r.Question[0].Qtype].ServeDNS(ctx, w, r)
	})
	// The backend holds the apex alone, and leaves every other name to
	// the plugins after it.
	zone := plugin.HandlerFunc(func(ctx context.Context, w dns.ResponseWriter, r *dns.Msg) (int, error) {
		if q := r.Question[0]; q.Name == "example.com." && q.Qtype == dns.TypeSOA {
			m := new(dns.Msg).SetReply(r)
			m.Answer = []dns.RR{test.SOA(zoneSOA)}
			w.WriteMsg(m)
			return dns.RcodeSuccess, nil
		}
		return g.Fallthrough(ctx, w, r, after)
	})
	g = newTestPlugin(t, "globaladdr 203.0.113.10 {\n hide lan.example.com\n}", zone)
	g.Serve([]string{"example.com."})
	ask := func(name string, qtype uint16) *dns.Msg {
		asked = nil
		rec := dnstest.NewRecorder(&test.ResponseWriter{})
		g.ServeDNS(context.Background(), rec, new(dns.Msg).SetQuestion(name, qtype))
		return rec.Msg
	}
	if m := ask("printer.example.com.", dns.TypeA); len(m.Answer) != 1 || m.Answer[0].(*dns.A).A.String() != "203.0.113.10" {
		t.Errorf("an answer of the plugins after the backend: %v, want it rewritten", m)
	}
	if m := ask("printer.example.com.", dns.TypeAAAA); m.Rcode != dns.RcodeSuccess || len(m.Answer) != 0 || len(m.Ns) != 1 {
		t.Errorf("an answer the rewrite empties: %v, want NODATA with the SOA", m)
	}
	m := ask("x.lan.example.com.", dns.TypeA)
	if m.Rcode != dns.RcodeNameError || len(m.Ns) != 1 || len(asked) != 0 {
		t.Errorf("a hidden name: %v, the plugins after the backend asked %v; want NXDOMAIN with the SOA, unasked", m, asked)
	}

	// The SOA's MNAME hidden: the SOA the rewrite asks for is left out,
	// once. Had the view's sub-query been rewritten as a fallen-through
	// question, its emptied answer would have asked for the SOA again,
	// without end.
	g = newTestPlugin(t, "globaladdr 203.0.113.10 {\n hide dns.example.com\n}", zone)
	g.Serve([]string{"example.com."})
	if m := ask("printer.example.com.", dns.TypeAAAA); m.Rcode != dns.RcodeSuccess || len(m.Answer)+len(m.Ns) != 0 {
		t.Errorf("an answer the rewrite empties, the SOA hidden: %v, want NODATA without the SOA", m)
	}
}
