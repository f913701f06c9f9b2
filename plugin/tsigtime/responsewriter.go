package tsigtime

import (
	"time"

	"github.com/miekg/dns"
)

// defaultFudge is RFC 8945's recommended fudge, for a query that gives none.
const defaultFudge = 300

// ResponseWriter writes a reply whose TSIG record carries the error BADKEY
// or BADSIG as bytes it packs itself, the record unsigned and stamped with
// the server's time; it hands every other reply on to be packed (and
// signed) below.
type ResponseWriter struct {
	dns.ResponseWriter
	fudge uint16 // the query's TSIG fudge, which the reply's repeats
}

// WriteMsg implements dns.ResponseWriter.
func (w *ResponseWriter) WriteMsg(m *dns.Msg) error {
	if !tsigError(m) {
		return w.ResponseWriter.WriteMsg(m)
	}
	buf, err := unsigned(m, w.fudge, time.Now())
	if err != nil {
		return err
	}
	_, err = w.ResponseWriter.Write(buf)
	return err
}

// Write implements dns.ResponseWriter. A reply handed over as bytes is
// written as WriteMsg writes it: as those bytes, unless its TSIG record
// carries BADKEY or BADSIG; one that cannot be read is not sent.
func (w *ResponseWriter) Write(buf []byte) (int, error) {
	m := new(dns.Msg)
	if err := m.Unpack(buf); err != nil {
		return 0, err
	}
	if !tsigError(m) {
		return w.ResponseWriter.Write(buf)
	}
	return len(buf), w.WriteMsg(m)
}

// tsigError reports whether m's TSIG record carries BADKEY or BADSIG.
func tsigError(m *dns.Msg) bool {
	t := m.IsTsig()
	return t != nil && (t.Error == dns.RcodeBadKey || t.Error == dns.RcodeBadSig)
}

// unsigned packs a copy of m, whose last record is a TSIG record, with that
// record unsigned as RFC 8945 section 5.3.2 has it (no MAC), signed at now
// with fudge (the default when 0), and no name compressed: the TSIG record's
// owner and algorithm are never compressed, and an error reply is small.
func unsigned(m *dns.Msg, fudge uint16, now time.Time) ([]byte, error) {
	reply := m.Copy()
	reply.Compress = false
	t := reply.IsTsig()
	t.MAC, t.MACSize = "", 0
	t.TimeSigned = uint64(now.Unix())
	t.Fudge = fudge
	if t.Fudge == 0 {
		t.Fudge = defaultFudge
	}
	return reply.Pack()
}
