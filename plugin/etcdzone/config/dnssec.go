package config

import (
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/coredns/caddy"
	"github.com/globaladdr/globaladdr/plugin/etcdzone/signer"
	"github.com/globaladdr/globaladdr/plugin/pkg/directive"

	"github.com/miekg/dns"
)

// DNSSEC is what the Corefile says about signing the zones.
type DNSSEC struct {
	// Keys are the key files' prefixes (Kexample.com.+013+12345) and the
	// directories of key files given; none: the zones are not signed.
	Keys []string
	// Options are the signer's: denial, validity, refresh and jitter.
	Options signer.Options
	// DS are the DS records of delegations.
	DS []DS
	// Where is the Corefile's file and line of the last property of
	// signing, for the errors found at start-up.
	Where string
}

// DS is a delegation's DS record from the Corefile.
type DS struct {
	Record *dns.DS
	// Where is the Corefile's file and line, for start-up errors.
	Where string
}

// dnssecProperties are those DNSSEC.parse reads.
var dnssecProperties = []string{"dnssec", "dnssec_denial", "dnssec_validity", "dnssec_refresh", "dnssec_jitter", "ds"}

// parse reads the properties of signing, and reports whether property is
// one of them:
//
//	dnssec KEY...                  key file prefixes or directories of key files
//	dnssec_denial nsec3|nsec
//	dnssec_validity DURATION       signatures' validity (14d)
//	dnssec_refresh DURATION        made anew this long before they expire (5d)
//	dnssec_jitter DURATION         expiries spread over this much (12h)
//	ds NAME TAG ALGORITHM DIGESTTYPE DIGEST   a delegation's DS record
func (d *DNSSEC) parse(c *caddy.Controller, property string, args []string) (bool, error) {
	var err error
	switch property {
	case "dnssec":
		err = d.parseKeys(c, args)
	case "dnssec_denial":
		switch {
		case len(args) != 1:
			err = c.ArgErr()
		case args[0] == "nsec3" || args[0] == "nsec":
			d.Options.NSEC = args[0] == "nsec"
		default:
			err = c.Errf("dnssec_denial %q: nsec3 or nsec", args[0])
		}
	case "dnssec_validity":
		d.Options.Validity, err = parseDays(c, property, args)
	case "dnssec_refresh":
		d.Options.Refresh, err = parseDays(c, property, args)
	case "dnssec_jitter":
		d.Options.Jitter, err = parseDays(c, property, args)
	case "ds":
		err = d.parseDS(c, args)
	default:
		return false, nil
	}
	if err == nil && property != "ds" {
		d.Where = directive.Where(c)
	}
	return true, err
}

// parseKeys reads "dnssec KEY...": each key file prefix must name a key
// that reads (KEY.key and KEY.private), each directory hold keys.
func (d *DNSSEC) parseKeys(c *caddy.Controller, args []string) error {
	if len(args) == 0 {
		return c.Errf("dnssec needs key file prefixes or directories of key files")
	}
	for _, arg := range args {
		for path := range strings.FieldsSeq(arg) {
			if fi, err := os.Stat(path); err == nil && fi.IsDir() {
				d.Keys = append(d.Keys, path)
				continue
			}
			if _, err := signer.ReadKey(path); err != nil {
				return c.Errf("dnssec %q: %v", path, err)
			}
			d.Keys = append(d.Keys, path)
		}
	}
	return nil
}

// parseDS reads "ds NAME TAG ALGORITHM DIGESTTYPE DIGEST".
func (d *DNSSEC) parseDS(c *caddy.Controller, args []string) error {
	if len(args) < 5 {
		return c.Errf("ds needs a delegation's name, key tag, algorithm, digest type and digest")
	}
	name, err := parseName(c, args[:1])
	if err != nil {
		return err
	}
	text := name + " IN DS " + strings.Join(args[1:], " ")
	rr, err := dns.NewRR(text)
	if err != nil {
		return c.Errf("ds %q: %v", strings.Join(args, " "), err)
	}
	d.DS = append(d.DS, DS{Record: rr.(*dns.DS), Where: directive.Where(c)})
	return nil
}

// parseDays reads a duration: Go's ("36h") or days ("14d"), over zero.
func parseDays(c *caddy.Controller, property string, args []string) (time.Duration, error) {
	if len(args) != 1 {
		return 0, c.ArgErr()
	}
	d, err := time.ParseDuration(args[0])
	if days, ok := strings.CutSuffix(args[0], "d"); ok {
		var n int
		n, err = strconv.Atoi(days)
		d = time.Duration(n) * 24 * time.Hour
	}
	if err != nil || d <= 0 {
		return 0, c.Errf("%s %q is not a duration (36h, 14d)", property, args[0])
	}
	return d, nil
}
