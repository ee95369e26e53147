package decisions

import (
	"context"
	"encoding/json"
	"slices"
	"strings"

	"github.com/breadai/bread/core"
)

// ModelOptions tune a ModelDecider.
type ModelOptions struct {
	// System replaces the default instructions.
	System string
	// Settings are the sampling settings; a nil Temperature is 0, since a
	// decision should be repeatable.
	Settings core.ModelSettings
	// ProviderOptions pass through to the model.
	ProviderOptions map[string]any
}

// ModelDecider decides with any language model. The allowed options become
// a JSON Schema enum sent as the structured-output schema, so a provider
// with native structured output cannot even express another answer; the
// reply is still checked, and an answer outside the options gets one
// corrective retry before DECISION_INVALID.
type ModelDecider struct {
	model core.LanguageModel
	opts  ModelOptions
}

// NewModelDecider returns a decider over model.
func NewModelDecider(model core.LanguageModel, opts ModelOptions) *ModelDecider {
	if opts.Settings.Temperature == nil {
		zero := 0.0
		opts.Settings.Temperature = &zero
	}
	return &ModelDecider{model: model, opts: opts}
}

const defaultSystem = "You are a fast, careful classifier. Pick exactly one of the allowed options for the question. " +
	"Answer only with a JSON object: {\"choice\": <one allowed option, verbatim>, \"confidence\": <0..1>, \"reason\": <one short sentence>}."

// Decide implements Decider.
func (d *ModelDecider) Decide(ctx context.Context, q Question) (Decision, error) {
	if err := Validate(q); err != nil {
		return Decision{}, err
	}
	schema, err := choiceSchema(q.Options)
	if err != nil {
		return Decision{}, err
	}
	user, err := questionText(q)
	if err != nil {
		return Decision{}, err
	}
	system := d.opts.System
	if system == "" {
		system = defaultSystem
	}
	req := core.ModelRequest{
		System:          system,
		Messages:        []core.Message{{Role: core.RoleUser, Parts: []core.Part{core.TextPart(user)}}},
		Output:          &core.OutputSpec{Name: "decision", Description: "The chosen option", Schema: schema},
		Settings:        d.opts.Settings,
		ProviderOptions: d.opts.ProviderOptions,
	}
	const attempts = 2 // the answer, and one bounded retry
	var last string
	for attempt := 0; attempt < attempts; attempt++ {
		text, err := collectText(ctx, d.model, req)
		if err != nil {
			return Decision{}, err
		}
		dec, ok := parseDecision(text, q.Options)
		if ok {
			return dec, nil
		}
		last = text
		req.Messages = append(req.Messages,
			core.Message{Role: core.RoleAssistant, Parts: []core.Part{core.TextPart(text)}},
			core.Message{Role: core.RoleUser, Parts: []core.Part{core.TextPart("That answer is not valid. Reply with the JSON object only, and \"choice\" must be exactly one of: " + strings.Join(q.Options, ", "))}},
		)
	}
	be := invalidChoice(truncate(last, 200), q.Options)
	be.Message = "the model did not pick an allowed option after a retry: " + be.Message
	return Decision{}, be
}

// choiceSchema is the structured-output schema: choice is an enum of the
// options.
func choiceSchema(options []string) (json.RawMessage, error) {
	return json.Marshal(map[string]any{
		"type": "object",
		"properties": map[string]any{
			"choice":     map[string]any{"type": "string", "enum": options},
			"confidence": map[string]any{"type": "number", "minimum": 0, "maximum": 1},
			"reason":     map[string]any{"type": "string"},
		},
		"required":             []string{"choice"},
		"additionalProperties": false,
	})
}

func questionText(q Question) (string, error) {
	var b strings.Builder
	b.WriteString(q.Prompt)
	b.WriteString("\n\nAllowed options:\n")
	for _, o := range q.Options {
		b.WriteString("- ")
		b.WriteString(o)
		b.WriteByte('\n')
	}
	if q.Input != nil {
		in, err := json.Marshal(q.Input)
		if err != nil {
			return "", &core.BreadError{Code: core.CodeValidationError, Message: "the decision input is not JSON-encodable: " + err.Error(), Cause: err}
		}
		b.WriteString("\nInput:\n")
		b.Write(in)
	}
	return b.String(), nil
}

// collectText runs the model and returns its text.
func collectText(ctx context.Context, m core.LanguageModel, req core.ModelRequest) (string, error) {
	var b strings.Builder
	for ev, err := range m.Stream(ctx, req) {
		if err != nil {
			return "", err
		}
		if ev.Type == core.EventTextDelta {
			b.WriteString(ev.Delta)
		}
	}
	return b.String(), nil
}

// parseDecision reads the model's JSON (tolerating a code fence or prose
// around it) and checks the choice.
func parseDecision(text string, options []string) (Decision, bool) {
	s := strings.TrimSpace(text)
	if i, j := strings.IndexByte(s, '{'), strings.LastIndexByte(s, '}'); i >= 0 && j > i {
		s = s[i : j+1]
	}
	var raw struct {
		Choice     string   `json:"choice"`
		Confidence *float64 `json:"confidence"`
		Reason     string   `json:"reason"`
	}
	if err := json.Unmarshal([]byte(s), &raw); err != nil {
		// A model without structured output may answer with the bare
		// option.
		bare := strings.Trim(strings.TrimSpace(text), "\"'`. \n")
		if slices.Contains(options, bare) {
			return Decision{Choice: bare}, true
		}
		return Decision{}, false
	}
	if !slices.Contains(options, raw.Choice) {
		return Decision{}, false
	}
	d := Decision{Choice: raw.Choice, Reason: raw.Reason}
	if raw.Confidence != nil {
		d.Confidence = min(max(*raw.Confidence, 0), 1)
	}
	return d, true
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}
