package records

import (
	"bytes"
	"encoding/json"
	"maps"
	"net"
	"slices"

	"github.com/globaladdr/globaladdr/plugin/pkg/horizon"
	"github.com/globaladdr/globaladdr/plugin/webhook/wire"
)

// slot is one etcd key that holds records external-dns manages: a SkyDNS
// value with a host (an A, AAAA, CNAME or, at a reverse name, PTR record's
// target), a text (a TXT record's), or both (external-dns's ownership text
// beside the host, as its releases before v0.18 wrote it), and neither a
// port nor mail (an SRV or MX record, which external-dns never writes).
type slot struct {
	key string
	// name is the owner name: the key's, without the labels targetstrip
	// strips.
	name string
	// hostType is the type of host's record: A, AAAA, CNAME or PTR.
	host, hostType string
	text           string
	hasText        bool
	// strip is the targetstrip: 1 for a key one random label below its
	// name, 0 for a key at the name itself.
	strip int
	attrs
	// fields are the value's fields as etcd holds them, those of other
	// writers included (group, owner), kept when the slot is rewritten.
	fields map[string]json.RawMessage
}

// markFields are the ProviderSpecific properties of an endpoint that the
// store keeps, each in a field of its SkyDNS values: the exposure mark and
// the route (see package horizon).
var markFields = [...]struct{ property, field string }{
	{horizon.MarkProperty, horizon.MarkField},
	{horizon.RouteProperty, horizon.RouteField},
}

// attrs are what a record's targets share: TTL and marks.
type attrs struct {
	ttl uint32
	// marks are the values of markFields' fields as stored, by their
	// index; nil for none.
	marks [len(markFields)]*string
}

// equal reports whether a and b are the same TTL and marks.
func (a attrs) equal(b attrs) bool {
	if a.ttl != b.ttl {
		return false
	}
	for i, m := range a.marks {
		if n := b.marks[i]; (m == nil) != (n == nil) || m != nil && *m != *n {
			return false
		}
	}
	return true
}

// marked returns the attrs of ep's targets: its TTL and the marks it has.
func marked(ep *wire.Endpoint) attrs {
	a := attrs{ttl: uint32(ep.RecordTTL)}
	for i, m := range markFields {
		if v, ok := ep.Property(m.property); ok {
			a.marks[i] = &v
		}
	}
	return a
}

// properties returns the ProviderSpecific properties a's marks are.
func (a attrs) properties() []wire.Property {
	var props []wire.Property
	for i, m := range markFields {
		if v := a.marks[i]; v != nil {
			props = append(props, wire.Property{Name: m.property, Value: *v})
		}
	}
	return props
}

// readSlot returns the slot that key's value is, or false when it holds
// nothing external-dns manages (a value that is not JSON, or has a port or
// mail).
func readSlot(key string, value []byte, prefix string) (*slot, bool) {
	var v struct {
		Host        string  `json:"host"`
		Text        *string `json:"text"`
		TTL         uint32  `json:"ttl"`
		Port        int     `json:"port"`
		Mail        bool    `json:"mail"`
		TargetStrip int     `json:"targetstrip"`
	}
	fields := map[string]json.RawMessage{}
	if json.Unmarshal(value, &v) != nil || json.Unmarshal(value, &fields) != nil || v.Port != 0 || v.Mail {
		return nil, false
	}
	name, ok := nameOf(key, prefix, v.TargetStrip)
	if !ok || (v.Host == "" && (v.Text == nil || *v.Text == "")) {
		return nil, false
	}
	s := &slot{key: key, name: name, host: v.Host, strip: v.TargetStrip, attrs: attrs{ttl: v.TTL}, fields: fields}
	for i, m := range markFields {
		var mark string
		if raw, ok := fields[m.field]; ok && string(raw) != "null" && json.Unmarshal(raw, &mark) == nil {
			s.marks[i] = &mark
		}
	}
	if v.Host != "" {
		s.hostType = hostType(name, v.Host)
	}
	if v.Text != nil && *v.Text != "" {
		s.text, s.hasText = *v.Text, true
	}
	return s, true
}

// hostType returns the type of the record a host makes at name, as the etcd
// plugin and external-dns's coredns provider take it.
func hostType(name, host string) string {
	switch ip := net.ParseIP(host); {
	case ip != nil && ip.To4() != nil:
		return "A"
	case ip != nil:
		return "AAAA"
	case isReverse(name):
		return "PTR"
	}
	return "CNAME"
}

// value returns the SkyDNS value s holds now: its host and text, TTL and
// marks, its targetstrip, and the fields of other writers as they were. The
// fields external-dns's coredns provider writes come first, in its order.
func (s *slot) value() []byte {
	f := maps.Clone(s.fields)
	if f == nil {
		f = map[string]json.RawMessage{}
	}
	set := func(k string, v any, present bool) {
		if !present {
			delete(f, k)
			return
		}
		b, _ := json.Marshal(v) // strings and numbers
		f[k] = b
	}
	set("host", s.host, s.host != "")
	set("text", s.text, s.hasText)
	set("ttl", s.ttl, s.ttl != 0)
	set("targetstrip", s.strip, s.strip != 0)
	for i, m := range markFields {
		if v := s.marks[i]; v != nil {
			set(m.field, *v, true)
		} else {
			delete(f, m.field)
		}
	}
	var b bytes.Buffer
	b.WriteByte('{')
	first := []string{"host", "port", "priority", "weight", "text", "mail", "ttl", "targetstrip", "group", horizon.MarkField, horizon.RouteField}
	rest := slices.Sorted(maps.Keys(f))
	for _, k := range append(first, rest...) {
		v, ok := f[k]
		if !ok {
			continue
		}
		delete(f, k)
		if b.Len() > 1 {
			b.WriteByte(',')
		}
		name, _ := json.Marshal(k)
		b.Write(name)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes()
}
