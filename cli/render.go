package cli

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/transports/stdout"
)

// printer renders runs in the terminal through transports/stdout, the
// same printer a server's `listeners: [stdout]` uses. Terminal commands
// register its Listen with the instance (inst.On), so it sees every crumb of
// every run, nested ones included; filter (nil: all) picks what it prints.
func (a *app) printer(w io.Writer, verbose bool, filter func(core.Crumb) bool) *stdout.Printer {
	return stdout.New(stdout.Options{Writer: w, Verbose: verbose, Filter: filter})
}

// parseInput reads a command-line or typed input: JSON when it parses,
// otherwise the raw text.
func parseInput(s string) any {
	s = strings.TrimSpace(s)
	if s == "" {
		return ""
	}
	if json.Valid([]byte(s)) && (s[0] == '{' || s[0] == '[' || s[0] == '"') {
		return json.RawMessage(s)
	}
	return s
}

// pretty formats an output for printing: strings as is, anything else as
// indented JSON.
func pretty(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	var out bytes.Buffer
	if json.Indent(&out, b, "", "  ") != nil {
		return string(b)
	}
	return out.String()
}

func jsonIndent(v any) (string, error) {
	b, err := json.MarshalIndent(v, "", "  ")
	return string(b), err
}
