package engine

import (
	"fmt"

	"github.com/breadai/bread/core"
)

// pluginTool is a global tool a plugin contributed.
type pluginTool struct {
	plugin string
	tool   core.Tool
}

// pluginResolver contributes per-agent tools for a plugin.
type pluginResolver struct {
	plugin   string
	resolver core.AgentToolsResolver
}

// collectPlugin merges what one plugin contributes: hooks, global tools and
// a per-agent tool resolver.
func (in *Instance) collectPlugin(p core.BreadPlugin) error {
	if hp, ok := p.(core.HooksProvider); ok {
		in.pluginHooks = append(in.pluginHooks, hp.Hooks())
	}
	if tp, ok := p.(core.ToolsProvider); ok {
		for _, t := range tp.Tools() {
			if err := checkTool(&t); err != nil {
				return fmt.Errorf("bread: plugin %s: %w", p.Name(), err)
			}
			in.pluginTools = append(in.pluginTools, pluginTool{plugin: p.Name(), tool: t})
		}
	}
	if r, ok := p.(core.AgentToolsResolver); ok {
		in.toolResolvers = append(in.toolResolvers, pluginResolver{plugin: p.Name(), resolver: r})
	}
	if l, ok := p.(core.RunLeaser); ok {
		in.leasers = append(in.leasers, l)
	}
	return nil
}

// PluginTool is a global tool and the plugin that contributed it.
type PluginTool struct {
	Plugin string
	Tool   core.Tool
}

// PluginTools returns the global tools plugins contributed at Start.
func (in *Instance) PluginTools() []PluginTool {
	out := make([]PluginTool, len(in.pluginTools))
	for i, pt := range in.pluginTools {
		out[i] = PluginTool{Plugin: pt.plugin, Tool: pt.tool}
	}
	return out
}
