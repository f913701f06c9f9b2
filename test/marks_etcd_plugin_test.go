package test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// marksZone is the zone of the marks tests behind the etcd plugin.
const marksZone = "marks.example.org."

// marksCorefile is the external view with the stock etcd plugin as its
// backend (no etcdzone), with expose unmarked (the default) and with
// expose marked, over one tree.
const marksCorefile = `marks.example.org:{port:external} {
    globaladdr 203.0.113.10
    etcd marks.example.org {
        endpoint ETCD
    }
}
marks.example.org:{port:marked} {
    globaladdr 203.0.113.10 {
        expose marked
    }
    etcd marks.example.org {
        endpoint ETCD
    }
}
marks.example.org:{port:partial} {
    globaladdr 203.0.113.10
    etcdzone sub.marks.example.org {
        endpoint ETCD
    }
    etcd marks.example.org {
        endpoint ETCD
    }
}
.:{port:above} {
    globaladdr 203.0.113.10
    etcdzone marks.example.org {
        endpoint ETCD
    }
    etcd . {
        endpoint ETCD
    }
}
.:{port:trimmed} {
    globaladdr 203.0.113.10
    etcdzone marks.example.org {
        endpoint ETCD
        fallthrough
    }
    etcd marks.example.org example.org {
        endpoint ETCD
    }
}
`

