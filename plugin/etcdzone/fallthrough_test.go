package etcdzone

import (
	"bytes"
	"context"
	golog "log"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/coredns/coredns/plugin"
	"github.com/coredns/coredns/plugin/etcd"
	"github.com/coredns/coredns/plugin/pkg/fall"
	"github.com/coredns/coredns/plugin/test"

	"github.com/globaladdr/globaladdr/internal/externaldns"
	"github.com/globaladdr/globaladdr/internal/fixedview"
	"github.com/globaladdr/globaladdr/internal/setuptest"
	"github.com/globaladdr/globaladdr/plugin/etcdzone/config"
	"github.com/globaladdr/globaladdr/plugin/pkg/horizon"

	"github.com/miekg/dns"
)

// nextAnswer is the handler after the plugin in the fallthrough tests: it
// answers every question with a TXT record "next", so that a reply tells
// who gave it.
var nextAnswer = plugin.HandlerFunc(func(_ context.Context, w dns.ResponseWriter, r *dns.Msg) (int, error) {
	m := new(dns.Msg)
	m.SetReply(r)
	m.Answer = []dns.RR{test.TXT(r.Question[0].Name + ` 60 IN TXT "next"`)}
	w.WriteMsg(m)
	return dns.RcodeSuccess, nil
})

// fromNext reports whether m is nextAnswer's.
func fromNext(m *dns.Msg) bool {
	return len(m.Answer) == 1 && m.Answer[0].Header().Rrtype == dns.TypeTXT && m.Answer[0].(*dns.TXT).Txt[0] == "next"
}

// TestFallthrough asks for names the zone has and names it lacks, with
// fallthrough: only a name that does not exist in the zone (NXDOMAIN), and
// in fallthrough's zones, goes to the next plugin; a name a wildcard covers,
// an empty non-terminal, a name without the type asked (NODATA), one below
// a delegation and the owner of a CNAME to a missing name are the zone's to
// answer, as the file and etcd plugins answer them with fallthrough.
func TestFallthrough(t *testing.T) {
	x, _ := newTestZone(t, append(slices.Clone(zoneRecords),
		externaldns.Record{Name: "dangling.example.com", Type: "CNAME", Targets: []string{"gone.example.com"}},
	)...)
	x.Next = nextAnswer
	x.corefile.Fall.SetZonesFromArgs(nil)
	for _, tc := range []struct {
		name  string
		qtype uint16
		next  bool
	}{
		{"nothing.example.com.", dns.TypeA, true},
		{"a.b.nothing.example.com.", dns.TypeAAAA, true},
		{"app.example.com.", dns.TypeA, false},
		{"app.example.com.", dns.TypeMX, false},
		{"deep.example.com.", dns.TypeA, false},
		{"covered.apps.example.com.", dns.TypeA, false},
		{"covered.apps.example.com.", dns.TypeTXT, false},
		{"host.lab.example.com.", dns.TypeA, false},
		{"dangling.example.com.", dns.TypeA, false},
		{"example.com.", dns.TypeA, false},
	} {
		m := exchange(t, x, tc.name, tc.qtype)
		if fromNext(m) != tc.next {
			t.Errorf("%s %s: answered by the next plugin %v, want %v\n%v", tc.name, dns.TypeToString[tc.qtype], fromNext(m), tc.next, m)
		}
	}

	x.corefile.Fall.SetZonesFromArgs([]string{"lan.example.com"})
	if m := exchange(t, x, "nothing.example.com.", dns.TypeA); fromNext(m) || m.Rcode != dns.RcodeNameError {
		t.Errorf("nothing.example.com outside fallthrough's zones: %v, want the zone's NXDOMAIN", m)
	}
	if m := exchange(t, x, "printer.lan.example.com.", dns.TypeA); !fromNext(m) {
		t.Errorf("printer.lan.example.com inside fallthrough's zones: %v, want the next plugin's answer", m)
	}

	x.corefile.Fall = fall.F{}
	if m := exchange(t, x, "nothing.example.com.", dns.TypeA); fromNext(m) || m.Rcode != dns.RcodeNameError {
		t.Errorf("nothing.example.com without fallthrough: %v, want the zone's NXDOMAIN", m)
	}
}

// fallView is a view that withholds TXT records, and answers what the
// plugin leaves to the next one by a TXT record "view" of its own, so that
// a reply tells who gave it.
type fallView struct{ fixedview.View }

func (fallView) Fallthrough(_ context.Context, w dns.ResponseWriter, r *dns.Msg, _ plugin.Handler) (int, error) {
	m := new(dns.Msg)
	m.SetReply(r)
	m.Answer = []dns.RR{test.TXT(r.Question[0].Name + ` 60 IN TXT "view"`)}
	w.WriteMsg(m)
	return dns.RcodeSuccess, nil
}

