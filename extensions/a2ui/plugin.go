package a2ui

import (
	"context"
	"sync"

	"github.com/breadai/bread/core"
)

// PluginName is the plugin's name.
const PluginName = "a2ui"

// SpecHandler receives each spec with the crumb it came from. It runs on
// the run's goroutine (a core.Listener): it must not block.
type SpecHandler func(ctx context.Context, spec Spec, c core.Crumb)

// Plugin hands the specs of every crumb of an engine to OnSpec.
type Plugin struct {
	onSpec SpecHandler
	mu     sync.Mutex
	remove func()
}

var (
	_ core.PluginIniter = (*Plugin)(nil)
	_ core.PluginCloser = (*Plugin)(nil)
)

// New returns the plugin; onSpec is required.
func New(onSpec SpecHandler) (*Plugin, error) {
	if onSpec == nil {
		return nil, core.Errorf(core.CodeInvalidConfig, "a2ui: a spec handler is required")
	}
	return &Plugin{onSpec: onSpec}, nil
}

// Name implements core.BreadPlugin.
func (p *Plugin) Name() string { return PluginName }

// Init implements core.PluginIniter: it listens to every crumb.
func (p *Plugin) Init(_ context.Context, rt core.Runtime) error {
	remove := rt.On(func(ctx context.Context, c core.Crumb) {
		for _, s := range Map(c) {
			p.onSpec(ctx, s, c)
		}
	})
	p.mu.Lock()
	p.remove = remove
	p.mu.Unlock()
	return nil
}

// Close implements core.PluginCloser: it stops listening.
func (p *Plugin) Close(context.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.remove != nil {
		p.remove()
		p.remove = nil
	}
	return nil
}
