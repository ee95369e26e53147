package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/transports/stdout"
)

// renderer shows a run in the terminal: through transports/stdout, whose
// rendering the CLI shares with any program that uses it as a transport.
type renderer struct {
	t *stdout.Transport
}

func newRenderer(a *app, verbose bool) renderer {
	return renderer{t: stdout.New(stdout.Options{Writer: a.stdout, Verbose: verbose})}
}

func (r renderer) show(c core.Crumb) {
	_ = r.t.Publish(context.Background(), core.Frame{Crumb: c})
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
