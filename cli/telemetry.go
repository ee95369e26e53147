package cli

import (
	"context"
	"maps"
	"net/http"

	"github.com/breadai/bread/cli/project"
	"github.com/breadai/bread/core"
	"github.com/breadai/bread/extensions/otel"
)

// telemetry is the OpenTelemetry plugin bread.yaml configures (plugins:
// - type: otel), built once per loaded project: the plugin itself, the
// providers wrapped for model spans, and the HTTP client remote agents use
// so remote servers continue the trace.
type telemetry struct {
	project *project.Project
	plugin  *otel.Plugin
	err     error
}

// pluginTypes are the plugin types bread.yaml may name: the built-in otel,
// mcpclient, mcpserver, agui and a2a, then Options.PluginTypes (which may replace
// them).
func (a *app) pluginTypes() map[string]PluginFactory {
	types := map[string]PluginFactory{
		"otel": func(context.Context, *project.Component, *project.Project) (core.BreadPlugin, error) {
			p, err := a.otelPlugin()
			if err != nil {
				return nil, err
			}
			return p, nil
		},
	}
	maps.Copy(types, a.mcpPluginTypes())
	maps.Copy(types, a.aguiPluginTypes())
	maps.Copy(types, a.a2aPluginTypes())
	maps.Copy(types, a.opts.PluginTypes)
	return types
}

// otelPlugin builds (once per project) the otel plugin of bread.yaml's first
// `type: otel` entry; nil when there is none or Options.PluginTypes
// replaces the type.
func (a *app) otelPlugin() (*otel.Plugin, error) {
	if _, replaced := a.opts.PluginTypes["otel"]; replaced {
		return nil, nil
	}
	if a.tel != nil && a.tel.project == a.project {
		return a.tel.plugin, a.tel.err
	}
	a.tel = &telemetry{project: a.project}
	for _, c := range a.project.Config.Plugins {
		if c.Type != "otel" {
			continue
		}
		var o otel.Options
		if err := decode(c, &o); err != nil {
			a.tel.err = err
			break
		}
		o.LookupEnv = a.lookup
		p, err := otel.New(context.Background(), o)
		if err != nil {
			a.tel.err = located(c, err)
			break
		}
		a.tel.plugin = p
		break
	}
	return a.tel.plugin, a.tel.err
}

// remoteHTTPClient is the client remote agents send with: traced and
// carrying W3C trace context when the otel plugin is configured, else nil
// (the transport's default).
func (a *app) remoteHTTPClient() *http.Client {
	if p, _ := a.otelPlugin(); p != nil {
		return p.HTTPClient()
	}
	return nil
}

// traceStore wraps the store so crumb log appends are timed, when the otel
// plugin is configured (the wrapper keeps every capability of the store).
func (a *app) traceStore(st core.BreadStore) core.BreadStore {
	if p, _ := a.otelPlugin(); p != nil {
		return p.WrapStore(st)
	}
	return st
}

// traceProviders wraps the model providers so every model call is a span,
// when the otel plugin is configured.
func (a *app) traceProviders(reg core.ProviderRegistry) core.ProviderRegistry {
	if p, _ := a.otelPlugin(); p != nil {
		return p.WrapProviders(reg)
	}
	return reg
}
