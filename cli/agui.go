package cli

import (
	"context"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/protocols/agui"
	"github.com/breadai/bread/server/project"
)

// aguiPluginTypes is the bread.yaml plugin type of protocols/agui: the
// AG-UI run route (POST /ag-ui/run) for one agent.
func (a *app) aguiPluginTypes() map[string]PluginFactory {
	return map[string]PluginFactory{
		"agui": func(_ context.Context, c *project.Component, _ *project.Project) (core.BreadPlugin, error) {
			var o agui.Options
			if err := decode(c, &o); err != nil {
				return nil, err
			}
			pl, err := agui.New(o)
			if err != nil {
				return nil, located(c, err)
			}
			return pl, nil
		},
	}
}