// TestMarksBehindEtcdPlugin holds the external view behind CoreDNS's own
// etcd plugin, which carries no mark in its answers, to the marks the
// webhook stores in the tree (globaladdr reads them from the tree): a name
// marked "false" is answered with neither the global address nor its
// public one, over UDP and TCP, for A and ANY, at the end of a CNAME chain,
// below a wildcard question and in the apex's answer of its whole subtree
// (coredns/coredns#3861); a mark that is neither "true" nor "false", and a
// key the marks have not seen yet, withhold too; with expose marked only
// names marked "true" answer. A flipped mark takes effect without a
// restart, as behind etcdzone. The same holds in a block where etcdzone
// serves part of the names and the etcd plugin the rest: a zone below the
// etcd plugin's (partial), or the etcd plugin's zone above etcdzone's
// (above).
func TestMarksBehindEtcdPlugin(t *testing.T) {
	etcd := startEtcd(t)
	keys := map[string]string{
		"/skydns/org/example/marks/app/x1":    `{"targetstrip":1,"host":"192.168.0.51"}`,
		"/skydns/org/example/marks/secret/x1": `{"targetstrip":1,"host":"192.168.0.52","globaladdr-external":"false"}`,
		"/skydns/org/example/marks/secret/x2": `{"targetstrip":1,"host":"203.0.113.77","globaladdr-external":"false"}`,
		"/skydns/org/example/marks/shown/x1":  `{"targetstrip":1,"host":"192.168.0.53","globaladdr-external":"true"}`,
		"/skydns/org/example/marks/alias":     `{"host":"secret.marks.example.org","globaladdr-external":"true"}`,
		"/skydns/org/example/marks/odd/x1":    `{"targetstrip":1,"host":"192.168.0.54","globaladdr-external":"maybe"}`,
		"/skydns/org/example/marks/note":      `{"text":"secret note","globaladdr-external":"false"}`,
		// etcdzone's names in partial; the etcd plugin's outside
		// etcdzone's zone in above.
		"/skydns/org/example/marks/sub/shut/x1": `{"targetstrip":1,"host":"203.0.113.79","globaladdr-external":"false"}`,
		"/skydns/org/example/marks/sub/www/x1":  `{"targetstrip":1,"host":"192.168.0.55"}`,
		"/skydns/org/example/other/x1":          `{"targetstrip":1,"host":"203.0.113.80","globaladdr-external":"false"}`,
		"/skydns/org/example/open/x1":           `{"targetstrip":1,"host":"192.168.0.56"}`,
	}
	putKeys(t, etcd, keys)
	c := startCoreDNS(t, strings.ReplaceAll(marksCorefile, "ETCD", etcd.Endpoint()))
	external, marked, partial, above, trimmed := c.Addr("external"), c.Addr("marked"), c.Addr("partial"), c.Addr("above"), c.Addr("trimmed")
	unmarkedViews := []string{external, partial, above, trimmed}
	views := append(unmarkedViews, marked)

	// What a withheld name holds: no reply may carry any of it.
	leaks := []string{"203.0.113.77", "secret note", "203.0.113.79", "203.0.113.80"}
	withheld := []string{"secret", "odd", "note"}
	for _, addr := range views {
		for _, name := range withheld {
			for _, qtype := range []uint16{dns.TypeA, dns.TypeANY, dns.TypeTXT} {
				checkMarked(t, addr, name+"."+marksZone, qtype, dns.RcodeNameError, nil, leaks)
			}
		}
		// The CNAME is marked "true"; its target's records are not shown
		// (etcdzone answers NXDOMAIN, the rcode of the chain's end).
		rcode := dns.RcodeSuccess
		if addr == above || addr == trimmed {
			rcode = dns.RcodeNameError
		}
		checkMarked(t, addr, "alias."+marksZone, dns.TypeA, rcode, []string{"CNAME secret.marks.example.org."}, leaks)
		// The etcd plugin answers the apex and a wildcard with the records
		// of every key below: one withheld key withholds them all.
		checkMarked(t, addr, marksZone, dns.TypeA, dns.RcodeSuccess, nil, append(leaks, "203.0.113.10"))
		checkMarked(t, addr, "*."+marksZone, dns.TypeA, -1, nil, append(leaks, "203.0.113.10"))
		checkMarked(t, addr, marksZone, dns.TypeSOA, dns.RcodeSuccess, []string{"SOA"}, leaks)
		checkMarked(t, addr, "shown."+marksZone, dns.TypeA, dns.RcodeSuccess, []string{"A 203.0.113.10"}, leaks)
	}
	for _, addr := range unmarkedViews {
		checkMarked(t, addr, "app."+marksZone, dns.TypeA, dns.RcodeSuccess, []string{"A 203.0.113.10"}, leaks)
	}
	checkMarked(t, marked, "app."+marksZone, dns.TypeA, dns.RcodeNameError, nil, leaks)
	checkMarked(t, partial, "shut.sub."+marksZone, dns.TypeA, dns.RcodeNameError, nil, leaks)
	checkMarked(t, partial, "www.sub."+marksZone, dns.TypeA, dns.RcodeSuccess, []string{"A 203.0.113.10"}, leaks)
	for _, addr := range []string{above, trimmed} {
		checkMarked(t, addr, "other.example.org.", dns.TypeA, dns.RcodeNameError, nil, leaks)
		checkMarked(t, addr, "open.example.org.", dns.TypeA, dns.RcodeSuccess, []string{"A 203.0.113.10"}, leaks)
	}

	// A NOTIFY is answered as no query: etcdzone refuses it for its zones,
	// and what the etcd plugin makes of it is judged as its answers are.
	for _, addr := range views {
		for _, name := range []string{"secret." + marksZone, "app." + marksZone, "shut.sub." + marksZone} {
			m := new(dns.Msg)
			m.SetNotify(name)
			m.Question[0].Qtype = dns.TypeA
			r, _, err := (&dns.Client{Net: "tcp", Timeout: 5 * time.Second}).Exchange(m, addr)
			if err != nil {
				t.Fatalf("NOTIFY %s at %s: %v", name, addr, err)
			}
			for _, leak := range append(leaks, "192.168.0.5") {
				if strings.Contains(r.String(), leak) {
					t.Errorf("NOTIFY %s at %s: the reply holds %q:\n%v", name, addr, leak, r)
				}
			}
		}
	}

	// A key written withheld is withheld from its first answer, whether
	// the marks have seen it yet or not.
	putKeys(t, etcd, map[string]string{"/skydns/org/example/marks/fresh/x1": `{"targetstrip":1,"host":"203.0.113.78","globaladdr-external":"false"}`})
	for _, addr := range unmarkedViews {
		checkMarked(t, addr, "fresh."+marksZone, dns.TypeA, dns.RcodeNameError, nil, []string{"203.0.113.78"})
	}

	// Flipped to "true", the name is shown; flipped back, withheld again.
	flip := func(mark string) {
		putKeys(t, etcd, map[string]string{
			"/skydns/org/example/marks/secret/x1": `{"targetstrip":1,"host":"192.168.0.52","globaladdr-external":"` + mark + `"}`,
			"/skydns/org/example/marks/secret/x2": `{"targetstrip":1,"host":"203.0.113.77","globaladdr-external":"` + mark + `"}`,
		})
	}
	flip("true")
	for _, addr := range views {
		eventually(t, 10*time.Second, "secret, marked true, is shown at "+addr, func() error {
			return viewAnswer{dns.RcodeSuccess, []string{"secret." + marksZone + " A 203.0.113.10", "secret." + marksZone + " A 203.0.113.77"}}.check(addr, "secret."+marksZone)
		})
	}
	flip("false")
	for _, addr := range views {
		eventually(t, 10*time.Second, "secret, marked false again, is withheld at "+addr, func() error {
			return nxdomain.check(addr, "secret."+marksZone)
		})
	}
	for _, key := range []string{"note", "odd/x1", "fresh/x1", "sub/shut/x1"} {
		if _, err := etcd.Client().Delete(context.Background(), "/skydns/org/example/marks/"+key); err != nil {
			t.Fatal(err)
		}
	}
	flip("true")
	eventually(t, 10*time.Second, "the apex, with no key withheld below it, shows its subtree", func() error {
		return answeredSome(external, marksZone, "A 203.0.113.77")
	})
}

