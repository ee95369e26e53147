package cli

import (
	"context"
	"io"
	"log/slog"

	"github.com/breadai/bread/cli/project"
	"github.com/breadai/bread/core"
)

// Options extend and redirect the CLI. Every field is optional.
type Options struct {
	// Context bounds the command: cancelling it stops a server (`start`,
	// `dev`) or a run as SIGINT would (default context.Background()).
	Context context.Context
	// Args are the arguments after the program name (default os.Args[1:]).
	Args []string
	// Stdin, Stdout and Stderr default to the process's.
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	// LookupEnv reads the environment (default os.LookupEnv).
	LookupEnv func(string) (string, bool)
	// Logger receives server and runtime logs (default: text on Stderr).
	Logger *slog.Logger

	// Agents are compiled agents added to the project's.
	Agents []*core.Agent
	// Tools adds compiled tools to agents by id; the key "*" adds to every
	// agent.
	Tools map[string][]core.Tool
	// Tasks are compiled tasks added to the project's.
	Tasks []*core.Task
	// Hooks are global hooks (engine.Config.Hooks).
	Hooks core.Hooks
	// Plugins are always installed, before those bread.yaml names.
	Plugins []core.BreadPlugin
	// Providers are added to (and override) the providers bread.yaml
	// configures.
	Providers core.ProviderRegistry
	// Decisions are added to those bread.yaml configures.
	Decisions map[string]core.Decider
	// OutputFormats are custom output formats agent.yaml files can name.
	OutputFormats map[string]func(text string) (any, error)
	// Authorize decides, when auth is on, whether a caller may perform a
	// route's action; it replaces bread.yaml's server.auth.allow list.
	Authorize core.AuthorizeFunc

	// Component factories for bread.yaml types, added to the built-in ones.
	Stores map[string]StoreFactory
	// Buses build bread.yaml's bus: types (the built-in ones are inprocess
	// and redis).
	Buses map[string]BusFactory
	// PluginTypes build plugins bread.yaml names under plugins:.
	PluginTypes map[string]PluginFactory
}

// StoreFactory builds a store from its bread.yaml component.
type StoreFactory func(ctx context.Context, c *project.Component, p *project.Project) (core.BreadStore, error)

// BusFactory builds a replica bus from its bread.yaml component. The engine
// starts and closes the bus (core.Starter, io.Closer); a bus that is a
// core.Subscriber feeds the passive run streams.
type BusFactory func(ctx context.Context, c *project.Component, p *project.Project) (core.BreadBus, error)

// PluginFactory builds a plugin from its bread.yaml component.
type PluginFactory func(ctx context.Context, c *project.Component, p *project.Project) (core.BreadPlugin, error)
