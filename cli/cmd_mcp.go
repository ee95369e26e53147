package cli

import (
	"context"
	"errors"
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
//
// With --watch, a change to the project reloads it as bread dev does: the
// client's session stays, the reloaded project's tools, prompts and
// resources replace the old ones, and the client is sent list_changed.
func cmdMCP(ctx context.Context, a *app, args []string) int {
	fs := flag.NewFlagSet("mcp", flag.ContinueOnError)
	watching := fs.Bool("watch", false, "reload the project when its files change")
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
	defer func() { _ = inst.Stop(context.WithoutCancel(ctx)) }()
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
	if !*watching {
		if err := srv.ServeStdio(ctx, a.stdin, a.stdout); err != nil {
			return a.fail(err)
		}
		return ExitOK
	}
	sctx, stop := context.WithCancel(ctx)
	defer stop()
	served := make(chan error, 1)
	go func() { served <- srv.ServeStdio(sctx, a.stdin, a.stdout) }()
	changes, stopWatch, err := watch(sctx, a.project.Dir, a.log)
	if err != nil {
		a.log.Warn("bread mcp: file watching is off", "error", err)
	}
	defer stopWatch()
	for {
		select {
		case err := <-served:
			if err != nil {
				return a.fail(err)
			}
			return ExitOK
		case <-changes:
			next, err := a.reloadMCP(ctx)
			if err != nil {
				a.log.Warn("bread mcp: reload failed, still serving the previous version", "error", err)
				continue
			}
			// The previous instance's calls end with it: a reload is
			// a development tool's, as in bread dev.
			_ = inst.Stop(context.WithoutCancel(ctx))
			inst = next
			a.log.Info("bread mcp: reloaded")
		}
	}
}

// reloadMCP loads the project again and starts it, its mcpserver plugin
// serving the endpoint the client is connected to.
func (a *app) reloadMCP(ctx context.Context) (*engine.Instance, error) {
	if err := a.load(); err != nil {
		return nil, err
	}
	if problems, _ := a.checkProject(); len(problems) > 0 {
		return nil, errors.Join(problems...)
	}
	inst, _, err := a.started(ctx, modeTerminal)
	if err != nil {
		return nil, err
	}
	if err := activateMCP(inst); err != nil {
		_ = inst.Stop(context.WithoutCancel(ctx))
		return nil, err
	}
	return inst, nil
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
			o.Endpoint = a.mcpEndpoint(o)
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

// mcpEndpoint is the endpoint an mcpserver plugin of these options serves:
// the same one for every project this process loads (bread dev's and
// bread mcp --watch's reloads), so MCP clients keep their sessions across
// a reload and are sent list_changed. Options that build the endpoint (its
// path, transport, name, version, statelessness) name it: a reload that
// changes one gets a new endpoint, whose clients connect anew.
func (a *app) mcpEndpoint(o mcpserver.Options) *mcpserver.Endpoint {
	key := fmt.Sprintf("%q %q %q %q %t", o.Path, o.Transport, o.Name, o.Version, o.Stateless)
	a.mcpMu.Lock()
	defer a.mcpMu.Unlock()
	if a.mcpEndpoints == nil {
		a.mcpEndpoints = map[string]*mcpserver.Endpoint{}
	}
	ep, ok := a.mcpEndpoints[key]
	if !ok {
		ep = mcpserver.NewEndpoint()
		a.mcpEndpoints[key] = ep
	}
	return ep
}

// activateMCP hands the MCP endpoints to a reloaded instance's mcpserver
// plugins, once that instance has started: connected clients are sent
// list_changed for what the reload changed.
func activateMCP(inst *engine.Instance) error {
	for _, p := range inst.Plugins() {
		if s, ok := p.(*mcpserver.Plugin); ok {
			if err := s.Activate(); err != nil {
				return err
			}
		}
	}
	return nil
}
