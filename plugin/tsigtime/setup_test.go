package tsigtime

import (
	"testing"

	"github.com/globaladdr/globaladdr/internal/setuptest"
)

func TestSetup(t *testing.T) {
	tests := []setuptest.Case{
		{`tsigtime`, false, ""},

		{`tsigtime example.com`, true, `tsigtime takes no arguments, got "example.com"`},
		{"tsigtime {\n now\n}", true, `tsigtime takes no block, got "now"`},
		{"tsigtime\ntsigtime", true, `tsigtime is given twice in this server block`},
	}
	setuptest.Run(t, pluginName, setup, tests)
}
