// Package wire is external-dns's webhook protocol as its client (the
// webhook provider, sigs.k8s.io/external-dns/provider/webhook) speaks it:
// the media type, and the JSON of its endpoints, change sets and domain
// filter. test/externaldns holds these types to external-dns's own.
package wire

import (
	"slices"
	"strings"
)

// MediaType is the protocol's media type and version: the Content-Type of
// every answer with a body, and what the client's Accept and Content-Type
// headers name.
const MediaType = "application/external.dns.webhook+json;version=1"

// Endpoint is one record set as external-dns manages it: a name, a type,
// its targets (record data in text form, such as 192.168.0.51, or a TXT
// record's text, quotes included), its TTL, and properties a provider may
// read.
type Endpoint struct {
	DNSName          string            `json:"dnsName,omitempty"`
	Targets          []string          `json:"targets,omitempty"`
	RecordType       string            `json:"recordType,omitempty"`
	SetIdentifier    string            `json:"setIdentifier,omitempty"`
	RecordTTL        int64             `json:"recordTTL,omitempty"`
	Labels           map[string]string `json:"labels,omitempty"`
	ProviderSpecific []Property        `json:"providerSpecific,omitempty"`
}

// Property is a ProviderSpecific property of an endpoint. An annotation
// external-dns.kubernetes.io/webhook-NAME of its source reaches a webhook
// as the property webhook/NAME.
type Property struct {
	Name  string `json:"name,omitempty"`
	Value string `json:"value,omitempty"`
}

// Property returns the value of e's property name, and whether e has it.
func (e *Endpoint) Property(name string) (string, bool) {
	i := slices.IndexFunc(e.ProviderSpecific, func(p Property) bool { return p.Name == name })
	if i < 0 {
		return "", false
	}
	return e.ProviderSpecific[i].Value, true
}

// Name returns e's DNS name in the form the store keeps: lower case,
// without the final dot.
func (e *Endpoint) Name() string {
	return strings.TrimSuffix(strings.ToLower(e.DNSName), ".")
}

// Changes is a change set: what the plan of one external-dns sync creates,
// updates (each UpdateOld[i] becomes UpdateNew[i]) and deletes. Releases
// before v0.15 send the field names capitalized (Create), which
// encoding/json reads alike.
type Changes struct {
	Create    []*Endpoint `json:"create,omitempty"`
	UpdateOld []*Endpoint `json:"updateOld,omitempty"`
	UpdateNew []*Endpoint `json:"updateNew,omitempty"`
	Delete    []*Endpoint `json:"delete,omitempty"`
}

// DomainFilter is the answer to the negotiation: the domains the webhook
// manages (names at and below them), none for every domain.
type DomainFilter struct {
	Include []string `json:"include,omitempty"`
}
