package test

import (
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/miekg/dns"
)

// hiddenWatch asks a view, over and over until stopped, for names of the
// hidden subtree lan.example.com, and notes what shows of it: nothing may,
// but the TXT records of the challenge of a name in it.
type hiddenWatch struct {
	addr      string
	subtree   string // the hidden subtree's name
	challenge string // the challenge's name
	stop      chan struct{}
	done      sync.WaitGroup
	leaks     []string // what showed that must not
	answered  int      // how many replies held the challenge's TXT records
}

// hiddenQuestions are the questions hiddenWatch asks: of names of the
// hidden subtree, and of the challenge of one.
var hiddenQuestions = []dns.Question{
	{Name: "app.lan.example.com.", Qtype: dns.TypeA, Qclass: dns.ClassINET},
	{Name: "app.lan.example.com.", Qtype: dns.TypeTXT, Qclass: dns.ClassINET},
	{Name: "lan.example.com.", Qtype: dns.TypeA, Qclass: dns.ClassINET},
	{Name: "_acme-challenge.app.lan.example.com.", Qtype: dns.TypeTXT, Qclass: dns.ClassINET},
	{Name: "_acme-challenge.app.lan.example.com.", Qtype: dns.TypeA, Qclass: dns.ClassINET},
}

// watchHidden starts a hiddenWatch of the view at addr, asking over TCP
// (which rrl never limits) every 50 ms.
func watchHidden(addr string) *hiddenWatch {
	w := &hiddenWatch{addr: addr, subtree: "lan.example.com.", challenge: "_acme-challenge.app.lan.example.com.", stop: make(chan struct{})}
	w.done.Go(func() {
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			for _, q := range hiddenQuestions {
				w.ask(q)
			}
			select {
			case <-w.stop:
				return
			case <-tick.C:
			}
		}
	})
	return w
}

// ask asks q and notes what the reply shows: a record of the subtree in
// any section but the challenge's TXT records, or an rcode but NOERROR and
// NXDOMAIN. A failed exchange shows nothing: the client under test fails
// if the view stops answering.
func (w *hiddenWatch) ask(q dns.Question) {
	m := new(dns.Msg)
	m.SetQuestion(q.Name, q.Qtype)
	r, _, err := (&dns.Client{Net: "tcp", Timeout: 2 * time.Second}).Exchange(m, w.addr)
	if err != nil {
		return
	}
	challenge := false
	for _, rr := range slices.Concat(r.Answer, r.Ns, r.Extra) {
		switch h := rr.Header(); {
		case h.Name == w.challenge && h.Rrtype == dns.TypeTXT:
			challenge = true
		case dns.IsSubDomain(w.subtree, h.Name):
			w.leaks = append(w.leaks, fmt.Sprintf("%s %s: %s", q.Name, dns.TypeToString[q.Qtype], rr))
		}
	}
	if challenge {
		w.answered++
	}
	if r.Rcode != dns.RcodeSuccess && r.Rcode != dns.RcodeNameError {
		w.leaks = append(w.leaks, fmt.Sprintf("%s %s: %s", q.Name, dns.TypeToString[q.Qtype], dns.RcodeToString[r.Rcode]))
	}
}

// Stop ends the watch and returns what showed that must not, and how many
// replies held the challenge's TXT records.
func (w *hiddenWatch) Stop() (leaks []string, answered int) {
	close(w.stop)
	w.done.Wait()
	return w.leaks, w.answered
}
