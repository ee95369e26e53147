package core

// SupervisorConfig turns an agent into a supervisor: its model can delegate
// work to a roster of sub-agents through the core_delegate tool, reading each
// output back as the tool result. Several calls in one turn run in parallel.
type SupervisorConfig struct {
	// Max caps delegations in flight at once (0: no cap).
	Max    int        `json:"max,omitempty"`
	Agents []SubAgent `json:"agents"`
}

// SubAgent is one member of a supervisor's roster.
type SubAgent struct {
	AgentID string `json:"agentId"`
	// Visibility says how much of the delegated run's stream the client
	// sees; the supervisor always gets the output.
	Visibility Visibility `json:"visibility,omitempty"`
	// Max caps delegations in flight to this sub-agent (0: no cap).
	Max int `json:"max,omitempty"`
}

// Visibility of a delegated run's crumbs.
type Visibility string

// The visibilities. human:required and human:resumed always surface.
const (
	// Passthrough forwards every crumb (the default).
	Passthrough Visibility = "passthrough"
	// Mediate forwards only subagent:run:start and subagent:run:end.
	Mediate Visibility = "mediate"
	// Hidden forwards nothing.
	Hidden Visibility = "hidden"
)
