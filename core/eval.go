package core

// EvalResult is one eval case's outcome: what `bread eval` prints and
// POST /agents/{id}/evals answers. The project loader produces it; the
// server only relays it, so it lives here, where both can name it.
type EvalResult struct {
	// Suite is the eval file, relative to the project.
	Suite string `json:"suite"`
	// Type tags the suite: functional, prompt-injection, jailbreak or
	// data-exfiltration.
	Type     string   `json:"type"`
	Case     string   `json:"case"`
	Passed   bool     `json:"passed"`
	Problems []string `json:"problems,omitempty"`
	Output   any      `json:"output,omitempty"`
	// DurationMs is how long the case ran, in milliseconds.
	DurationMs int64 `json:"durationMs"`
}
