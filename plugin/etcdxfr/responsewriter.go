package etcdxfr

import (
	"strings"

	"github.com/miekg/dns"
)

// soaWriter replaces the SOA record of its zone, wherever the plugins below
// put one into a reply (the Authority section of NXDOMAIN and NODATA, the
// etcd plugin's Answer to an SOA query below the apex), with the zone's own.
type soaWriter struct {
	dns.ResponseWriter
	x *EtcdXfr
	z *zone
}

// WriteMsg implements dns.ResponseWriter. The reply it was given is not
// changed: what changes is copied.
func (w *soaWriter) WriteMsg(res *dns.Msg) error {
	answer, aok := w.replace(res.Answer)
	ns, nok := w.replace(res.Ns)
	if !aok && !nok {
		return w.ResponseWriter.WriteMsg(res)
	}
	out := *res
	out.Answer, out.Ns = answer, ns
	return w.ResponseWriter.WriteMsg(&out)
}

// replace returns rrs with the zone's SOA in place of the backend's, and
// whether there was one to replace.
func (w *soaWriter) replace(rrs []dns.RR) ([]dns.RR, bool) {
	for i, rr := range rrs {
		if rr.Header().Rrtype != dns.TypeSOA || !strings.EqualFold(rr.Header().Name, w.z.name) {
			continue
		}
		out := make([]dns.RR, len(rrs))
		copy(out, rrs)
		out[i] = w.x.soa(w.z)
		return out, true
	}
	return rrs, false
}
