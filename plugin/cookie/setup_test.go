package cookie

import (
	"testing"

	"github.com/globaladdr/globaladdr/internal/setuptest"
)

func TestSetup(t *testing.T) {
	tests := []setuptest.Case{
		{`cookie`, false, ""},

		{`cookie secret`, true, `cookie takes no arguments, got "secret"`},
		{"cookie {\n secret 00\n}", true, `cookie takes no block, got "secret"`},
		{"cookie\ncookie", true, `cookie is given twice in this server block`},
	}
	setuptest.Run(t, pluginName, setup, tests)
}
