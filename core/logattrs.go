package core

// RunLogAttrs are the log/slog attributes every line about a run carries,
// keyed the way operators grep for them: run_id, session_id, agent_id. An
// id that is not known where the line is written is logged empty, so every
// line about a run has the same three keys.
func RunLogAttrs(runID, sessionID, agentID string) []any {
	return []any{"run_id", runID, "session_id", sessionID, "agent_id", agentID}
}
