package conformance

import (
	"maps"
	"slices"
	"strings"

	"github.com/globaladdr/globaladdr/internal/externaldns"
)

// step is the whole set of records the sources hand external-dns at one
// point.
type step struct {
	name    string
	records []externaldns.Record
}

// steps are what Run puts r through: records of every type r writes, an
// update of some of them and the deletion of others.
func steps(r Release) []step {
	record := func(name, typ string, targets ...string) externaldns.Record {
		return externaldns.Record{
			Name:     name,
			Type:     typ,
			Targets:  targets,
			Resource: "ingress/default/" + strings.SplitN(name, ".", 2)[0],
			Format:   r.Format,
		}
	}
	withTTL := func(rec externaldns.Record, ttl uint32) externaldns.Record {
		rec.TTL = ttl
		return rec
	}
	created := []externaldns.Record{
		record("app.example.com", "A", "192.168.0.51"),
		record("app.example.com", "AAAA", "fd00::51"),
		record("shop.example.com", "A", "192.168.0.61", "192.168.0.62", "198.51.100.20"),
		record("www.example.com", "CNAME", "app.example.com"),
		record("note.example.com", "TXT", "hello"),
		withTTL(record("short.example.com", "A", "10.0.0.7"), 60),
	}
	if r.PTR {
		created = append(created, record("51.0.168.192.in-addr.arpa", "PTR", "app.example.com"))
	}
	updated := slices.Clone(created)
	updated[0] = record("app.example.com", "A", "192.168.0.52")
	updated[2] = record("shop.example.com", "A", "192.168.0.61", "198.51.100.20")
	updated[4] = record("note.example.com", "TXT", "hello again")
	deleted := slices.DeleteFunc(slices.Clone(updated), func(rec externaldns.Record) bool {
		return rec.Type == "CNAME" || rec.Type == "PTR"
	})
	return []step{{"create", created}, {"update", updated}, {"delete", deleted}}
}

// Created returns the records of Run's first step: records of every type r
// writes, for a test that needs a tree as external-dns writes it.
func Created(r Release) []externaldns.Record {
	return steps(r)[0].records
}

// byName groups records by name.
func byName(records []externaldns.Record) map[string][]externaldns.Record {
	m := map[string][]externaldns.Record{}
	for _, r := range records {
		m[r.Name] = append(m[r.Name], r)
	}
	return m
}

// equalRecords reports whether a and b hold the same records in the same
// order.
func equalRecords(a, b []externaldns.Record) bool {
	return slices.EqualFunc(a, b, func(x, y externaldns.Record) bool {
		return x.Name == y.Name && x.Type == y.Type && slices.Equal(x.Targets, y.Targets) &&
			x.TTL == y.TTL && x.Resource == y.Resource && x.Owner == y.Owner && x.Format == y.Format
	})
}

// names returns the sorted names of records.
func names(records []externaldns.Record) []string {
	return slices.Sorted(maps.Keys(byName(records)))
}
