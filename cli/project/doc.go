// Package project loads a bread project from disk: bread.yaml and one
// folder per agent under agents/.
//
//	bread.yaml                 entrypoints, store, bus, streams, listeners, providers, pipelines, plugins, server
//	agents/<id>/agent.yaml     model, schemas, output format, steps, permissions, tasks, ...
//	agents/<id>/prompt.md      the system prompt
//	agents/<id>/tools/*.yaml   command, http and human tools
//	agents/<id>/skills/<skill>/SKILL.md, scripts/*.yaml, references/*.md
//	agents/<id>/evals/*.eval.yaml
//	tasks/<id>.yaml
//
// ${VAR} (and ${VAR:-default}) in any YAML file expands from the
// environment before parsing; $${ is a literal ${. Every configuration error
// is a *Error naming the file and line, wrapping a *core.BreadError with a
// stable code.
//
// The loader builds core types (core.Agent, core.Task, pipelines) and keeps
// the named components of bread.yaml (store, bus, listeners, providers,
// plugins, ...) as Components: turning a name into a constructor is the CLI's job, the
// one place that imports every adapter.
package project
