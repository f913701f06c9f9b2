package cookie

import (
	"slices"

	"github.com/miekg/dns"
)

// ResponseWriter puts a COOKIE option into every reply written through it,
// in the reply's OPT record (one like the query's if the reply has none).
type ResponseWriter struct {
	dns.ResponseWriter
	query  *dns.OPT // the query's OPT record, with the UDP size bufsize left it
	cookie string   // the option's data: the client cookie and the server cookie, in hex
}

// WriteMsg implements dns.ResponseWriter.
func (w *ResponseWriter) WriteMsg(m *dns.Msg) error {
	w.setCookie(m)
	return w.ResponseWriter.WriteMsg(m)
}

// Write implements dns.ResponseWriter. A reply handed over as bytes gets
// its cookie like any other, but for one signed with TSIG, whose MAC covers
// the bytes as they are (it goes as it is); one that cannot be read is not
// sent.
func (w *ResponseWriter) Write(buf []byte) (int, error) {
	m := new(dns.Msg)
	if err := m.Unpack(buf); err != nil {
		return 0, err
	}
	if m.IsTsig() != nil {
		return w.ResponseWriter.Write(buf)
	}
	w.setCookie(m)
	m.Compress = true
	out, err := m.Pack()
	if err != nil {
		return 0, err
	}
	if _, err := w.ResponseWriter.Write(out); err != nil {
		return 0, err
	}
	return len(buf), nil
}

// setCookie gives m an OPT record of its own holding w's COOKIE option in
// place of any other. The reply's OPT record may be the query's own (CoreDNS
// reuses it), so it is copied rather than changed. A new record goes before
// a TSIG record, which must stay last, with the query's UDP size and DO bit:
// what CoreDNS advertises in every reply (request.SizeAndDo), the size the
// client asked for or bufsize's if lower, since bufsize, above, lowers the
// query's. The server's ScrubWriter, which writes every reply last, sets
// them so anyway.
func (w *ResponseWriter) setCookie(m *dns.Msg) {
	i := slices.IndexFunc(m.Extra, func(rr dns.RR) bool { return rr.Header().Rrtype == dns.TypeOPT })
	var opt *dns.OPT
	if i >= 0 {
		opt = dns.Copy(m.Extra[i]).(*dns.OPT)
		opt.Option = slices.DeleteFunc(opt.Option, func(o dns.EDNS0) bool { return o.Option() == dns.EDNS0COOKIE })
	} else {
		opt = &dns.OPT{Hdr: dns.RR_Header{Name: ".", Rrtype: dns.TypeOPT}}
		opt.SetUDPSize(w.query.UDPSize())
		opt.SetDo(w.query.Do())
		i = len(m.Extra)
		if m.IsTsig() != nil {
			i--
		}
		m.Extra = slices.Insert(m.Extra, i, dns.RR(nil))
	}
	opt.Option = append(opt.Option, &dns.EDNS0_COOKIE{Code: dns.EDNS0COOKIE, Cookie: w.cookie})
	m.Extra[i] = opt
}
