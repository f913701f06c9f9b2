package source

import (
	"fmt"
	"strings"

	"github.com/coredns/caddy"

	"github.com/globaladdr/globaladdr/plugin/globaladdr/source/probe"
)

// newLine returns the runner of a from line named name, of kind, with its
// probers; Config.New sets its every and internal.
func newLine(name string, kind probe.Kind, probers []probe.Prober) *runner {
	l := &runner{name: name, kind: kind, probers: probers}
	for _, p := range probers {
		by := name
		if s, ok := p.(fmt.Stringer); ok {
			by = s.String()
		}
		l.names = append(l.names, by)
	}
	return l
}

// parsePolled returns the line of "from KEYWORD ARGS..." (args), KEYWORD
// being a polled source's (probe.Register).
func parsePolled(c *caddy.Controller, args []string) (*runner, error) {
	kind, parse, ok := probe.Lookup(args[0])
	if !ok {
		return nil, c.Errf("unknown source %q: want one of %s", args[0], sourceKeywords())
	}
	ps, err := parse(c, args[1:])
	if err != nil {
		return nil, err
	}
	return newLine(strings.Join(args, " "), kind, ps), nil
}

// interfaceLine returns the line of "from interface NAME".
func interfaceLine(name string) *runner {
	return newLine("interface "+name, probe.Local, []probe.Prober{probe.Interface(name)})
}

// sourceKeywords lists the sources a from line takes.
func sourceKeywords() string {
	return strings.Join(append([]string{"file", "etcd", "interface"}, probe.Keywords()...), ", ")
}
