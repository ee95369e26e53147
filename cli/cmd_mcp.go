package cli

import (
	"context"
	"flag"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/breadai/bread/cli/project"
	"github.com/breadai/bread/core"
	"github.com/breadai/bread/engine"
	"github.com/breadai/bread/protocols/mcpclient"
	"github.com/breadai/bread/protocols/mcpserver"
)

// cmdMCP runs the project as an MCP server over stdio, for a desktop client
// that launches it: the project's mcpserver plugin (bread.yaml `plugins:`)
// says what is exposed. Stdout carries the protocol; logs go to stderr.
func cmdMCP(ctx context.Context, a *app, args []string) int {
	fs := flag.NewFlagSet("mcp", flag.ContinueOnError)
	pos, err := a.parse(fs, args)
	if err != nil {
		return a.usageError("mcp", err)
	}
	if len(pos) > 0 {
		return a.usageError("mcp", fmt.Errorf("mcp takes no arguments"))
	}
	if err := a.load(); err != nil {
		return a.fail(err)
	}
	inst, _, err := a.started(ctx, modeTerminal)
	if err != nil {
		return a.fail(err)
	}
	defer inst.Stop(context.WithoutCancel(ctx))
	var srv *mcpserver.Plugin
	for _, p := range inst.Plugins() {
		if s, ok := p.(*mcpserver.Plugin); ok {
			srv = s
			break
		}
	}
	if srv == nil {
		return a.fail(&core.BreadError{Code: core.CodeInvalidConfig, Message: "bread mcp serves the project's mcpserver plugin, and bread.yaml has none: add `plugins: [{type: mcpserver, agents: [<agent>]}]`"})
	}
	if err := srv.ServeStdio(ctx, a.stdin, a.stdout); err != nil {
		return a.fail(err)
	}
	return ExitOK
}

// mcpPluginTypes are the bread.yaml plugin types of the MCP modules:
// mcpclient (agents call MCP servers) and mcpserver (agents served over
// MCP).
func (a *app) mcpPluginTypes() map[string]PluginFactory {
	return map[string]PluginFactory{
		"mcpclient": func(_ context.Context, c *project.Component, p *project.Project) (core.BreadPlugin, error) {
			var o struct {
				Servers        []mcpclient.Server `json:"servers"`
				ConnectTimeout duration           `json:"connectTimeout"`
				Backoff        duration           `json:"backoff"`
				MaxBackoff     duration           `json:"maxBackoff"`
				// ElicitationTimeout bounds a server's open question.
				ElicitationTimeout duration `json:"elicitationTimeout"`
			}
			if err := decode(c, &o); err != nil {
				return nil, err
			}
			for i := range o.Servers {
				s := &o.Servers[i]
				// A stdio server starts in the project directory, and a
				// command written as a relative path is the project's.
				if s.Command != "" {
					if s.Dir == "" {
						s.Dir = p.Dir
					} else {
						s.Dir = projectPath(p, s.Dir)
					}
					if strings.HasPrefix(s.Command, "./") || strings.HasPrefix(s.Command, "../") {
						s.Command = filepath.Join(p.Dir, s.Command)
					}
				}
			}
			pl, err := mcpclient.New(mcpclient.Options{Servers: o.Servers, ConnectTimeout: time.Duration(o.ConnectTimeout), Backoff: time.Duration(o.Backoff), MaxBackoff: time.Duration(o.MaxBackoff), ElicitationTimeout: time.Duration(o.ElicitationTimeout)})
			if err != nil {
				return nil, located(c, err)
			}
			return pl, nil
		},
		"mcpserver": func(_ context.Context, c *project.Component, _ *project.Project) (core.BreadPlugin, error) {
			var o mcpserver.Options
			if err := decode(c, &o); err != nil {
				return nil, err
			}
			o.RunTask = runTask
			pl, err := mcpserver.New(o)
			if err != nil {
				return nil, located(c, err)
			}
			return pl, nil
		},
	}
}

// runTask runs a task standalone for the mcpserver plugin.
func runTask(ctx context.Context, rt core.Runtime, task string, args any) (any, error) {
	in, ok := rt.(*engine.Instance)
	if !ok {
		return nil, core.Errorf(core.CodeInvalidConfig, "tasks run on an engine.Instance")
	}
	return in.RunTask(ctx, task, args, engine.TaskOptions{AgentID: "mcp"})
}
