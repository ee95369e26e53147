package core

// RunOptions tune one run.
type RunOptions struct {
	// Session attaches the run to a session: an existing one by ID, or a new
	// one (with the ID, when given, and Tags).
	Session SessionOptions `json:"session,omitzero"`
	// Skill is a caller-driven skill for this run.
	Skill string `json:"skill,omitempty"`
}

// SessionOptions selects or creates a run's session.
type SessionOptions struct {
	ID   string            `json:"id,omitempty"`
	Tags map[string]string `json:"tags,omitempty"`
}
