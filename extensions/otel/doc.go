// Package otel traces and measures bread runs with OpenTelemetry, for
// programs that send telemetry to a collector (or the console). It is a
// bread plugin: add it to engine.Config.Plugins (or `plugins: [{type: otel}]`
// in bread.yaml) and every run becomes a span with children for its model
// calls, tools, pipeline steps, delegations, loop iterations and tasks;
// metrics count runs and time models, tools and crumb log writes.
//
// Remote agents continue the trace: Plugin.Transport injects W3C trace
// context into outgoing requests and Plugin.Middleware extracts it on the
// receiving server. Nothing global is touched unless Options.SetGlobal asks.
package otel
