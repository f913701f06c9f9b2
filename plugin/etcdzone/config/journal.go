package config

import (
	"strconv"
	"strings"

	"github.com/coredns/caddy"
	"github.com/globaladdr/globaladdr/plugin/pkg/directive"
)

// The journal's default bounds: room for the changes of a busy day of a
// cluster, far below a zone of 30,000 hosts.
const (
	defaultJournalRecords = 10000
	defaultJournalBytes   = 4 << 20
)

// parseJournal reads "journal RECORDS [BYTES]": at most RECORDS records and
// BYTES bytes (a number, or one with the suffix KiB or MiB) of changes; 0
// keeps none (every IXFR gets the whole zone).
func parseJournal(c *caddy.Controller, args []string) (records, bytes int, err error) {
	if len(args) < 1 || len(args) > 2 {
		return 0, 0, c.ArgErr()
	}
	records, err = strconv.Atoi(args[0])
	if err != nil || records < 0 {
		return 0, 0, c.Errf("journal %q is not a number of records", args[0])
	}
	bytes = defaultJournalBytes
	if len(args) == 2 {
		var ok bool
		if bytes, ok = directive.Bytes(args[1]); !ok {
			return 0, 0, c.Errf("journal %q is not a number of bytes (with KiB or MiB) up to 1024MiB", args[1])
		}
	}
	return records, bytes, nil
}

// parseKey reads "serial_key KEY": an etcd key, "/" and a name at least,
// kept without a trailing "/".
func parseKey(c *caddy.Controller, args []string) (string, error) {
	if len(args) != 1 {
		return "", c.ArgErr()
	}
	key := strings.TrimRight(args[0], "/")
	if !strings.HasPrefix(key, "/") {
		return "", c.Errf("serial_key %q is not an etcd key such as /globaladdr/serial/primary", args[0])
	}
	return key, nil
}
