package core_test

import (
	"log/slog"
	"os"

	"github.com/breadai/bread/core"
)

func ExampleRunLogAttrs() {
	noTime := func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey {
			return slog.Attr{}
		}
		return a
	}
	log := slog.New(slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{ReplaceAttr: noTime}))
	log.Warn("bread: a line about a run", core.RunLogAttrs("r-1", "s-1", "writer")...)
	// Output: level=WARN msg="bread: a line about a run" run_id=r-1 session_id=s-1 agent_id=writer
}