// TestFallthroughView falls through in a block with a view: a name the
// zone lacks goes to the view's Fallthrough, which judges the next
// plugin's answer; a name whose records etcd holds but the view shows none
// of (an ownership record) is the view's NXDOMAIN, not the next plugin's.
func TestFallthroughView(t *testing.T) {
	s := startTestEtcd(t, zoneRecords...)
	x := newTestPlugin(t, s)
	x.view = fallView{fixedview.View{State: &horizon.State{Show: func(rrs []dns.RR) []dns.RR {
		return slices.DeleteFunc(slices.Clone(rrs), func(rr dns.RR) bool { return rr.Header().Rrtype == dns.TypeTXT })
	}}}}
	runTestZone(t, x)
	x.Next = nextAnswer
	x.corefile.Fall.SetZonesFromArgs(nil)
	if m := exchange(t, x, "nothing.example.com.", dns.TypeA); len(m.Answer) != 1 || m.Answer[0].(*dns.TXT).Txt[0] != "view" {
		t.Errorf("nothing.example.com: %v, want the view's Fallthrough", m)
	}
	if m := exchange(t, x, "a-app.example.com.", dns.TypeTXT); m.Rcode != dns.RcodeNameError || len(m.Answer) > 0 {
		t.Errorf("a-app.example.com, whose record the view withholds: %v, want NXDOMAIN", m)
	}
}

// TestFallthroughLeavesEtcdPlugin starts fallthrough: the etcd plugin keeps
// only its zones outside the plugin's, so that a name the plugin leaves to
// the plugins after it goes past the etcd plugin.
func TestFallthroughLeavesEtcdPlugin(t *testing.T) {
	x := &EtcdZone{etcd: &etcd.Etcd{Zones: []string{"example.com.", "lab.example.com.", "example.org."}}}
	x.corefile.Fall.SetZonesFromArgs(nil)
	if err := x.startFallthrough([]*blockZone{testZone("example.com.")}); err != nil {
		t.Fatal(err)
	}
	if want := []string{"example.org."}; !slices.Equal(x.etcd.Zones, want) {
		t.Errorf("the etcd plugin's zones: %v, want %v", x.etcd.Zones, want)
	}
	x.corefile.DNSSEC.Keys = []string{"Kexample.com.+013+12345"}
	if err := x.startFallthrough(nil); err == nil {
		t.Error("fallthrough in a signed zone: no error")
	}
}

// TestFallthroughBelowEtcdPlugin starts fallthrough in a zone below one of
// the etcd plugin's (etcd .): the etcd plugin keeps its zone, and answers
// the names that fall through, which a warning at start says, naming both
// zones and what to change.
func TestFallthroughBelowEtcdPlugin(t *testing.T) {
	x := &EtcdZone{etcd: &etcd.Etcd{Zones: []string{".", "example.org."}}, corefile: config.Config{FallWhere: "Corefile:3"}}
	x.corefile.Fall.SetZonesFromArgs(nil)
	var out bytes.Buffer
	golog.SetOutput(&out)
	err := x.startFallthrough([]*blockZone{testZone("example.com.")})
	golog.SetOutput(os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{".", "example.org."}; !slices.Equal(x.etcd.Zones, want) {
		t.Errorf("the etcd plugin's zones: %v, want %v", x.etcd.Zones, want)
	}
	logged := out.String()
	want := "[WARNING] plugin/etcdzone: Corefile:3: fallthrough: zone example.com. lies in the etcd plugin's zone .: " +
		"the names it does not hold go to the etcd plugin"
	if !strings.Contains(logged, want) || !strings.Contains(logged, "(etcd example.com.), or the etcd plugin's own fallthrough") {
		t.Errorf("the log lacks the warning %q...:\n%s", want, logged)
	}
	if n := strings.Count(logged, "\n"); n != 1 {
		t.Errorf("%d lines logged, want 1:\n%s", n, logged)
	}

	// With a fallthrough of its own, the etcd plugin passes them on.
	x.etcd.Fall.SetZonesFromArgs(nil)
	out.Reset()
	golog.SetOutput(&out)
	err = x.startFallthrough([]*blockZone{testZone("example.com.")})
	golog.SetOutput(os.Stderr)
	if err != nil || out.Len() > 0 {
		t.Errorf("the etcd plugin with fallthrough: %v, logged %q", err, out.String())
	}
}

func TestSetupFallthrough(t *testing.T) {
	setuptest.Run(t, "etcdzone", setup, []setuptest.Case{
		{"etcdzone {\n fallthrough\n}", false, ""},
		{"etcdzone {\n fallthrough lan.example.com 10.0.0.0/8 .\n}", false, ""},
		{"etcdzone {\n fallthrough bad..zone\n}", true, `fallthrough: "bad..zone" is not a zone`},
		{"etcdzone {\n fallthrough lan.example.com:53\n}", true, `fallthrough: "lan.example.com:53" is not a zone`},
	})
}
