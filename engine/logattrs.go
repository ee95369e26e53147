package engine

// runAttrs are the log attributes every line about a run carries, spelled
// as operators grep for them.
func runAttrs(runID, agentID, sessionID string) []any {
	return []any{"run_id", runID, "agent_id", agentID, "session_id", sessionID}
}
