package core

// RunOptions tune one run.
type RunOptions struct {
	// Session attaches the run to a session: an existing one by ID, or a new
	// one (with the ID, when given, and Tags).
	Session SessionOptions `json:"session,omitzero"`
	// Skill is a caller-driven skill for this run.
	Skill string `json:"skill,omitempty"`
	// Client is what the calling client adds to the run: context,
	// forwarded properties, its own tools and a state document (see
	// ClientInput).
	Client ClientInput `json:"client,omitzero"`
}

// SessionOptions selects or creates a run's session.
type SessionOptions struct {
	ID   string            `json:"id,omitempty"`
	Tags map[string]string `json:"tags,omitempty"`
}
