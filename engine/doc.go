// Package engine runs bread agents: the Instance that Start, Run, Resume,
// RunPipeline and Cancel go through, the per-run choke point that numbers,
// logs, listens to and publishes every crumb, the model loop and tool
// execution, human-in-the-loop checkpoints, pipelines, supervisors, loops,
// tasks and the built-in tool families.
//
// Use it to run agents from Go, or to build an ingress (the HTTP server, the
// CLI, your own). If you are writing an adapter (a store, a bus, a model
// provider, a plugin), you need only package core: ports receive a
// core.Runtime, never the Instance.
//
// Three packages beside it import only core and reach the Instance through
// a small interface each defines: worker (what a queued job means),
// schedule (the timetable of runs) and webhook (signed, guarded, retried
// deliveries, which protocols reuse).
package engine
