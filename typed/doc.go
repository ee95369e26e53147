// Package typed builds bread agents, tools and tasks from Go types: the JSON
// Schemas derive from the types (invopop/jsonschema) and values are decoded
// into them and checked against their validator/v10 `validate` tags before
// anything runs.
//
// Use it when you define agents in Go code. Agents loaded from files fill
// core.Agent and core.Tool directly with JSON Schemas and need none of this.
package typed
