package cli

import (
	"context"
	"time"

	"github.com/breadai/bread/cli/project"
	"github.com/breadai/bread/core"
	"github.com/breadai/bread/protocols/agui"
)

// aguiPluginTypes is the bread.yaml plugin type of protocols/agui: the
// AG-UI run route (POST /ag-ui/run) for one agent.
func (a *app) aguiPluginTypes() map[string]PluginFactory {
	return map[string]PluginFactory{
		"agui": func(_ context.Context, c *project.Component, _ *project.Project) (core.BreadPlugin, error) {
			var o struct {
				agui.Options
				Heartbeat duration `json:"heartbeat"`
			}
			if err := decode(c, &o); err != nil {
				return nil, err
			}
			o.Options.Heartbeat = time.Duration(o.Heartbeat)
			pl, err := agui.New(o.Options)
			if err != nil {
				return nil, located(c, err)
			}
			return pl, nil
		},
	}
}
