package engine

import "github.com/breadai/bread/core"

// runAttrs are the log attributes every line about a run carries, spelled
// as operators grep for them (core.RunLogAttrs, which the transports use
// too).
func runAttrs(runID, agentID, sessionID string) []any {
	return core.RunLogAttrs(runID, sessionID, agentID)
}
