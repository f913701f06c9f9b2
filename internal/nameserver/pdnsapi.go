package nameserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// serverPath is the API's path of the one server PowerDNS's API knows.
const serverPath = "/api/v1/servers/localhost"

// pdnsClient is the HTTP client of the API calls: none waits long.
var pdnsClient = &http.Client{Timeout: 5 * time.Second}

// pdnsRRset is an RRset of the API's zones, as it reads them.
type pdnsRRset struct {
	Name    string `json:"name"`
	Type    string `json:"type"`
	TTL     uint32 `json:"ttl"`
	Records []struct {
		Content  string `json:"content"`
		Disabled bool   `json:"disabled"`
	} `json:"records"`
}

// CreateZone creates zone (fully qualified) as a native zone (served from
// the database, transferred by no one) with nameservers as its NS records
// and PowerDNS's default SOA record.
func (p *PowerDNS) CreateZone(t testing.TB, zone string, nameservers ...string) {
	t.Helper()
	body := map[string]any{"name": zone, "kind": "Native", "nameservers": nameservers}
	if err := p.call(http.MethodPost, serverPath+"/zones", body, nil); err != nil {
		t.Fatalf("creating zone %s in PowerDNS: %v", zone, err)
	}
}

// Records returns the records of zone that the API reads (the disabled
// ones left out), in the order it gives them, as a transfer would give
// them but for the SOA record's place.
func (p *PowerDNS) Records(t testing.TB, zone string) []dns.RR {
	t.Helper()
	var z struct {
		RRsets []pdnsRRset `json:"rrsets"`
	}
	if err := p.call(http.MethodGet, serverPath+"/zones/"+zone, nil, &z); err != nil {
		t.Fatalf("reading zone %s from PowerDNS: %v", zone, err)
	}
	var rrs []dns.RR
	for _, set := range z.RRsets {
		for _, r := range set.Records {
			if r.Disabled {
				continue
			}
			rr, err := dns.NewRR(fmt.Sprintf("%s %d IN %s %s", set.Name, set.TTL, set.Type, r.Content))
			if err != nil {
				t.Fatalf("PowerDNS's record %s %s %q: %v", set.Name, set.Type, r.Content, err)
			}
			rrs = append(rrs, rr)
		}
	}
	return rrs
}

// call sends the API a request for path with body (JSON) unless it is nil,
// and decodes the reply into reply unless it is nil; a status other than
// 2xx is an error that quotes the reply.
func (p *PowerDNS) call(method, path string, body, reply any) error {
	var in io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		in = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, p.API+path, in)
	if err != nil {
		return err
	}
	req.Header.Set("X-API-Key", p.APIKey)
	req.Header.Set("Content-Type", "application/json")
	resp, err := pdnsClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s %s: %s: %s", method, path, resp.Status, out)
	}
	if reply == nil {
		return nil
	}
	return json.Unmarshal(out, reply)
}