// checkMarked asks addr for name's qtype records over UDP and TCP and fails
// t unless each reply has rcode (any, when negative), exactly the records
// want in its answer (as "TYPE DATA", in any order; nil for none), and none
// of leaks anywhere.
func checkMarked(t *testing.T, addr, name string, qtype uint16, rcode int, want, leaks []string) {
	t.Helper()
	for _, network := range networks {
		r := query(t, network, addr, name, qtype)
		if rcode >= 0 && r.Rcode != rcode {
			t.Errorf("%s %s over %s at %s: %s, want %s\n%v", name, dns.TypeToString[qtype], network, addr, dns.RcodeToString[r.Rcode], dns.RcodeToString[rcode], r)
		}
		if got := answerData(r); !slices.Equal(got, want) && !(len(want) == 1 && want[0] == "SOA" && len(got) == 1 && strings.HasPrefix(got[0], "SOA ")) {
			t.Errorf("%s %s over %s at %s: answer %q, want %q", name, dns.TypeToString[qtype], network, addr, got, want)
		}
		for _, leak := range leaks {
			if strings.Contains(r.String(), leak) {
				t.Errorf("%s %s over %s: the reply holds %q, of a withheld name:\n%v", name, dns.TypeToString[qtype], network, leak, r)
			}
		}
	}
}

// answeredSome returns nil when addr's answer for name's A records over TCP
// holds one.
func answeredSome(addr, name, one string) error {
	r, err := exchangeA(addr, name)
	if err != nil {
		return err
	}
	if got := answerData(r); !slices.Contains(got, one) {
		return fmt.Errorf("answer %q, without %q", got, one)
	}
	return nil
}

// exchangeA asks addr for name's A records over TCP.
func exchangeA(addr, name string) (*dns.Msg, error) {
	m := new(dns.Msg)
	m.SetQuestion(dns.Fqdn(name), dns.TypeA)
	r, _, err := (&dns.Client{Net: "tcp", Timeout: 5 * time.Second}).Exchange(m, addr)
	return r, err
}

// answerData returns the answer's records as "TYPE DATA", sorted.
func answerData(r *dns.Msg) []string {
	var got []string
	for _, rr := range r.Answer {
		h := rr.Header()
		got = append(got, dns.TypeToString[h.Rrtype]+" "+strings.TrimPrefix(rr.String(), h.String()))
	}
	slices.Sort(got)
	return got
}

// TestExposeMarkedWithoutMarks starts expose marked in a block whose
// backends mark no name (forward): it would answer every name NXDOMAIN, so
// start-up stops, naming the plugin, the file, the line and the fix.
func TestExposeMarkedWithoutMarks(t *testing.T) {
	_, err := tryStartCoreDNS(t, "example.com:{port:dns} {\n\tglobaladdr 203.0.113.10 {\n\t\texpose marked\n\t}\n\tforward . 127.0.0.1:9\n}\n")
	if err == nil {
		t.Fatal("expose marked started without a backend that marks its names")
	}
	for _, want := range []string{"plugin/globaladdr", "Corefile:3", "expose marked", "no backend of this server block marks its names", "expose unmarked"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
}

// TestNewHostBehindEtcdPlugin writes new hosts, as external-dns writes a new
// Ingress, and asks the external view behind the etcd plugin for each at
// once, through the block's cache: the etcd plugin reads the key from etcd
// before the marks' watch brings it, and the view waits for its mark
// rather than withholding it, so the first answer is the global address
// (a withheld first answer would stay in the cache for the SOA's minimum).
// A new host written withheld is not answered, at once either.
func TestNewHostBehindEtcdPlugin(t *testing.T) {
	etcd := startEtcd(t)
	putKeys(t, etcd, map[string]string{"/skydns/org/example/marks/app/x1": `{"targetstrip":1,"host":"192.168.0.51"}`})
	c := startCoreDNS(t, `marks.example.org:{port:dns} {
    globaladdr 203.0.113.10
    cache
    etcd marks.example.org {
        endpoint `+etcd.Endpoint()+`
    }
}
`)
	addr := c.Addr("dns")
	for i := range 20 {
		name := fmt.Sprintf("new%d.%s", i, marksZone)
		putKeys(t, etcd, map[string]string{fmt.Sprintf("/skydns/org/example/marks/new%d/x1", i): `{"targetstrip":1,"host":"192.168.0.60"}`})
		if got := answerData(query(t, "udp", addr, name, dns.TypeA)); !slices.Equal(got, []string{"A 203.0.113.10"}) {
			t.Errorf("%s, asked as soon as written: answer %q, want the global address", name, got)
		}
	}
	putKeys(t, etcd, map[string]string{"/skydns/org/example/marks/hush/x1": `{"targetstrip":1,"host":"192.168.0.61","globaladdr-external":"false"}`})
	checkMarked(t, addr, "hush."+marksZone, dns.TypeA, dns.RcodeNameError, nil, []string{"192.168.0.61", "203.0.113.10"})
}
